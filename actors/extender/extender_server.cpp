// Beast side of the extender server: accept loop, one session per connection, and the
// hand-off of each request to the backend and of its answer back to the io thread.
#include "actors/extender/extender_server.hpp"

#include "k8s/url.hpp"
#include "k8s/metrics/registry.hpp"

#include <utility>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <spdlog/spdlog.h>

#include <atomic>
#include <charconv>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace kozmo::extender {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

// ---- routing (pure) ------------------------------------------------------------------------

namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

} // namespace

route route_of(std::string_view method, std::string_view target) {
  auto path = target.substr(0, target.find('?'));
  route r;
  auto want = [&](route_kind kind, std::string_view verb) {
    r.kind = method == verb ? kind : route_kind::method_not_allowed;
    return r;
  };
  if (path == "/v1/extender/filter") return want(route_kind::filter, "POST");
  if (path == "/v1/extender/preempt") return want(route_kind::preempt, "POST");
  if (path == "/v1/extender/bind") return want(route_kind::bind, "POST");
  if (path == "/healthz") return want(route_kind::healthz, "GET");
  if (path == "/metrics") return want(route_kind::metrics, "GET");

  constexpr std::string_view groups = "/v1/inspect/affinitygroups";
  constexpr std::string_view status = "/v1/inspect/clusterstatus";
  constexpr std::string_view vcs = "/v1/inspect/clusterstatus/virtualclusters";
  auto inspect = [&](inspect_kind kind, std::string_view name = {}) {
    r.query = {kind, url::decode(name)};
    return want(route_kind::inspect, "GET");
  };
  if (path == groups || path == std::string(groups) + "/") return inspect(inspect_kind::affinity_groups);
  // Group names may hold a slash (the default group of a pod is "<ns>/<pod>"): the rest is the name.
  if (starts_with(path, std::string(groups) + "/")) return inspect(inspect_kind::affinity_group, path.substr(groups.size() + 1));
  if (path == status || path == std::string(status) + "/") return inspect(inspect_kind::cluster_status);
  if (path == std::string(status) + "/physicalcluster" || path == std::string(status) + "/physicalcluster/")
    return inspect(inspect_kind::physical_cluster);
  if (path == vcs || path == std::string(vcs) + "/") return inspect(inspect_kind::virtual_clusters);
  if (starts_with(path, std::string(vcs) + "/")) {
    auto name = path.substr(vcs.size() + 1);
    if (!name.empty() && name.back() == '/') name.remove_suffix(1);
    if (name.find('/') == std::string_view::npos) return inspect(inspect_kind::virtual_cluster, name);
  }
  r.kind = route_kind::not_found;
  return r;
}

expected<std::pair<std::string, unsigned short>> parse_listen(std::string_view text) {
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return error{"listen address '" + std::string(text) + "' is not host:port"};
  auto host = std::string(text.substr(0, colon));
  auto port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535 || port_text.empty())
    return error{"listen address '" + std::string(text) + "' has no valid port"};
  return std::make_pair(host.empty() ? std::string("0.0.0.0") : host, static_cast<unsigned short>(port));
}

// ---- the server ------------------------------------------------------------------------------

namespace {

struct http_answer {
  unsigned status = 200;
  std::string body;
  const char* content_type = "application/json";
};

http_answer error_answer(const error& e) {
  unsigned code = e.code >= 400 && e.code < 600 ? static_cast<unsigned>(e.code) : 500u;
  return {code, encode_error(static_cast<int>(code), e.message)};
}

} // namespace

namespace {

struct server_state;

// Answers come back through the gate: once it is closed (stop), they are dropped instead of
// being posted to an io_context that no longer runs.
struct gate {
  std::mutex m;
  bool open = true;
  net::io_context* ioc = nullptr;
  std::function<void(std::uint64_t, http_answer)> deliver; // runs on the io thread
};

class session : public std::enable_shared_from_this<session> {
public:
  session(tcp::socket socket, server_state& owner);
  void start() { read(); }
  void respond(http_answer a);
  net::steady_timer& wait_timer() { return wait_timer_; }

private:
  void read();
  void on_read(beast::error_code ec);
  void on_write(beast::error_code ec, bool close);
  void close();

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  net::steady_timer wait_timer_;
  server_state& owner_;
  bool keep_alive_ = true;
  unsigned version_ = 11;
};

struct server_state {
  std::shared_ptr<extender_backend> backend;
  server_options opts;
  net::io_context ioc{1};
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  tcp::acceptor acceptor{ioc};
  // Sessions waiting for the backend, by request id (io thread only). Declared after ioc so
  // that they are destroyed before it.
  std::map<std::uint64_t, std::shared_ptr<session>> waiting;
  std::uint64_t next_id = 1;
  std::shared_ptr<gate> answers = std::make_shared<gate>();
  std::thread thread;
  std::atomic<unsigned short> bound_port{0};
  bool started = false;

  void accept() {
    acceptor.async_accept(ioc, [this](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
      if (!ec) std::make_shared<session>(std::move(socket), *this)->start();
      accept();
    });
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
      std::lock_guard<std::mutex> lock(g->m);
      if (!g->open) return;
      net::post(*g->ioc, [g, id, a = std::move(a)]() mutable { g->deliver(id, std::move(a)); });
    };
  }

  template <class Decode, class Call>
  void call_backend(std::function<void(http_answer)> answer, const std::string& body, Decode decode, Call call) {
    auto args = decode(body);
    if (!args) {
      answer(error_answer(args.err()));
      return;
    }
    call(std::move(*args), [answer](auto result) {
      if (!result) {
        answer(error_answer(result.err()));
        return;
      }
      answer(http_answer{200, encode(*result)});
    });
  }

  void dispatch(const std::shared_ptr<session>& s, const route& r, const std::string& body) {
    auto id = next_id++;
    waiting.emplace(id, s);
    s->wait_timer().expires_after(opts.backend_timeout);
    s->wait_timer().async_wait([this, id](beast::error_code ec) {
      if (ec) return;
      deliver(id, http_answer{504, encode_error(504, "the GPU scheduler did not answer in time")});
    });
    auto answer = answer_for(id);
    try {
      switch (r.kind) {
      case route_kind::filter:
        call_backend(answer, body, decode_filter_args,
                     [&](filter_args a, auto done) { backend->filter(std::move(a), std::move(done)); });
        return;
      case route_kind::preempt:
        call_backend(answer, body, decode_preempt_args,
                     [&](preempt_args a, auto done) { backend->preempt(std::move(a), std::move(done)); });
        return;
      case route_kind::bind:
        call_backend(answer, body, decode_bind_args,
                     [&](bind_args a, auto done) { backend->bind(std::move(a), std::move(done)); });
        return;
      case route_kind::inspect:
        backend->inspect(r.query, [answer](expected<json::value> v) {
          answer(v ? http_answer{200, json::dump(*v)} : error_answer(v.err()));
        });
        return;
      default:
        answer(error_answer(error::internal("unroutable request")));
      }
    } catch (const std::exception& e) {
      // A backend must not throw; if one does, the request fails and the server lives on.
      spdlog::error("extender backend threw: {}", e.what());
      answer(error_answer(error::internal(std::string("internal error: ") + e.what())));
    }
  }
};

session::session(tcp::socket socket, server_state& owner)
    : stream_(std::move(socket)), wait_timer_(stream_.get_executor()), owner_(owner) {}

void session::read() {
  parser_.emplace();
  parser_->body_limit(owner_.opts.body_limit);
  stream_.expires_after(owner_.opts.idle_timeout);
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
}

void session::on_read(beast::error_code ec) {
  if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::operation_aborted ||
      ec == net::error::connection_reset || ec == net::error::eof)
    return close();
  if (ec) {
    keep_alive_ = false;
    unsigned code = ec == http::error::body_limit ? 413 : 400;
    return respond({code, encode_error(static_cast<int>(code), "cannot read the request: " + ec.message())});
  }
  auto req = parser_->release();
  keep_alive_ = req.keep_alive();
  version_ = req.version();
  auto r = route_of(std::string_view(req.method_string().data(), req.method_string().size()),
                    std::string_view(req.target().data(), req.target().size()));
  switch (r.kind) {
  case route_kind::healthz:
    return respond({200, "ok", "text/plain; charset=utf-8"});
  case route_kind::metrics:
    return respond({200, metrics::render(), metrics::content_type});
  case route_kind::not_found:
    return respond({404, encode_error(404, "no such path: " + std::string(req.target()))});
  case route_kind::method_not_allowed:
    return respond({405, encode_error(405, std::string(req.method_string()) + " is not allowed on " +
                                              std::string(req.target()))});
  default:
    owner_.dispatch(shared_from_this(), r, req.body());
  }
}

void session::respond(http_answer a) {
  response_ = {};
  response_.version(version_);
  response_.result(a.status);
  response_.set(http::field::server, "kozmo-extender");
  response_.set(http::field::content_type, a.content_type);
  response_.keep_alive(keep_alive_);
  response_.body() = std::move(a.body);
  response_.prepare_payload();
  stream_.expires_after(std::chrono::seconds(30));
  bool close_after = !keep_alive_;
  http::async_write(stream_, response_, [self = shared_from_this(), close_after](beast::error_code ec, std::size_t) {
    self->on_write(ec, close_after);
  });
}

void session::on_write(beast::error_code ec, bool close_after) {
  if (ec || close_after) return close();
  read();
}

void session::close() {
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  stream_.socket().close(ec);
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
  beast::error_code ec;
  auto address = net::ip::make_address(d.opts.address, ec);
  if (ec) return error{"extender: bad listen address '" + d.opts.address + "': " + ec.message()};
  tcp::endpoint ep{address, d.opts.port};
  d.acceptor.open(ep.protocol(), ec);
  if (!ec) d.acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) d.acceptor.bind(ep, ec);
  if (!ec) d.acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    beast::error_code ignored;
    d.acceptor.close(ignored);
    return error{"extender: cannot listen on " + d.opts.address + ":" + std::to_string(d.opts.port) + ": " +
                 ec.message()};
  }
  d.bound_port = d.acceptor.local_endpoint().port();
  d.work.emplace(d.ioc.get_executor());
  d.accept();
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
  net::post(d.ioc, [&d] {
    beast::error_code ec;
    d.acceptor.close(ec);
  });
  d.work.reset();
  d.ioc.stop();
  if (d.thread.joinable()) d.thread.join();
  d.waiting.clear();
}

unsigned short extender_server::port() const { return impl_->bound_port.load(); }

} // namespace kozmo::extender
