// The watch stream: one dedicated connection, the chunked body cut into lines, each line
// handed over undecoded. Ends exactly once through on_closed; never reconnects.
#include "k8s/client/detail/client_impl.hpp"

#include "k8s/client/line_splitter.hpp"
#include "k8s/client/paths.hpp"
#include "k8s/client/status_error.hpp"

#include <boost/asio/co_spawn.hpp>

#include <spdlog/spdlog.h>

namespace kozmo::client {
namespace detail {
namespace {

// A non-200 answer's body is kept for the error message, up to this size.
constexpr std::size_t max_error_body = 64 * 1024;

class watch_sink final : public body_sink {
public:
  watch_sink(watch_state& ws, std::optional<deadline>& head_deadline)
      : ws_(ws), head_deadline_(head_deadline) {}

  void on_head(int s, std::string_view reason, std::map<std::string, std::string>&&) override {
    status = s;
    reason_phrase = std::string(reason);
    // The answer started: from now on the stream may stay silent for as long as it likes.
    head_deadline_.reset();
  }

  bool on_body(std::string_view data) override {
    if (status != 200) {
      if (error_body.size() < max_error_body) error_body.append(data.substr(0, max_error_body));
      return true;
    }
    return splitter.feed(data, [this](std::string_view line) { return deliver(line); });
  }

  // Hands one line over unless the watch was cancelled; a throwing handler ends the watch.
  bool deliver(std::string_view line) {
    if (ws_.cancelled || !ws_.on_line) return false;
    try {
      ws_.on_line(line);
    } catch (const std::exception& ex) {
      handler_error = std::string("watch event handler threw: ") + ex.what();
      return false;
    } catch (...) {
      handler_error = "watch event handler threw";
      return false;
    }
    return true;
  }

  int status = 0;
  std::string reason_phrase;
  std::string error_body;
  line_splitter splitter;
  std::optional<std::string> handler_error;

private:
  watch_state& ws_;
  std::optional<deadline>& head_deadline_;
};

} // namespace

net::awaitable<void> client_impl::run_watch(std::shared_ptr<watch_state> ws, std::string path) {
  if (config_error) {
    ws->finish(*config_error);
    co_return;
  }
  if (ws->cancelled || shutting_down) {
    ws->finish(ok);
    co_return;
  }
  attempt_failure::kind k;
  auto opened = co_await connect(ioc, *ep, cfg, tls_ctx.get(), cfg.request_timeout, aborts, k);
  if (!opened) {
    if (ws->cancelled || shutting_down)
      ws->finish(ok);
    else
      ws->finish(std::move(opened.err()));
    co_return;
  }
  auto conn = std::move(*opened);
  ws->conn = conn;
  std::weak_ptr<connection> weak = conn;
  auto entry = aborts.add([weak] {
    if (auto c = weak.lock()) {
      c->aborted = true;
      c->close();
    }
  });
  // A cancel posted before the connection existed found nothing to close.
  if (ws->cancelled || aborts.closed()) {
    conn->close();
    ws->finish(ok);
    co_return;
  }

  std::string raw = serialize_request(*ep, "GET", path, "", "", "application/json",
                                      cfg.user_agent, current_token());
  std::optional<deadline> head_deadline;
  head_deadline.emplace(ioc, conn, cfg.request_timeout);
  watch_sink sink(*ws, head_deadline);
  auto x = co_await exchange(*conn, raw, sink, true);
  head_deadline.reset();
  conn->close();

  if (sink.handler_error) {
    ws->finish(error{*sink.handler_error});
    co_return;
  }
  if (ws->cancelled || conn->aborted) {
    ws->finish(ok);
    co_return;
  }
  if (sink.status != 0 && sink.status != 200) {
    ws->finish(error_from_response(sink.status, sink.reason_phrase, sink.error_body));
    co_return;
  }
  if (x.complete) {
    // A server may end the last event without a newline.
    sink.splitter.finish([&](std::string_view line) { return sink.deliver(line); });
    if (sink.handler_error)
      ws->finish(error{*sink.handler_error});
    else
      ws->finish(ok);
    co_return;
  }
  std::string msg = "watch " + url(path) + ": ";
  if (conn->timed_out)
    msg += "no answer within " + std::to_string(cfg.request_timeout.count()) + " ms";
  else
    msg += describe(x.ec);
  ws->finish(error{std::move(msg)});
}

} // namespace detail

void watch_handle::cancel() {
  if (!state_) return;
  if (state_->cancelled.exchange(true)) return;
  std::lock_guard lk(state_->mu);
  if (!state_->owner) return;
  state_->owner->post([s = state_] {
    if (s->conn) {
      s->conn->aborted = true;
      s->conn->close();
    }
  });
}

bool watch_handle::closed() const { return state_ && state_->closed; }

watch_handle client::watch(const resource_ref& ref, const watch_options& opts,
                           std::function<void(std::string_view line)> on_event_line,
                           std::function<void(expected<ok_t>)> on_closed) {
  auto ws = std::make_shared<detail::watch_state>();
  ws->on_line = std::move(on_event_line);
  ws->on_closed = std::move(on_closed);

  watch_options effective = opts;
  if (!ref.name.empty()) {
    std::string by_name = "metadata.name=" + ref.name;
    effective.field_selector =
        effective.field_selector.empty() ? by_name : effective.field_selector + "," + by_name;
  }
  std::string path = collection_path(ref) + watch_query(effective);
  {
    std::lock_guard lk(impl_->watches_mu);
    std::erase_if(impl_->watches, [](const std::weak_ptr<detail::watch_state>& w) {
      auto s = w.lock();
      return !s || s->closed;
    });
    if (!impl_->shutting_down) {
      ws->owner = impl_.get();
      impl_->watches.push_back(ws);
    }
  }
  boost::asio::co_spawn(impl_->ioc, impl_->run_watch(ws, std::move(path)),
                        [](std::exception_ptr e) {
                          if (!e) return;
                          try {
                            std::rethrow_exception(e);
                          } catch (const std::exception& ex) {
                            spdlog::error("k8s client: watch: {}", ex.what());
                          } catch (...) {
                          }
                        });
  return watch_handle(ws);
}

} // namespace kozmo::client
