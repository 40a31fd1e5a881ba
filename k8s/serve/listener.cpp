#include "k8s/serve/listener.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace kozmo::serve {

expected<std::shared_ptr<listener>> listener::open(net::io_context& ioc, const std::string& address,
                                                   std::uint16_t port, const limits& lim, std::string name,
                                                   on_accept handler) {
  beast::error_code ec;
  auto ip = net::ip::make_address(address, ec);
  if (ec)
    return error::bad_request(name + ": invalid listen address '" + address + "': " + ec.message());
  auto l = std::make_shared<listener>(ioc, name, connection_budget(lim.max_connections), std::move(handler));
  tcp::endpoint endpoint{ip, port};
  l->acceptor_.open(endpoint.protocol(), ec);
  if (!ec)
    l->acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec)
    l->acceptor_.bind(endpoint, ec);
  if (!ec)
    l->acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return error::internal(name + ": cannot listen on " + address + ":" + std::to_string(port) + ": " +
                           ec.message());
  l->port_ = l->acceptor_.local_endpoint().port();
  return l;
}

listener::listener(net::io_context& ioc, std::string name, std::size_t max_connections, on_accept handler)
    : ioc_(ioc), strand_(net::make_strand(ioc)), acceptor_(strand_), retry_timer_(strand_), name_(std::move(name)), max_connections_(max_connections),
      handler_(std::move(handler)) {}

void listener::start() {
  net::post(strand_, [self = shared_from_this()] { self->accept(); });
}

void listener::close() {
  closed_ = true;
  net::post(strand_, [self = shared_from_this()] {
    beast::error_code ec;
    self->acceptor_.close(ec);
    self->retry_timer_.cancel();
  });
}

void listener::accept() {
  if (closed_)
    return;
  // Each connection gets a strand of its own: its handlers never run at once.
  acceptor_.async_accept(net::make_strand(ioc_), [self = shared_from_this()](beast::error_code ec, tcp::socket s) {
    self->on_accepted(ec, std::move(s));
  });
}

void listener::on_accepted(beast::error_code ec, tcp::socket socket) {
  if (closed_ || ec == net::error::operation_aborted || !acceptor_.is_open())
    return;
  if (ec)
    return back_off(ec);
  if (burst_errors_ > 0)
    spdlog::info("{}: accepting connections again after {} failed accept(s)", name_, burst_errors_);
  burst_errors_ = 0;
  delay_ = std::chrono::milliseconds(0);
  if (counters_->open.load() >= max_connections_) {
    counters_->refused_over_limit++;
    if (!saturated_)
      spdlog::warn("{}: {} connections open, the limit: new connections are closed at once until some end", name_,
                   max_connections_);
    saturated_ = true;
    beast::error_code ignored;
    socket.close(ignored);
    return accept();
  }
  saturated_ = false;
  counters_->accepted++;
  counters_->open++;
  slot held(nullptr, [counters = counters_](void*) { counters->open--; });
  beast::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  handler_(std::move(socket), std::move(held));
  accept();
}

void listener::back_off(const beast::error_code& ec) {
  counters_->accept_errors++;
  if (burst_errors_++ == 0)
    spdlog::warn("{}: cannot accept a connection: {} ({} connections open); retrying with back-off", name_,
                 ec.message(), counters_->open.load());
  delay_ = delay_.count() == 0 ? std::chrono::milliseconds(5) : std::min(delay_ * 2, std::chrono::milliseconds(1000));
  retry_timer_.expires_after(delay_);
  retry_timer_.async_wait([self = shared_from_this()](beast::error_code tec) {
    if (!tec)
      self->accept();
  });
}

} // namespace kozmo::serve
