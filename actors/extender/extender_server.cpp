// Beast side of the extender server: accept loop, one session per connection, and the
// hand-off of each request to the backend and of its answer back to the io thread.
#include "actors/extender/extender_server.hpp"

#include <utility>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

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

  void dispatch(const std::shared_ptr<session>& s, std::string_view method, std::string_view target,
                const std::string& body) {
    auto id = next_id++;
    waiting.emplace(id, s);
    s->wait_timer().expires_after(opts.backend_timeout);
    s->wait_timer().async_wait([this, id](beast::error_code ec) {
      if (ec) return;
      deliver(id, http_answer{504, encode_error(504, "the GPU scheduler did not answer in time")});
    });
    if (!opts.routes.empty()) {
      auto kind = route_of(method, target).kind;
      if (std::find(opts.routes.begin(), opts.routes.end(), kind) == opts.routes.end())
        return answer_for(id)({404, encode_error(404, "no such path: " + std::string(target))});
    }
    serve_request(*backend, method, target, body, answer_for(id));
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
  owner_.dispatch(shared_from_this(), std::string_view(req.method_string().data(), req.method_string().size()),
                  std::string_view(req.target().data(), req.target().size()), req.body());
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
