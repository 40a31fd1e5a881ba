// Followed pod logs (GET pods/<name>/log?follow=true): a 200 with chunked transfer encoding,
// the log so far, then what the container appends, polled every 200 ms, until its run ends
// (log_stream::poll says done) or the client goes away.
#include "k8s/apiserver/server_impl.hpp"

namespace kozmo::apiserver {
namespace {

constexpr std::chrono::milliseconds log_poll_interval{200};

} // namespace

void connection::start_log(std::shared_ptr<log_stream> ls) {
  log_ = std::move(ls);
  stream_.tcp().expires_never();
  write_chunked_head("text/plain", [self = shared_from_this()] { self->write_log_chunk(self->log_->take_initial(), false); });
  watch_for_disconnect();
}

void connection::write_log_chunk(std::string data, bool last) {
  if (closed_)
    return;
  auto next = [self = shared_from_this(), last](beast::error_code ec, std::size_t) {
    if (ec || self->closed_) {
      self->close_now();
      return;
    }
    if (!last) {
      self->poll_log();
      return;
    }
    net::async_write(self->stream_, http::make_chunk_last(),
                     [self](beast::error_code, std::size_t) { self->close_now(); });
  };
  if (data.empty()) {
    next({}, 0);
    return;
  }
  log_chunk_ = std::move(data);
  net::async_write(stream_, http::make_chunk(net::buffer(log_chunk_)), std::move(next));
}

void connection::poll_log() {
  log_timer_.expires_after(log_poll_interval);
  log_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || self->closed_)
      return;
    auto c = self->log_->poll(*self->state_.st);
    self->write_log_chunk(std::move(c.data), c.done);
  });
}

} // namespace kozmo::apiserver
