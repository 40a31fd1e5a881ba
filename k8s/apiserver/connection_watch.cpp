// Watch streaming: a 200 with chunked transfer encoding, one JSON event per line, BOOKMARKs
// on a timer, a clean end at timeoutSeconds (shared/reference/k8s-wire.md §7).
//
// Store callbacks run on the writer's thread under the store's lock: they only post the event
// to this connection's strand, holding a weak reference (the connection may be gone).
#include "k8s/apiserver/server_impl.hpp"

namespace kozmo::apiserver {
namespace {

// A client that reads slower than events arrive is cut off beyond this backlog; it will relist.
constexpr std::size_t max_backlog_bytes = 256 * 1024 * 1024;

} // namespace

void connection::start_watch(std::shared_ptr<watch_stream> ws) {
  watch_ = std::move(ws);
  stream_.tcp().expires_never();
  drop_generation_ = state_.faults.drop_after().second;

  if (state_.faults.expire_resumes() && watch_->params().from_rv) {
    std::uint64_t rv = *watch_->params().from_rv;
    enqueue(watch_stream::error_line(api_error{410, "Expired",
                                               "too old resource version: " + std::to_string(rv) + " (" +
                                                   std::to_string(state_.st->current_rv()) + ")",
                                               nullptr}));
    finishing_ = true;
  } else {
    auto ex = stream_.get_executor();
    auto sub = watch_->subscribe(*state_.st, [weak = weak_from_this(), ex](const change_event& ev) {
      net::post(ex, [weak, ev] {
        if (auto self = weak.lock())
          self->on_event(ev);
      });
    });
    if (!sub) {
      if (sub.err().code != 410) {
        write_response(status_response(api_error{sub.err().code ? sub.err().code : 500, sub.err().reason,
                                                 sub.err().message, nullptr}),
                       false);
        return;
      }
      // Too old: kube-apiserver answers 200 and one ERROR event, then ends the stream.
      enqueue(watch_stream::error_line(api_error{410, "Expired", sub.err().message, nullptr}));
      finishing_ = true;
    } else {
      watch_id_ = *sub;
    }
  }

  write_chunked_head("application/json", [self = shared_from_this()] {
    self->header_sent_ = true;
    self->flush();
  });
  if (!finishing_) {
    arm_bookmarks();
    arm_timeout();
  }
  watch_for_disconnect();
}

void connection::write_chunked_head(const char* content_type, std::function<void()> then) {
  watch_res_.emplace(http::status::ok, 11);
  watch_res_->set(http::field::cache_control, "no-cache, private");
  watch_res_->set(http::field::content_type, content_type);
  watch_res_->chunked(true);
  watch_sr_.emplace(*watch_res_);
  http::async_write_header(stream_, *watch_sr_,
                           [self = shared_from_this(), then = std::move(then)](beast::error_code ec, std::size_t) {
                             if (ec) {
                               self->close_now();
                               return;
                             }
                             then();
                           });
}

void connection::on_event(const change_event& ev) {
  if (closed_ || finishing_ || !watch_)
    return;
  enqueue(watch_->encode(ev));
  if (ev.type == event_type::bookmark)
    return;
  auto [threshold, generation] = state_.faults.drop_after();
  if (generation != drop_generation_) {
    drop_generation_ = generation;
    drop_count_ = 0;
  }
  if (threshold > 0 && ++drop_count_ >= threshold) {
    // Fault injection: the connection breaks right after this event reaches the client.
    unsubscribe();
    drop_when_flushed_ = true;
  }
}

void connection::enqueue(std::string line) {
  if (line.empty())
    return;
  queued_bytes_ += line.size();
  queue_.push_back(std::move(line));
  if (queued_bytes_ > max_backlog_bytes) {
    abort_watch();
    return;
  }
  flush();
}

void connection::flush() {
  if (!header_sent_ || writing_now_ || closed_)
    return;
  if (!queue_.empty()) {
    writing_.clear();
    for (auto& line : queue_)
      writing_ += line;
    queue_.clear();
    queued_bytes_ = 0;
    writing_now_ = true;
    net::async_write(stream_, http::make_chunk(net::buffer(writing_)),
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       self->writing_now_ = false;
                       if (ec) {
                         self->close_now();
                         return;
                       }
                       self->flush();
                     });
    return;
  }
  if (drop_when_flushed_) {
    close_now();
    return;
  }
  if (finishing_) {
    writing_now_ = true;
    net::async_write(stream_, http::make_chunk_last(), [self = shared_from_this()](beast::error_code, std::size_t) {
      self->writing_now_ = false;
      self->close_now();
    });
  }
}

void connection::finish_watch() {
  if (finishing_ || closed_)
    return;
  unsubscribe();
  finishing_ = true;
  bookmark_timer_.cancel();
  pre_timeout_timer_.cancel();
  timeout_timer_.cancel();
  flush();
}

void connection::abort_watch() { close_now(); }

void connection::drop_watch() {
  net::post(stream_.get_executor(), [weak = weak_from_this()] {
    auto self = weak.lock();
    if (self && self->watch_)
      self->abort_watch();
  });
}

void connection::unsubscribe() {
  if (watch_id_) {
    state_.st->unwatch(*watch_id_);
    watch_id_.reset();
  }
}

void connection::arm_bookmarks() {
  if (!watch_->params().bookmarks)
    return;
  bookmark_timer_.expires_after(state_.opts.bookmark_interval);
  bookmark_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || self->closed_ || self->finishing_)
      return;
    self->enqueue(self->watch_->bookmark(self->state_.st->current_rv()));
    self->arm_bookmarks();
  });
}

void connection::arm_timeout() {
  std::int64_t timeout = watch_->params().timeout_seconds;
  if (timeout <= 0)
    return;
  // A last bookmark shortly before the end lets the client resume without replaying
  // (kube-apiserver sends it about 2 s before closing).
  if (watch_->params().bookmarks && timeout > 2) {
    pre_timeout_timer_.expires_after(std::chrono::seconds(timeout - 2));
    pre_timeout_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec && !self->closed_ && !self->finishing_)
        self->enqueue(self->watch_->bookmark(self->state_.st->current_rv()));
    });
  }
  timeout_timer_.expires_after(std::chrono::seconds(timeout));
  timeout_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (!ec)
      self->finish_watch();
  });
}

void connection::watch_for_disconnect() {
  // Clients send nothing on a watch; a read that completes means they went away.
  stream_.async_read_some(net::buffer(discard_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (self->closed_)
      return;
    if (ec) {
      self->close_now();
      return;
    }
    self->watch_for_disconnect();
  });
}

} // namespace kozmo::apiserver
