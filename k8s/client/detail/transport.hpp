// Internal to k8s/client: the asio side of the client. Included only by the client's .cpp
// files, never by a public header (it pulls in asio and OpenSSL).
//
// Layers, bottom up:
//   byte_stream   plain TCP or TLS, behind one virtual interface so that the HTTP code above
//                 is compiled once (not once per stream type)
//   connection    a byte_stream plus its read buffer and close/abort bookkeeping
//   connect()     resolve + TCP connect + TLS handshake, under a deadline
//   exchange()    write one raw HTTP/1.1 request, parse the answer with Beast's basic_parser,
//                 hand the body to a sink piece by piece (whole body or watch lines)
#pragma once

#include <utility>  // before asio's coroutine headers (Boost 1.74 + g++ 12)

// g++ 12 reports asio's coroutine frame allocator (awaitable_frame_base::operator new /
// delete, which are a matching pair) as mismatched after inlining: a known false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

#include "k8s/client/config.hpp"
#include "k8s/client/retry.hpp"
#include "k8s/error.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace boost::asio::ssl {
class context;
}

namespace kozmo::client::detail {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using sys_error = boost::system::error_code;

// The parts of config.server the transport needs.
struct endpoint {
  bool tls = false;
  std::string host;         // without brackets for IPv6
  std::string port;         // "443"
  std::string path_prefix;  // "" or "/prefix" (no trailing slash)
  std::string host_header;  // "host:port" or "[::1]:port"
};

// Parses "https://host:port/prefix"; an error names the bad URL.
expected<endpoint> parse_server(const std::string& server);

// A failure of one attempt: what the user reads, and what the retry policy needs.
struct transport_failure {
  error err;
  attempt_failure::kind kind = attempt_failure::kind::not_sent;
};

// Plain TCP or TLS. All functions run on the io thread.
class byte_stream {
public:
  virtual ~byte_stream() = default;
  virtual net::awaitable<std::size_t> read_some(net::mutable_buffer buf, sys_error& ec) = 0;
  virtual net::awaitable<void> write_all(net::const_buffer buf, sys_error& ec) = 0;
  // The TCP socket underneath, to close it (which fails pending operations) and peek at it.
  virtual tcp::socket& socket() = 0;
  virtual bool is_tls() const = 0;
};

struct connection {
  std::unique_ptr<byte_stream> stream;
  std::string pending;   // bytes read past the previous response (normally none)
  int served = 0;        // responses completed on this connection
  bool timed_out = false;
  bool aborted = false;  // closed on purpose (cancel, shutdown)

  // Closes the socket; pending reads and writes complete with an error. Idempotent.
  void close();
  // True when the server has closed its side (EOF pending): a keep-alive connection that
  // must not be reused.
  bool peer_closed();
};

// Closes a connection when a deadline passes (and marks it timed out). Disarmed by
// destruction.
class deadline {
public:
  deadline(net::io_context& ioc, std::shared_ptr<connection> conn,
           std::chrono::milliseconds timeout);
  ~deadline();
  deadline(const deadline&) = delete;
  deadline& operator=(const deadline&) = delete;

private:
  net::steady_timer timer_;
  // Cleared on destruction: a timer that already fired but whose handler has not run yet
  // must not close a connection that has since gone back to the pool.
  std::shared_ptr<bool> armed_;
};

// Things in flight that shutdown must interrupt (connections, timers). io thread only.
class abort_registry {
public:
  class entry {
  public:
    entry(abort_registry* r, std::uint64_t id) : r_(r), id_(id) {}
    entry(entry&& o) noexcept : r_(std::exchange(o.r_, nullptr)), id_(o.id_) {}
    entry& operator=(entry&&) = delete;
    ~entry() {
      if (r_) r_->items_.erase(id_);
    }

  private:
    abort_registry* r_;
    std::uint64_t id_;
  };

  // Registers `abort`. Check closed() right after: an operation registered once abort_all
  // has run is never interrupted and must not start.
  entry add(std::function<void()> abort) {
    auto id = next_++;
    items_.emplace(id, std::move(abort));
    return entry(this, id);
  }
  void abort_all() {
    closed_ = true;
    auto items = std::move(items_);
    items_.clear();
    for (auto& [id, fn] : items) fn();
  }
  bool closed() const { return closed_; }

private:
  std::uint64_t next_ = 1;
  bool closed_ = false;
  std::unordered_map<std::uint64_t, std::function<void()>> items_;
};

// Builds the TLS context from the config (CA, client certificate, verify mode). An error
// names the bad piece ("client certificate: ...").
expected<std::shared_ptr<net::ssl::context>> make_tls_context(const config& cfg);

// Wraps a connected socket in TLS (no handshake yet).
std::unique_ptr<byte_stream> make_tls_stream(tcp::socket sock, net::ssl::context& ctx);

// Runs the client handshake on a stream from make_tls_stream, verifying the server as
// `verify_name` (a host name or an IP address) unless `insecure`. On failure `failure` holds
// the raw error and the message names `authority`.
net::awaitable<expected<ok_t>> tls_handshake(byte_stream& stream, const std::string& verify_name,
                                             bool insecure, const std::string& authority,
                                             sys_error& failure);

std::unique_ptr<byte_stream> make_plain_stream(tcp::socket sock);

// Opens a connection to `ep` within `timeout`. `register_abort` lets shutdown interrupt it.
net::awaitable<expected<std::shared_ptr<connection>>> connect(
    net::io_context& ioc, const endpoint& ep, const config& cfg, net::ssl::context* tls_ctx,
    std::chrono::milliseconds timeout, abort_registry& aborts, attempt_failure::kind& fail_kind);

// Receives a response. on_head runs once the header is parsed; on_body gets decoded body
// bytes (chunked encoding removed) and may return false to stop reading.
class body_sink {
public:
  virtual ~body_sink() = default;
  virtual void on_head(int status, std::string_view reason,
                       std::map<std::string, std::string>&& headers) = 0;
  virtual bool on_body(std::string_view data) = 0;
};

struct exchange_result {
  sys_error ec;
  bool wrote_request = false;  // the whole request went out
  bool got_bytes = false;      // some of the answer came back
  bool complete = false;       // the whole answer was parsed
  bool keep_alive = false;     // the connection may carry another request
  bool stopped = false;        // the sink asked to stop
};

// Writes `raw_request` and reads one response into `sink`. body_limit: none for watches.
// `head`: the answer to a HEAD request, which has no body whatever its Content-Length says.
net::awaitable<exchange_result> exchange(connection& conn, std::string_view raw_request,
                                         body_sink& sink, bool unlimited_body, bool head = false);

// The bytes of an HTTP/1.1 request.
std::string serialize_request(const endpoint& ep, std::string_view method,
                              std::string_view path, std::string_view body,
                              std::string_view content_type, std::string_view accept,
                              std::string_view user_agent, std::string_view token,
                              const std::vector<std::pair<std::string, std::string>>* extra_headers = nullptr);

// "connection reset by peer" rather than "Connection reset by peer"; TLS errors include the
// OpenSSL reason.
std::string describe(const sys_error& ec);

// True for errors of the TLS layer that retrying cannot fix (not a plain truncation).
bool is_tls_failure(const sys_error& ec);

} // namespace kozmo::client::detail
