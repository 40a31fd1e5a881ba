// A server connection's stream: plain TCP, or TLS over it, chosen when the connection is
// accepted. It is an Asio AsyncStream either way, so one session class serves both (Beast's
// http::async_read and async_write take it as they take a tcp_stream). Private to servers'
// Beast translation units.
#pragma once

#include <utility> // before asio: Boost 1.74 + g++ 12 (STACK.md)

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>

#include <optional>

namespace kozmo::serve {

class maybe_tls_stream {
public:
  using executor_type = boost::beast::tcp_stream::executor_type;

  // With `tls` (not null), the stream speaks TLS once handshake() has succeeded.
  maybe_tls_stream(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context* tls) {
    if (tls != nullptr)
      tls_.emplace(std::move(socket), *tls);
    else
      plain_.emplace(std::move(socket));
  }

  bool is_tls() const { return tls_.has_value(); }
  boost::beast::tcp_stream& tcp() { return tls_ ? tls_->next_layer() : *plain_; }
  boost::asio::ssl::stream<boost::beast::tcp_stream>* tls() { return tls_ ? &*tls_ : nullptr; }
  executor_type get_executor() { return tcp().get_executor(); }

  template <class MutableBuffers, class Handler>
  void async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    if (tls_)
      tls_->async_read_some(buffers, std::forward<Handler>(handler));
    else
      plain_->async_read_some(buffers, std::forward<Handler>(handler));
  }

  template <class ConstBuffers, class Handler>
  void async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    if (tls_)
      tls_->async_write_some(buffers, std::forward<Handler>(handler));
    else
      plain_->async_write_some(buffers, std::forward<Handler>(handler));
  }

private:
  std::optional<boost::beast::tcp_stream> plain_;
  std::optional<boost::asio::ssl::stream<boost::beast::tcp_stream>> tls_;
};

} // namespace kozmo::serve
