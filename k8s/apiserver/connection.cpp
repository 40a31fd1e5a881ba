// HTTP/1.1 request/response handling of one connection. Watch streaming is in
// connection_watch.cpp.
#include "k8s/apiserver/beast_request.hpp"
#include "k8s/apiserver/server_impl.hpp"

#include "k8s/apiserver/status.hpp"

#include <openssl/crypto.h>
#include <openssl/ssl.h>

#include <ctime>

namespace kozmo::apiserver {
namespace {

// kube-apiserver's API Priority and Fairness headers, on every non-watch response.
constexpr const char* flowschema_uid = "7a4b6c1e-8d2f-4e3a-9b5c-0d1e2f3a4b5c";
constexpr const char* prioritylevel_uid = "3c2d1e0f-5a6b-4c7d-8e9f-a0b1c2d3e4f5";

std::string http_date() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

} // namespace

connection::connection(tcp::socket socket, server_state& state, serve::slot held)
    : stream_(std::move(socket), state.tls ? &*state.tls : nullptr), held_(std::move(held)), state_(state), latency_timer_(stream_.get_executor()), route_timer_(stream_.get_executor()),
      bookmark_timer_(stream_.get_executor()), pre_timeout_timer_(stream_.get_executor()),
      timeout_timer_(stream_.get_executor()), log_timer_(stream_.get_executor()) {}

connection::~connection() {
  unsubscribe();
  state_.remove(this);
}

void connection::start() {
  state_.add(shared_from_this());
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->handshake(); });
}

void connection::handshake() {
  auto* tls = stream_.tls();
  if (tls == nullptr)
    return read_request();
  stream_.tcp().expires_after(state_.opts.limits.header_timeout);
  tls->async_handshake(net::ssl::stream_base::server, [self = shared_from_this(), tls](beast::error_code ec) {
    if (ec)
      return self->close_now();
    X509* peer = SSL_get1_peer_certificate(tls->native_handle());
    self->certificate_ok_ = peer != nullptr && SSL_get_verify_result(tls->native_handle()) == X509_V_OK;
    if (peer != nullptr)
      X509_free(peer);
    self->read_request();
  });
}

namespace {

bool is_public_probe(const http_request& req) {
  if (req.method != "GET")
    return false;
  std::string_view path(req.target);
  path = path.substr(0, path.find('?'));
  for (std::string_view p : {"/healthz", "/livez", "/readyz", "/version"})
    if (path == p || (path.size() > p.size() && path.substr(0, p.size()) == p && path[p.size()] == '/'))
      return true;
  return false;
}

bool loopback_host(std::string_view host, std::uint16_t port) {
  for (std::string_view name : {"127.0.0.1", "localhost", "[::1]"}) {
    if (host == name)
      return true;
    if (host.size() > name.size() && host.substr(0, name.size()) == name && host[name.size()] == ':' &&
        host.substr(name.size() + 1) == std::to_string(port))
      return true;
  }
  return false;
}

bool known_body_type(std::string_view content_type) {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  while (!media.empty() && media.back() == ' ')
    media.remove_suffix(1);
  if (media.empty())
    return false;
  for (std::string_view t : {"application/json", "application/yaml", "application/vnd.kubernetes.protobuf",
                             "application/json-patch+json", "application/merge-patch+json",
                             "application/strategic-merge-patch+json", "application/apply-patch+yaml",
                             "application/apply-patch+json"})
    if (iequals(media, t))
      return true;
  return false;
}

} // namespace

std::optional<http_response> connection::refuse(const http_request& req) const {
  const auto& sec = state_.opts.secure;
  if (!sec)
    return std::nullopt;
  const std::uint16_t port = state_.port;
  if (std::string host = req.header("Host"); !loopback_host(host, port))
    return status_response(api_error{400, "BadRequest",
                                     "the Host header names \"" + host + "\"; this server answers 127.0.0.1:" +
                                         std::to_string(port) + " and localhost:" + std::to_string(port) + " only",
                                     nullptr});
  std::string auth = req.header("Authorization");
  bool token_ok = !sec->token.empty() && auth.size() == 7 + sec->token.size() && auth.compare(0, 7, "Bearer ") == 0 &&
                  CRYPTO_memcmp(auth.data() + 7, sec->token.data(), sec->token.size()) == 0;
  auto public_read = [&] {
    if (req.method != "GET" && req.method != "HEAD")
      return false;
    auto r = state_.extra_route(req.target.substr(0, req.target.find('?')));
    return r && r->public_reads;
  };
  if (!certificate_ok_ && !token_ok && !is_public_probe(req) && !public_read()) {
    auto res = status_response(api_error{401, "Unauthorized", "Unauthorized", nullptr});
    res.set_header("WWW-Authenticate", "Bearer");
    return res;
  }
  bool writes = req.method == "POST" || req.method == "PUT" || req.method == "PATCH";
  if (writes && !known_body_type(req.header("Content-Type")))
    return status_response(api_error{415, "UnsupportedMediaType",
                                     "the body of the request was in an unknown format - accepted media types "
                                     "include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
                                     nullptr});
  return std::nullopt;
}

void connection::close() {
  net::post(stream_.get_executor(), [weak = weak_from_this()] {
    if (auto self = weak.lock())
      self->close_now();
  });
}

void connection::close_now() {
  if (closed_)
    return;
  closed_ = true;
  unsubscribe();
  bookmark_timer_.cancel();
  pre_timeout_timer_.cancel();
  timeout_timer_.cancel();
  latency_timer_.cancel();
  route_timer_.cancel();
  log_timer_.cancel();
  beast::error_code ec;
  stream_.tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.tcp().socket().close(ec);
}

void connection::read_request() {
  if (closed_)
    return;
  parser_.emplace();
  parser_->body_limit(state_.opts.max_body_bytes);
  serve::async_read_head(stream_, stream_.tcp(), buffer_, *parser_, state_.opts.limits, [self = shared_from_this()](
                                                                                      beast::error_code ec) {
    if (ec) {
      self->on_read(ec);
      return;
    }
    auto expect = self->parser_->get()[http::field::expect];
    if (!iequals(std::string_view(expect.data(), expect.size()), "100-continue")) {
      self->read_body();
      return;
    }
    // curl and others wait for this before sending a body over 1 KiB.
    auto cont = std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
    self->stream_.tcp().expires_after(self->state_.opts.limits.write_timeout);
    http::async_write(self->stream_, *cont, [self, cont](beast::error_code wec, std::size_t) {
      if (wec) {
        self->close_now();
        return;
      }
      self->read_body();
    });
  });
}

void connection::read_body() {
  serve::async_read_body(stream_, stream_.tcp(), buffer_, *parser_, state_.opts.limits,
                         [self = shared_from_this()](beast::error_code ec) { self->on_read(ec); });
}

void connection::on_read(beast::error_code ec) {
  if (ec == http::error::body_limit) {
    api_error e{413, "RequestEntityTooLarge",
                "Request entity too large: limit is " + std::to_string(state_.opts.max_body_bytes), json::object{}};
    draining_ = true;
    write_response(status_response(e), false);
    return;
  }
  if (ec) {
    close_now();
    return;
  }
  stream_.tcp().expires_never();
  auto& msg = parser_->get();
  bool keep_alive = msg.keep_alive();
  serve(from_beast(msg), keep_alive);
}

void connection::serve(http_request req, bool keep_alive) {
  auto latency = state_.faults.latency();
  if (latency.count() <= 0) {
    dispatch(req, keep_alive);
    return;
  }
  latency_timer_.expires_after(latency);
  latency_timer_.async_wait([self = shared_from_this(), req = std::move(req), keep_alive](beast::error_code ec) {
    if (!ec)
      self->dispatch(req, keep_alive);
  });
}

void connection::dispatch(const http_request& req, bool keep_alive) {
  if (auto refused = refuse(req)) {
    write_response(*refused, keep_alive);
    return;
  }
  if (auto injected = state_.faults.take_failure(req.target)) {
    write_response(*injected, keep_alive);
    return;
  }
  if (std::string path = req.target.substr(0, req.target.find('?')); auto r = state_.extra_route(path)) {
    serve_route(*r, req, path, keep_alive);
    return;
  }
  route_result result = [&]() -> route_result {
    try {
      return state_.routes->handle(req);
    } catch (const std::exception& e) {
      // A handler bug must not take the server down: answer 500 and keep serving.
      return status_response(api_error{500, "InternalError", std::string("Internal error occurred: ") + e.what(),
                                       json::object{}});
    }
  }();
  if (auto* res = std::get_if<http_response>(&result)) {
    write_response(*res, keep_alive);
    return;
  }
  if (auto* logs = std::get_if<std::shared_ptr<log_stream>>(&result)) {
    start_log(*logs);
    return;
  }
  start_watch(std::get<std::shared_ptr<watch_stream>>(result));
}

void connection::serve_route(const server::route& r, const http_request& req, const std::string& path,
                             bool keep_alive) {
  const std::uint64_t id = ++route_requests_;
  route_waiting_ = id;
  route_keep_alive_ = keep_alive;
  // The pending wait keeps the connection alive until the answer, the deadline or stop(). A
  // client that went away meanwhile is noticed when the answer is written: the write or the
  // next read fails and the connection closes.
  route_timer_.expires_after(r.deadline);
  route_timer_.async_wait([self = shared_from_this(), id, late = r.late](beast::error_code ec) {
    if (!ec)
      self->answer_route(id, late);
  });
  server::route_reply_fn reply = [weak = weak_from_this(), gate = state_.gate, id](server::route_reply answer) {
    std::lock_guard lock(gate->mu);
    if (!gate->open)
      return;
    if (auto self = weak.lock())
      net::post(self->stream_.get_executor(),
                [self, id, answer = std::move(answer)] { self->answer_route(id, answer); });
  };
  try {
    r.handler(req.method, path, req.body, std::move(reply));
  } catch (const std::exception& e) { // a handler bug must not take the server down
    json::value body = json::object{{"code", 500}, {"message", std::string("Internal error occurred: ") + e.what()}};
    answer_route(id, {500, json::dump(body)});
  }
}

void connection::answer_route(std::uint64_t id, const server::route_reply& reply) {
  if (closed_ || id != route_waiting_)
    return; // answered already (or the deadline's answer went), or the connection is gone
  route_waiting_ = 0;
  route_timer_.cancel();
  http_response res;
  res.status = reply.status;
  res.body = reply.body;
  res.set_header("Content-Type", reply.content_type);
  write_response(res, route_keep_alive_);
}

void connection::write_response(const http_response& r, bool keep_alive) {
  auto res = std::make_shared<http::response<http::string_body>>();
  res->version(11);
  res->result(static_cast<unsigned>(r.status));
  bool has_cache_control = false;
  for (const auto& [k, v] : r.headers) {
    res->insert(k, v);
    has_cache_control = has_cache_control || iequals(k, "Cache-Control");
  }
  if (!has_cache_control)
    res->set(http::field::cache_control, "no-cache, private");
  if (r.header("Content-Type").empty())
    res->set(http::field::content_type, "application/json");
  res->set(http::field::date, http_date());
  res->set("X-Kubernetes-Pf-Flowschema-Uid", flowschema_uid);
  res->set("X-Kubernetes-Pf-Prioritylevel-Uid", prioritylevel_uid);
  res->keep_alive(keep_alive);
  res->body() = r.body;
  // Big bodies (long lists) are streamed in chunks, as kube-apiserver does.
  if (res->body().size() > 256 * 1024)
    res->chunked(true);
  else
    res->prepare_payload();
  pending_ = res;
  stream_.tcp().expires_after(state_.opts.limits.write_timeout);
  http::async_write(stream_, *res, [self = shared_from_this(), keep_alive](beast::error_code ec, std::size_t) {
    self->pending_.reset();
    if (!ec && self->draining_) {
      self->drain_and_close();
      return;
    }
    if (ec || !keep_alive) {
      self->close_now();
      return;
    }
    self->read_request();
  });
}

void connection::drain_and_close() {
  // The client may still be sending the body we refused: read and drop it (up to a bound) so
  // that it gets to read our answer instead of a connection reset.
  beast::error_code ec;
  stream_.tcp().socket().shutdown(tcp::socket::shutdown_send, ec);
  stream_.tcp().expires_after(std::chrono::seconds(5));
  stream_.async_read_some(net::buffer(drain_buf_), [self = shared_from_this()](beast::error_code rec, std::size_t n) {
    self->drained_ += n;
    if (rec || self->drained_ > 64 * 1024 * 1024) {
      self->close_now();
      return;
    }
    self->drain_and_close();
  });
}

// ---- server_state ----------------------------------------------------------------------------

void server_state::add(const std::shared_ptr<connection>& c) {
  std::lock_guard lock(conns_mu);
  conns[c.get()] = c;
}

void server_state::remove(const connection* c) {
  std::lock_guard lock(conns_mu);
  conns.erase(c);
}

std::vector<std::shared_ptr<connection>> server_state::snapshot() {
  std::lock_guard lock(conns_mu);
  std::vector<std::shared_ptr<connection>> out;
  for (auto& [p, weak] : conns)
    if (auto c = weak.lock())
      out.push_back(std::move(c));
  return out;
}

} // namespace kozmo::apiserver
