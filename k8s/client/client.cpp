// The client's engine room: the io thread, the keep-alive pool, the rate limiter and the
// retry loop. Every coroutine here runs on the single io thread, so pool and limiter state
// need no locks.
#include "k8s/client/detail/client_impl.hpp"
#include "k8s/client/list_splitter.hpp"
#include "k8s/client/protobuf_list_splitter.hpp"
#include "k8s/protobuf_wire.hpp"

#include "k8s/client/status_error.hpp"
#include "k8s/client/client_metrics.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <future>
#include <optional>
#include <sstream>

namespace kozmo::client {
namespace detail {
namespace {

constexpr std::size_t max_idle_connections = 32;
constexpr auto token_reread_interval = std::chrono::seconds(60);

// Collects a whole response, or with a list_items_handler a 200 LIST answer's items in batches
// and the rest of it (JSON, or protobuf when the request accepted it and the server chose it).
class string_sink final : public body_sink {
public:
  explicit string_sink(const list_items_handler* items) : items_(items) {}

  void on_head(int s, std::string_view reason, std::map<std::string, std::string>&& h) override {
    status = s;
    reason_phrase = std::string(reason);
    headers = std::move(h);
    if (!items_ || status != 200)
      return;
    if (content_type_is("application/json")) {
      items_->restart();
      json_.emplace(items_->batch);
    } else if (content_type_is(k8s::protobuf::media_type)) {
      items_->restart();
      protobuf_.emplace(items_->batch);
    }
  }
  bool on_body(std::string_view data) override {
    if (json_)
      json_->feed(data);
    else if (protobuf_)
      protobuf_->feed(data);
    else
      body.append(data);
    return true;
  }
  // Once the answer is complete.
  void finish() {
    if (json_)
      body = json_->finish();
    else if (protobuf_)
      body = protobuf_->finish();
  }

  int status = 0;
  std::string reason_phrase;
  std::map<std::string, std::string> headers;
  std::string body;

private:
  bool content_type_is(std::string_view type) const {
    auto it = headers.find("content-type");
    return it != headers.end() && it->second.rfind(type, 0) == 0;
  }

  const list_items_handler* items_;
  std::optional<list_splitter> json_;
  std::optional<protobuf_list_splitter> protobuf_;
};

// Completion of a top-level coroutine: an exception (from a user callback) must not take the
// io thread down.
void log_exception(std::exception_ptr e) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    spdlog::error("k8s client: callback threw: {}", ex.what());
  } catch (...) {
    spdlog::error("k8s client: callback threw a non-standard exception");
  }
}

} // namespace

client_impl::client_impl(config c)
    : cfg(std::move(c)),
      work(net::make_work_guard(ioc)),
      limiter(cfg.qps, cfg.burst, std::chrono::steady_clock::now()),
      backoff{cfg.retry_backoff_base, cfg.retry_backoff_cap, cfg.max_retries},
      rng(std::random_device{}()),
      token(cfg.token) {
  auto parsed = parse_server(cfg.server);
  if (!parsed) {
    config_error = parsed.err();
  } else {
    ep = std::move(*parsed);
    if (ep->tls) {
      auto ctx = make_tls_context(cfg);
      if (ctx)
        tls_ctx = std::move(*ctx);
      else
        config_error = error{"tls for " + cfg.server + ": " + ctx.err().message};
    }
  }
  thread = std::thread([this] {
    for (;;) {
      try {
        ioc.run();
        return;
      } catch (const std::exception& ex) {
        spdlog::error("k8s client: io thread: {}", ex.what());
      }
    }
  });
  thread_id = thread.get_id();
}

client_impl::~client_impl() {
  {
    std::lock_guard lk(watches_mu);
    shutting_down = true;
    for (auto& weak : watches) {
      if (auto ws = weak.lock()) {
        std::lock_guard wl(ws->mu);
        ws->owner = nullptr;
      }
    }
  }
  net::post(ioc, [this] {
    for (auto& conn : idle) conn->close();
    idle.clear();
    idle_count = 0;
    aborts.abort_all();
  });
  work.reset();
  if (thread.joinable()) thread.join();
}

void client_impl::post(std::function<void()> fn) { net::post(ioc, std::move(fn)); }

void client_impl::start_request(request req, response_callback done) {
  net::co_spawn(ioc, run_request(std::move(req), std::move(done)), log_exception);
}

net::awaitable<void> client_impl::run_request(request req, response_callback done) {
  auto result = co_await perform(req);
  if (done) done(std::move(result));
}

const std::string& client_impl::current_token() {
  if (cfg.token_file.empty()) return token;
  auto now = std::chrono::steady_clock::now();
  if (!token.empty() && now - token_read_at < token_reread_interval) return token;
  token_read_at = now;
  std::ifstream in(cfg.token_file, std::ios::binary);
  if (!in) {
    spdlog::warn("k8s client: cannot read token file {}; keeping the previous token", cfg.token_file);
    return token;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string t = ss.str();
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  if (!t.empty()) token = std::move(t);
  return token;
}

std::shared_ptr<connection> client_impl::take_idle() {
  while (!idle.empty()) {
    auto conn = std::move(idle.back());
    idle.pop_back();
    idle_count = idle.size();
    if (!conn->peer_closed()) return conn;
    conn->close();
  }
  return nullptr;
}

void client_impl::put_idle(std::shared_ptr<connection> conn) {
  // The pool keeps every connection the cap allows, so a steady load never reconnects.
  auto keep = std::max<std::size_t>(max_idle_connections, static_cast<std::size_t>(std::max(0, cfg.max_connections)));
  if (idle.size() >= keep) {
    idle.front()->close();
    idle.erase(idle.begin());
  }
  idle.push_back(std::move(conn));
  idle_count = idle.size();
}

net::awaitable<bool> client_impl::acquire_slot(lane which) {
  if (cfg.max_connections <= 0 || in_flight < static_cast<std::size_t>(cfg.max_connections)) {
    ++in_flight;
    co_return true;
  }
  auto w = std::make_shared<slot_waiter>(ioc);
  slot_waiters[static_cast<std::size_t>(which)].push_back(w);
  auto entry = aborts.add([w] { w->wake.cancel(); });
  if (!aborts.closed()) {
    sys_error ec;
    co_await w->wake.async_wait(net::redirect_error(net::use_awaitable, ec));
  }
  if (w->granted && !shutting_down)
    co_return true;
  if (w->granted)
    release_slot();
  w->abandoned = true;
  co_return false;
}

void client_impl::release_slot() {
  for (auto& queue : slot_waiters) {
    while (!queue.empty()) {
      auto w = std::move(queue.front());
      queue.pop_front();
      if (w->abandoned)
        continue;
      w->granted = true;  // the slot passes on: in_flight stays
      w->wake.cancel();
      return;
    }
  }
  --in_flight;
}

net::awaitable<bool> client_impl::sleep(std::chrono::steady_clock::duration d) {
  net::steady_timer t(ioc);
  auto entry = aborts.add([&t] { t.cancel(); });
  if (aborts.closed()) co_return false;
  t.expires_after(d);
  sys_error ec;
  co_await t.async_wait(net::redirect_error(net::use_awaitable, ec));
  co_return !ec && !shutting_down;
}

net::awaitable<client_impl::attempt_outcome> client_impl::attempt(const request& req) {
  using kind = attempt_failure::kind;
  auto fail = [](error e, kind k) {
    attempt_outcome out;
    out.failure = transport_failure{std::move(e), k};
    return out;
  };
  std::string raw = serialize_request(*ep, req.method, req.path, req.body, req.content_type,
                                      req.accept, cfg.user_agent, current_token(), &req.headers);
  auto conn = take_idle();
  bool reused = conn != nullptr;
  bool resent = false;
  for (;;) {
    if (!conn) {
      kind k = kind::not_sent;
      auto opened = co_await connect(ioc, *ep, cfg, tls_ctx.get(), cfg.request_timeout, aborts, k);
      if (!opened) co_return fail(std::move(opened.err()), k);
      conn = std::move(*opened);
      reused = false;
    }
    std::weak_ptr<connection> weak = conn;
    auto entry = aborts.add([weak] {
      if (auto c = weak.lock()) {
        c->aborted = true;
        c->close();
      }
    });
    if (aborts.closed()) {
      conn->close();
      co_return fail(shut_down_error(), kind::permanent);
    }
    deadline timer(ioc, conn, cfg.request_timeout);
    string_sink sink(req.list_items.get());
    auto x = co_await exchange(*conn, raw, sink, false, req.method == "HEAD");
    if (x.complete) {
      sink.finish();
      ++conn->served;
      if (x.keep_alive && !shutting_down)
        put_idle(conn);
      else
        conn->close();
      attempt_outcome out;
      out.resp = response{sink.status, std::move(sink.body), std::move(sink.headers)};
      out.reason_phrase = std::move(sink.reason_phrase);
      co_return out;
    }
    conn->close();
    if (conn->aborted || shutting_down) co_return fail(shut_down_error(), kind::permanent);
    // A keep-alive connection the server closed while it sat idle fails before any byte of
    // an answer: the server never read the request, so sending it again is safe.
    if (reused && !resent && !x.got_bytes && !conn->timed_out) {
      spdlog::debug("k8s client: stale keep-alive connection, resending method={} path={}",
                    req.method, req.path);
      resent = true;
      conn.reset();
      continue;
    }
    std::string msg = req.method + " " + url(req.path) + ": ";
    if (conn->timed_out)
      msg += "timed out after " + std::to_string(cfg.request_timeout.count()) + " ms";
    else
      msg += describe(x.ec);
    co_return fail(error{std::move(msg)}, is_tls_failure(x.ec) ? kind::permanent : kind::maybe_sent);
  }
}

net::awaitable<expected<response>> client_impl::perform(const request& req) {
  if (config_error) co_return *config_error;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int retry = 0;; ++retry) {
    if (shutting_down) co_return shut_down_error();
    auto wait = limiter.reserve(std::chrono::steady_clock::now());
    if (wait > wait.zero() && !co_await sleep(wait)) co_return shut_down_error();

    if (!co_await acquire_slot(req.lane)) co_return shut_down_error();
    std::optional<attempt_outcome> attempted;
    {
      struct slot_hold {
        client_impl* c;
        ~slot_hold() { c->release_slot(); }
      } hold{this};
      auto began = std::chrono::steady_clock::now();
      attempted = co_await attempt(req);
      observe_request(ep->host_header, req.method, attempted->resp ? attempted->resp->status : 0,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count());
    }
    auto& out = *attempted;
    count_request(req.method, out.resp ? out.resp->status : 0);
    attempt_failure failure;
    std::optional<error> err;
    if (out.resp) {
      if (out.resp->status < 400) co_return std::move(*out.resp);
      failure.what = attempt_failure::kind::http_status;
      failure.status = out.resp->status;
      if (auto it = out.resp->headers.find("retry-after"); it != out.resp->headers.end())
        failure.retry_after = parse_retry_after(it->second);
      err = error_from_response(out.resp->status, out.reason_phrase, out.resp->body);
    } else {
      failure.what = out.failure.kind;
      err = std::move(out.failure.err);
    }
    auto delay = retry_delay(backoff, req.method, failure, retry, unit(rng));
    if (!delay) co_return std::move(*err);
    spdlog::debug("k8s client: retrying method={} path={} retry={} delay_ms={} error=\"{}\"",
                  req.method, req.path, retry + 1, delay->count(), err->message);
    if (!co_await sleep(*delay)) co_return shut_down_error();
  }
}

void watch_state::finish(expected<ok_t> how) {
  if (closed.exchange(true)) return;
  {
    // A handle outliving the client must not post to it; a closed watch needs no cancel.
    std::lock_guard lk(mu);
    owner = nullptr;
  }
  auto cb = std::move(on_closed);
  on_closed = nullptr;
  on_line = nullptr;
  conn.reset();
  if (cb) cb(std::move(how));
}

} // namespace detail

// --- public surface -----------------------------------------------------------------------

client::client(config cfg) : impl_(std::make_shared<detail::client_impl>(std::move(cfg))) {}

client::client(view_tag, std::shared_ptr<detail::client_impl> impl, enum lane which)
    : impl_(std::move(impl)), lane_(which) {}

std::shared_ptr<client> client::view(enum lane which) {
  return std::shared_ptr<client>(new client(view_tag{}, impl_, which));
}

std::shared_ptr<client> client::background_view() { return view(lane::background); }

client::~client() {
  // The last owner may let go inside a callback, on the io thread, which cannot join itself:
  // a helper thread then shuts the client down once the callback has returned.
  if (impl_ && impl_.use_count() == 1 && impl_->on_io_thread()) {
    std::thread([impl = std::move(impl_)]() mutable { impl.reset(); }).detach();
  }
}

const config& client::cfg() const { return impl_->cfg; }

void detail::send(client_impl* impl, request req, response_callback done) {
  impl->start_request(std::move(req), std::move(done));
}

void client::send(request req, response_callback done) {
  if (req.lane == lane::normal)
    req.lane = lane_;
  impl_->start_request(std::move(req), std::move(done));
}

expected<response> client::send_sync(request req) {
  if (req.lane == lane::normal)
    req.lane = lane_;
  if (impl_->on_io_thread())
    return error{"send_sync called on the client's io thread (it would deadlock)"};
  auto promise = std::make_shared<std::promise<expected<response>>>();
  auto future = promise->get_future();
  impl_->start_request(std::move(req),
                       [promise](expected<response> r) { promise->set_value(std::move(r)); });
  return future.get();
}

expected<json::value> client::wait(const std::function<void(json_callback)>& start) {
  if (impl_->on_io_thread())
    return error{"a blocking client call was made on the client's io thread (it would deadlock)"};
  auto promise = std::make_shared<std::promise<expected<json::value>>>();
  auto future = promise->get_future();
  start([promise](expected<json::value> r) { promise->set_value(std::move(r)); });
  return future.get();
}

void client::post(std::function<void()> fn) { impl_->post(std::move(fn)); }

std::size_t client::idle_connections() const { return impl_->idle_count; }

} // namespace kozmo::client
