// Private to the Beast translation units of the server (server.cpp, connection.cpp,
// connection_watch.cpp). Includes Boost.Beast: never include it from a public header.
#pragma once

#include <functional>

#include <utility>  // before asio: Boost 1.74 + g++ 12 (see STACK.md)

#include "k8s/apiserver/router.hpp"
#include "k8s/apiserver/server.hpp"
#include "k8s/apiserver/store.hpp"
#include "k8s/serve/listener.hpp"
#include "k8s/serve/maybe_tls_stream.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <array>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kozmo::apiserver {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

class connection;

// What every connection shares. Owned by server::impl; outlives every connection.
struct server_state {
  server::options opts;
  std::optional<net::ssl::context> tls; // with opts.secure
  std::uint16_t port = 0;               // the port bound
  std::unique_ptr<store> st;
  std::unique_ptr<router> routes;
  fault_injector faults;

  // Extra routes (server::add_route): checked before the Kubernetes API.
  std::mutex extra_mu;
  std::vector<std::pair<std::string, server::route>> extra_routes;
  // The route serving `path` (without the query), if any: a copy, so that add_route may
  // replace it meanwhile.
  std::optional<server::route> extra_route(const std::string& path);
  // A route's reply reaches its connection only while this is open: stop() closes it before the
  // io threads end, so that a late reply (from an actor, say) never posts to an io_context that
  // is going away.
  struct reply_gate {
    std::mutex mu;
    bool open = true;
  };
  std::shared_ptr<reply_gate> gate = std::make_shared<reply_gate>();

  std::mutex conns_mu;
  std::map<const connection*, std::weak_ptr<connection>> conns;

  void add(const std::shared_ptr<connection>& c);
  void remove(const connection* c);
  std::vector<std::shared_ptr<connection>> snapshot();
};

// One client connection: HTTP/1.1 keep-alive request/response on its strand, or, after a
// watch request, a chunked stream of watch events until the watch ends.
class connection : public std::enable_shared_from_this<connection> {
public:
  connection(tcp::socket socket, server_state& state, serve::slot held);
  ~connection();

  void start();
  // Thread-safe: close now (server stop).
  void close();
  // Thread-safe: if this connection streams a watch, cut it (fault injection).
  void drop_watch();

private:
  // ---- request/response (connection.cpp) ----
  void handshake();
  void read_request();
  // opts.secure: the caller proved who it is, names this server, and writes a known type; else
  // the answer that says why not.
  std::optional<http_response> refuse(const http_request& req) const;
  void read_body();
  void on_read(beast::error_code ec);
  void serve(http_request req, bool keep_alive);
  void dispatch(const http_request& req, bool keep_alive);
  // An extra route (server::add_route): the handler answers through a callback, later and from
  // any thread; meanwhile only a timer (the route's deadline) holds the connection, no thread.
  void serve_route(const server::route& r, const http_request& req, const std::string& path, bool keep_alive);
  void answer_route(std::uint64_t id, const server::route_reply& reply); // on the strand
  void write_response(const http_response& r, bool keep_alive);
  void close_now();
  void drain_and_close();

  // ---- watch streaming (connection_watch.cpp) ----
  void start_watch(std::shared_ptr<watch_stream> ws);
  void on_event(const change_event& ev);
  void enqueue(std::string line);
  void flush();
  void finish_watch();  // graceful: pending events, then the last chunk, then close
  void abort_watch();   // abrupt: close without the last chunk
  void unsubscribe();
  void arm_bookmarks();
  void arm_timeout();
  void watch_for_disconnect();

  // ---- followed pod logs (connection_log.cpp) ----
  // Writes a 200 head with chunked transfer encoding of `content_type`, then calls `then` (a
  // failed write closes the connection instead): the start of a watch and of a followed log.
  void write_chunked_head(const char* content_type, std::function<void()> then);
  void start_log(std::shared_ptr<log_stream> ls);
  void write_log_chunk(std::string data, bool last);
  void poll_log();

  serve::maybe_tls_stream stream_;
  bool certificate_ok_ = false; // a client certificate the client CA signed (TLS)
  serve::slot held_; // counts this connection against the listener's limit while it lives
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  server_state& state_;
  std::shared_ptr<http::response<http::string_body>> pending_;
  net::steady_timer latency_timer_;
  net::steady_timer route_timer_;    // the deadline of the route answering now
  std::uint64_t route_requests_ = 0; // routes served on this connection
  std::uint64_t route_waiting_ = 0;  // the one whose answer is awaited (0 = none)
  bool route_keep_alive_ = false;
  bool draining_ = false;
  std::size_t drained_ = 0;
  std::array<char, 65536> drain_buf_{};

  // watch state
  std::shared_ptr<watch_stream> watch_;
  std::optional<std::uint64_t> watch_id_;
  std::optional<http::response<http::empty_body>> watch_res_;
  std::optional<http::response_serializer<http::empty_body>> watch_sr_;
  std::deque<std::string> queue_;
  std::size_t queued_bytes_ = 0;
  std::string writing_;
  bool writing_now_ = false;
  bool header_sent_ = false;
  bool finishing_ = false;
  bool drop_when_flushed_ = false;
  bool closed_ = false;
  std::size_t drop_count_ = 0;
  std::uint64_t drop_generation_ = 0;
  net::steady_timer bookmark_timer_;
  net::steady_timer pre_timeout_timer_;
  net::steady_timer timeout_timer_;
  std::array<char, 256> discard_{};

  // followed log state
  std::shared_ptr<log_stream> log_;
  std::string log_chunk_;
  net::steady_timer log_timer_;
};

} // namespace kozmo::apiserver
