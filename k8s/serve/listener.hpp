// The accept loop every Kozmo HTTP server runs on, and the timing of a request's reads.
// Private to the servers' Beast translation units (it includes Asio and Beast): never include
// it from a header others include.
//
//   auto l = serve::listener::open(ioc, "127.0.0.1", 0, limits, "apiserver",
//                                  [&](tcp::socket s, serve::slot held) { ...start a session
//                                  that keeps `held` until it ends... });
//   l->start();  ... l->close();
//
// Rules the listener keeps:
//  1. It never stops accepting until close(): an accept error (EMFILE, ENFILE, ENOBUFS, ENOMEM,
//     anything) is retried after a back-off of 5 ms doubling to 1 s, as Go's http.Server does,
//     and logged once per burst of errors (and once when accepting works again).
//  2. At most connection_budget(limits.max_connections) connections are held: one more is
//     accepted and closed at once, logged once per episode of saturation.
//  3. A connection counts until the last copy of its slot is destroyed: a session keeps its
//     slot for as long as it holds the socket.
#pragma once

#include <functional>
#include <utility>  // before asio: Boost 1.74 + g++ 12 (STACK.md)

#include "k8s/error.hpp"
#include "k8s/serve/limits.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace kozmo::serve {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

// Held by a session while it owns its connection.
using slot = std::shared_ptr<void>;

// What a listener has seen, for logs, metrics and tests.
struct listener_counters {
  std::atomic<std::uint64_t> accepted{0};
  std::atomic<std::uint64_t> refused_over_limit{0};
  std::atomic<std::uint64_t> accept_errors{0};
  std::atomic<std::size_t> open{0};
};

class listener : public std::enable_shared_from_this<listener> {
public:
  using on_accept = std::function<void(tcp::socket, slot)>;

  // Binds and listens (nothing is accepted before start()). `name` names the server in logs.
  static expected<std::shared_ptr<listener>> open(net::io_context& ioc, const std::string& address,
                                                  std::uint16_t port, const limits& lim, std::string name,
                                                  on_accept handler);
  void start();
  // Thread-safe: stops accepting (open connections are the server's to close).
  void close();
  std::uint16_t port() const { return port_; }
  std::size_t max_connections() const { return max_connections_; }
  const listener_counters& counters() const { return *counters_; }

  listener(net::io_context& ioc, std::string name, std::size_t max_connections, on_accept handler);

private:
  void accept();
  void on_accepted(beast::error_code ec, tcp::socket socket);
  void back_off(const beast::error_code& ec);

  net::io_context& ioc_;
  net::strand<net::io_context::executor_type> strand_; // the acceptor's, the timer's and close()'s
  tcp::acceptor acceptor_;
  net::steady_timer retry_timer_;
  std::string name_;
  std::size_t max_connections_;
  on_accept handler_;
  std::shared_ptr<listener_counters> counters_ = std::make_shared<listener_counters>();
  std::uint16_t port_ = 0;
  std::chrono::milliseconds delay_{0};  // the current back-off; 0 outside a burst of errors
  std::uint64_t burst_errors_ = 0;
  bool saturated_ = false;
  std::atomic<bool> closed_{false};
};

// Reads the next request's head on `stream` (plain or TLS over `tcp`): waits up to the idle
// timeout for its first byte, then up to the header timeout for the rest of the head. The
// parser's header limit is set from `lim`. `done(ec)` as Beast's async_read_header.
template <class Stream, class Parser, class Done>
void async_read_head(Stream& stream, beast::tcp_stream& tcp, beast::flat_buffer& buffer, Parser& parser,
                     const limits& lim, Done done) {
  parser.header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(lim.max_header_bytes, UINT32_MAX)));
  auto read_head = [&stream, &tcp, &buffer, &parser, header_timeout = lim.header_timeout](Done d) {
    tcp.expires_after(header_timeout);
    boost::beast::http::async_read_header(stream, buffer, parser,
                                          [d = std::move(d)](beast::error_code ec, std::size_t) mutable { d(ec); });
  };
  if (buffer.size() > 0) // a pipelined request is already here
    return read_head(std::move(done));
  tcp.expires_after(lim.idle_timeout);
  stream.async_read_some(buffer.prepare(4096), [&buffer, read_head, done = std::move(done)](beast::error_code ec,
                                                                                            std::size_t n) mutable {
    buffer.commit(n);
    if (ec)
      return done(ec);
    read_head(std::move(done));
  });
}

// Reads the body of a request whose head has been read, within the body timeout.
template <class Stream, class Parser, class Done>
void async_read_body(Stream& stream, beast::tcp_stream& tcp, beast::flat_buffer& buffer, Parser& parser,
                     const limits& lim, Done done) {
  tcp.expires_after(lim.body_timeout);
  boost::beast::http::async_read(stream, buffer, parser,
                                 [done = std::move(done)](beast::error_code ec, std::size_t) mutable { done(ec); });
}

} // namespace kozmo::serve
