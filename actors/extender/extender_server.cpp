// Beast side of the extender server: accept loop, one session per connection, and the
// hand-off of each request to the backend and of its answer back to the io thread.
#include "actors/extender/extender_server.hpp"

#include <utility>

#include "k8s/serve/listener.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <openssl/ssl.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace kozmo::extender {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

namespace {

struct server_state;

// Answers come back through the gate: once it is closed (stop), they are dropped instead of
// being posted to an io_context that no longer runs.
struct gate {
  std::mutex m;
  bool open = true;
  net::io_context* ioc = nullptr;
  std::function<void(std::uint64_t, http_answer)> deliver; // runs on the io thread

  // Runs `fn` on the io thread, unless the server has stopped. Any thread.
  template <class F>
  void post(F fn) {
    std::lock_guard<std::mutex> lock(m);
    if (open) net::post(*ioc, std::move(fn));
  }
};

// One connection: plain HTTP or TLS (session<Stream>); the server holds it through this base
// while the backend works.
class session_base : public std::enable_shared_from_this<session_base> {
public:
  virtual ~session_base() = default;
  virtual void start() = 0;
  virtual void respond(http_answer a) = 0;
  virtual net::steady_timer& wait_timer() = 0;
};

template <class Stream>
class session final : public session_base {
public:
  template <class... Args>
  session(server_state& owner, tcp::socket socket, serve::slot held, Args&... args);
  void start() override;
  void respond(http_answer a) override;
  net::steady_timer& wait_timer() override { return wait_timer_; }

private:
  static constexpr bool tls = !std::is_same_v<Stream, beast::tcp_stream>;
  beast::tcp_stream& tcp() {
    if constexpr (tls)
      return stream_.next_layer();
    else
      return stream_;
  }
  std::shared_ptr<session> me() { return std::static_pointer_cast<session>(shared_from_this()); }
  void read();
  void on_read(beast::error_code ec);
  void on_write(beast::error_code ec, bool close);
  void close();

  Stream stream_;
  serve::slot held_; // counts against the listener's limit while the session lives
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  net::steady_timer wait_timer_;
  server_state& owner_;
  bool keep_alive_ = true;
  bool client_certificate_ = false; // a verified client certificate (mutual TLS)
  unsigned version_ = 11;
};

struct server_state {
  std::shared_ptr<extender_backend> backend;
  server_options opts;
  net::io_context ioc{1};
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::shared_ptr<serve::listener> listener;
  // Sessions waiting for the backend, by request id (io thread only). Declared after ioc so
  // that they are destroyed before it.
  std::map<std::uint64_t, std::shared_ptr<session_base>> waiting;
  std::optional<ssl::context> tls; // with server_options::tls
  std::uint64_t next_id = 1;
  std::shared_ptr<gate> answers = std::make_shared<gate>();
  std::thread thread;
  std::atomic<unsigned short> bound_port{0};
  bool started = false;

  void accept(tcp::socket socket, serve::slot held) {
    if (tls)
      std::make_shared<session<ssl::stream<beast::tcp_stream>>>(*this, std::move(socket), std::move(held), *tls)->start();
    else
      std::make_shared<session<beast::tcp_stream>>(*this, std::move(socket), std::move(held))->start();
  }

  void deliver(std::uint64_t id, http_answer a) {
    auto it = waiting.find(id);
    if (it == waiting.end()) return; // answered already (timeout) or dropped
    auto s = std::move(it->second);
    waiting.erase(it);
    s->wait_timer().cancel();
    s->respond(std::move(a));
  }

  // A thread-safe, copyable answer function for request `id`.
  std::function<void(http_answer)> answer_for(std::uint64_t id) {
    return [g = answers, id](http_answer a) {
      g->post([g, id, a = std::move(a)]() mutable { g->deliver(id, std::move(a)); });
    };
  }

  // Whether this server answers `kind` (server_options::routes; empty = every route).
  bool serves(route_kind kind) const {
    return opts.routes.empty() || std::find(opts.routes.begin(), opts.routes.end(), kind) != opts.routes.end();
  }

  // Checks the caller (server_options::authorize) before the request is served.
  void dispatch(const std::shared_ptr<session_base>& s, std::string_view method, std::string_view target,
                std::string authorization, bool client_certificate, std::string body) {
    // A path this server does not serve is answered (404, 405) without asking who calls; so
    // are the page's files, which hold no data (its reads of inspect carry a credential).
    auto kind = route_of(method, target).kind;
    bool known = kind != route_kind::not_found && kind != route_kind::method_not_allowed && serves(kind);
    if (!opts.authorize || !known || kind == route_kind::ui)
      return serve(s, kind, method, target, body);
    auto id = next_id++;
    waiting.emplace(id, s);
    access_request req{std::string(method), std::string(target), std::move(authorization), client_certificate};
    auto answer = [g = answers, id, kind, m = req.method, t = req.target, b = std::move(body), this](access_verdict v) {
      g->post([this, id, kind, v = std::move(v), m, t, b]() {
        auto it = waiting.find(id);
        if (it == waiting.end()) return;
        auto sess = std::move(it->second);
        waiting.erase(it);
        if (v.status != 0)
          return sess->respond({v.status, encode_error(static_cast<int>(v.status), v.message)});
        serve(sess, kind, m, t, b);
      });
    };
    opts.authorize(std::move(req), std::move(answer));
  }

  void serve(const std::shared_ptr<session_base>& s, route_kind kind, std::string_view method,
             std::string_view target, const std::string& body) {
    auto id = next_id++;
    waiting.emplace(id, s);
    s->wait_timer().expires_after(opts.backend_timeout);
    s->wait_timer().async_wait([this, id](beast::error_code ec) {
      if (ec) return;
      deliver(id, http_answer{504, encode_error(504, "the GPU scheduler did not answer in time")});
    });
    if (!serves(kind))
      return answer_for(id)({404, encode_error(404, "no such path: " + std::string(target))});
    serve_request(*backend, method, target, body, answer_for(id));
  }
};

template <class Stream>
template <class... Args>
session<Stream>::session(server_state& owner, tcp::socket socket, serve::slot held, Args&... args)
    : stream_(std::move(socket), args...), held_(std::move(held)), wait_timer_(stream_.get_executor()),
      owner_(owner) {}

template <class Stream>
void session<Stream>::start() {
  if constexpr (tls) {
    tcp().expires_after(owner_.opts.limits.header_timeout);
    stream_.async_handshake(ssl::stream_base::server, [self = me()](beast::error_code ec) {
      if (ec) {
        spdlog::debug("http: TLS handshake failed: {}", ec.message());
        return self->close();
      }
      X509* peer = SSL_get1_peer_certificate(self->stream_.native_handle());
      self->client_certificate_ = peer && SSL_get_verify_result(self->stream_.native_handle()) == X509_V_OK;
      if (peer) X509_free(peer);
      self->read();
    });
  } else {
    read();
  }
}

template <class Stream>
void session<Stream>::read() {
  parser_.emplace();
  parser_->body_limit(owner_.opts.body_limit);
  serve::async_read_head(stream_, tcp(), buffer_, *parser_, owner_.opts.limits, [self = me()](beast::error_code ec) {
    if (ec)
      return self->on_read(ec);
    serve::async_read_body(self->stream_, self->tcp(), self->buffer_, *self->parser_, self->owner_.opts.limits,
                           [self](beast::error_code bec) { self->on_read(bec); });
  });
}

template <class Stream>
void session<Stream>::on_read(beast::error_code ec) {
  if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::operation_aborted ||
      ec == net::error::connection_reset || ec == net::error::eof || ec == ssl::error::stream_truncated)
    return close();
  if (ec) {
    keep_alive_ = false;
    unsigned code = ec == http::error::body_limit ? 413 : 400;
    return respond({code, encode_error(static_cast<int>(code), "cannot read the request: " + ec.message())});
  }
  auto req = parser_->release();
  keep_alive_ = req.keep_alive();
  version_ = req.version();
  auto auth = req[http::field::authorization];
  owner_.dispatch(shared_from_this(), std::string_view(req.method_string().data(), req.method_string().size()),
                  std::string_view(req.target().data(), req.target().size()), std::string(auth.data(), auth.size()),
                  client_certificate_, std::move(req.body()));
}

template <class Stream>
void session<Stream>::respond(http_answer a) {
  response_ = {};
  response_.version(version_);
  response_.result(a.status);
  response_.set(http::field::server, "kozmo-extender");
  response_.set(http::field::content_type, a.content_type);
  if (a.status == 401)
    response_.set(http::field::www_authenticate, "Bearer");
  response_.keep_alive(keep_alive_);
  response_.body() = std::move(a.body);
  response_.prepare_payload();
  tcp().expires_after(owner_.opts.limits.write_timeout);
  bool close_after = !keep_alive_;
  http::async_write(stream_, response_, [self = me(), close_after](beast::error_code ec, std::size_t) {
    self->on_write(ec, close_after);
  });
}

template <class Stream>
void session<Stream>::on_write(beast::error_code ec, bool close_after) {
  if (ec || close_after) return close();
  read();
}

template <class Stream>
void session<Stream>::close() {
  beast::error_code ec;
  tcp().socket().shutdown(tcp::socket::shutdown_send, ec);
  tcp().socket().close(ec);
}

// The server's TLS context from PEM text: TLS 1.2 or newer, and with a client CA, client
// certificates asked for (not required: a caller without one may still bring a token).
expected<ssl::context> make_server_tls(const tls_options& t) {
  ssl::context ctx(ssl::context::tls_server);
  SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                  ssl::context::single_dh_use);
  beast::error_code ec;
  ctx.use_certificate_chain(net::buffer(t.cert_pem), ec);
  if (ec) return error{"TLS: cannot use the serving certificate: " + ec.message()};
  ctx.use_private_key(net::buffer(t.key_pem), ssl::context::pem, ec);
  if (ec) return error{"TLS: cannot use the serving key: " + ec.message()};
  if (!SSL_CTX_check_private_key(ctx.native_handle()))
    return error{"TLS: the serving key does not match the certificate"};
  if (!t.client_ca_pem.empty()) {
    ctx.add_certificate_authority(net::buffer(t.client_ca_pem), ec);
    if (ec) return error{"TLS: cannot use the client CA: " + ec.message()};
    // Ask, verify what is sent, but let callers without a certificate through to the token check.
    ctx.set_verify_mode(ssl::verify_peer);
    ctx.set_verify_callback([](bool, ssl::verify_context&) { return true; });
  }
  // Browsers resume TLS sessions on their next connections; with client certificates asked
  // for, OpenSSL refuses a resumption (the handshake fails) unless the session belongs to a
  // named context.
  static constexpr unsigned char session_context[] = "kozmo-extender";
  SSL_CTX_set_session_id_context(ctx.native_handle(), session_context, sizeof session_context - 1);
  return ctx;
}

} // namespace

struct extender_server::impl : server_state {};

extender_server::extender_server(std::shared_ptr<extender_backend> backend, server_options opts)
    : impl_(std::make_unique<impl>()) {
  impl_->backend = std::move(backend);
  impl_->opts = std::move(opts);
  impl_->answers->ioc = &impl_->ioc;
  impl_->answers->deliver = [d = impl_.get()](std::uint64_t id, http_answer a) { d->deliver(id, std::move(a)); };
}

extender_server::~extender_server() { stop(); }

expected<unsigned short> extender_server::start() {
  auto& d = *impl_;
  if (d.started) return d.bound_port.load();
  if (d.opts.tls) {
    auto ctx = make_server_tls(*d.opts.tls);
    if (!ctx) return ctx.err();
    d.tls.emplace(std::move(*ctx));
  }
  auto listening = serve::listener::open(d.ioc, d.opts.address, d.opts.port, d.opts.limits, "extender",
                                         [&d](tcp::socket socket, serve::slot held) {
                                           d.accept(std::move(socket), std::move(held));
                                         });
  if (!listening)
    return listening.err();
  d.listener = std::move(*listening);
  d.bound_port = d.listener->port();
  d.work.emplace(d.ioc.get_executor());
  d.listener->start();
  d.thread = std::thread([&d] { d.ioc.run(); });
  d.started = true;
  return d.bound_port.load();
}

void extender_server::stop() {
  auto& d = *impl_;
  if (!d.started) return;
  d.started = false;
  {
    std::lock_guard<std::mutex> lock(d.answers->m);
    d.answers->open = false;
  }
  d.listener->close();
  d.work.reset();
  d.ioc.stop();
  if (d.thread.joinable()) d.thread.join();
  d.waiting.clear();
}

unsigned short extender_server::port() const { return impl_->bound_port.load(); }

std::size_t extender_server::open_connections() const {
  return impl_->listener ? impl_->listener->counters().open.load() : 0;
}

} // namespace kozmo::extender
