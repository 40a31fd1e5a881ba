// Connections and the HTTP/1.1 exchange: parse the server URL, connect (TCP, then TLS when
// asked), write a request, parse the answer with Beast's push parser.
//
// The parser is fed by hand (basic_parser::put) from a byte_stream, so this file holds the
// only instantiation of the HTTP reading code for both plain and TLS connections.
#include "k8s/client/detail/transport.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>

#include <sys/socket.h>

#include <cctype>
#include <cstring>
#include <limits>
#include <cerrno>

namespace kozmo::client::detail {
namespace http = boost::beast::http;

// --- server URL -------------------------------------------------------------------------

expected<endpoint> parse_server(const std::string& server) {
  endpoint ep;
  std::string_view rest = server;
  if (rest.rfind("https://", 0) == 0) {
    ep.tls = true;
    rest.remove_prefix(8);
  } else if (rest.rfind("http://", 0) == 0) {
    rest.remove_prefix(7);
  } else if (rest.find("://") != std::string_view::npos) {
    return error{"server \"" + server + "\": only http:// and https:// are supported"};
  } else {
    ep.tls = true;  // kubectl treats a bare host:port as https
  }
  auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view prefix = rest.substr(slash);
    while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
    ep.path_prefix = std::string(prefix);
  }
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos) return error{"server \"" + server + "\": bad IPv6 address"};
    ep.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return error{"server \"" + server + "\": bad port"};
      port = after.substr(1);
    }
  } else {
    auto colon = authority.rfind(':');
    ep.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (ep.host.empty()) return error{"server \"" + server + "\": no host"};
  for (char c : port)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return error{"server \"" + server + "\": bad port"};
  ep.port = port.empty() ? (ep.tls ? "443" : "80") : std::string(port);
  bool v6 = ep.host.find(':') != std::string::npos;
  ep.host_header = (v6 ? "[" + ep.host + "]" : ep.host) + ":" + ep.port;
  return ep;
}

// --- errors ---------------------------------------------------------------------------

std::string describe(const sys_error& ec) {
  if (ec == net::error::eof) return "server closed the connection";
  if (ec == net::ssl::error::stream_truncated) return "server closed the connection (tls stream truncated)";
  std::string msg = ec.message();
  // strerror capitalises ("Connection refused"); the rest of a message is lower case.
  if (msg.size() > 1 && std::isupper(static_cast<unsigned char>(msg[0])) &&
      std::islower(static_cast<unsigned char>(msg[1])))
    msg[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(msg[0])));
  return msg;
}

// --- streams and connections -------------------------------------------------------------

namespace {

class plain_stream final : public byte_stream {
public:
  explicit plain_stream(tcp::socket s) : s_(std::move(s)) {}
  net::awaitable<std::size_t> read_some(net::mutable_buffer buf, sys_error& ec) override {
    co_return co_await s_.async_read_some(buf, net::redirect_error(net::use_awaitable, ec));
  }
  net::awaitable<void> write_all(net::const_buffer buf, sys_error& ec) override {
    co_await net::async_write(s_, buf, net::redirect_error(net::use_awaitable, ec));
  }
  tcp::socket& socket() override { return s_; }
  bool is_tls() const override { return false; }

private:
  tcp::socket s_;
};

} // namespace

std::unique_ptr<byte_stream> make_plain_stream(tcp::socket sock) {
  return std::make_unique<plain_stream>(std::move(sock));
}

void connection::close() {
  if (!stream) return;
  sys_error ignored;
  auto& s = stream->socket();
  if (!s.is_open()) return;
  s.shutdown(tcp::socket::shutdown_both, ignored);
  s.close(ignored);
}

bool connection::peer_closed() {
  if (!stream || !stream->socket().is_open()) return true;
  char c;
  ssize_t n = ::recv(stream->socket().native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return true;  // EOF: the server closed the idle connection
  if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK;
  // Unsolicited bytes on an idle plain connection (a 408, say) mean it is unusable; over
  // TLS they may be session tickets, which are harmless.
  return !stream->is_tls();
}

deadline::deadline(net::io_context& ioc, std::shared_ptr<connection> conn,
                   std::chrono::milliseconds timeout)
    : timer_(ioc), armed_(std::make_shared<bool>(true)) {
  timer_.expires_after(timeout);
  timer_.async_wait([weak = std::weak_ptr<connection>(conn), armed = armed_](sys_error ec) {
    if (ec || !*armed) return;
    if (auto c = weak.lock()) {
      c->timed_out = true;
      c->close();
    }
  });
}

deadline::~deadline() {
  *armed_ = false;
  timer_.cancel();
}

// --- connect ----------------------------------------------------------------------------

namespace {

// Shared with the timeout and abort handlers, which may run after connect() returned.
struct connect_state {
  explicit connect_state(net::io_context& ioc) : resolver(ioc), sock(ioc) {}
  tcp::resolver resolver;
  tcp::socket sock;
  std::unique_ptr<byte_stream> stream;  // owns the socket once TLS wraps it
  bool timed_out = false;
  bool aborted = false;

  void interrupt() {
    resolver.cancel();
    sys_error ignored;
    tcp::socket& s = stream ? stream->socket() : sock;
    s.close(ignored);
  }
};

} // namespace

net::awaitable<expected<std::shared_ptr<connection>>> connect(
    net::io_context& ioc, const endpoint& ep, const config& cfg, net::ssl::context* tls_ctx,
    std::chrono::milliseconds timeout, abort_registry& aborts, attempt_failure::kind& fail_kind) {
  using kind = attempt_failure::kind;
  fail_kind = kind::not_sent;
  auto st = std::make_shared<connect_state>(ioc);
  std::weak_ptr<connect_state> weak = st;
  auto abort_entry = aborts.add([weak] {
    if (auto s = weak.lock()) {
      s->aborted = true;
      s->interrupt();
    }
  });
  if (aborts.closed()) {
    fail_kind = kind::permanent;
    co_return error{"connect " + ep.host_header + ": client is shut down"};
  }
  net::steady_timer timer(ioc);
  timer.expires_after(timeout);
  timer.async_wait([weak](sys_error ec) {
    if (ec) return;
    if (auto s = weak.lock()) {
      s->timed_out = true;
      s->interrupt();
    }
  });
  auto fail = [&](std::string_view what, const sys_error& ec) {
    std::string msg(what);
    msg += ' ';
    msg += ep.host_header;
    msg += ": ";
    if (st->aborted) {
      msg += "client is shut down";
      fail_kind = kind::permanent;
    } else if (st->timed_out) {
      msg += "timed out after " + std::to_string(timeout.count()) + " ms";
    } else {
      msg += describe(ec);
    }
    return error{std::move(msg)};
  };

  sys_error ec;
  auto results = co_await st->resolver.async_resolve(ep.host, ep.port,
                                                     net::redirect_error(net::use_awaitable, ec));
  if (ec || st->timed_out || st->aborted) co_return fail("resolve", ec);
  co_await net::async_connect(st->sock, results, net::redirect_error(net::use_awaitable, ec));
  if (ec || st->timed_out || st->aborted) co_return fail("connect", ec);
  st->sock.set_option(tcp::no_delay(true), ec);

  if (!ep.tls) {
    auto conn = std::make_shared<connection>();
    conn->stream = make_plain_stream(std::move(st->sock));
    co_return conn;
  }
  if (!tls_ctx) {
    fail_kind = kind::permanent;
    co_return error{"connect " + ep.host_header + ": TLS is not configured"};
  }
  st->stream = make_tls_stream(std::move(st->sock), *tls_ctx);
  const std::string& name = cfg.tls_server_name.empty() ? ep.host : cfg.tls_server_name;
  sys_error tls_ec;
  auto shaken = co_await tls_handshake(*st->stream, name, cfg.insecure_skip_tls_verify,
                                       ep.host_header, tls_ec);
  if (!shaken) {
    if (st->aborted || st->timed_out) co_return fail("tls handshake with", tls_ec);
    // A certificate problem does not heal; a reset during the handshake may.
    if (is_tls_failure(tls_ec)) fail_kind = kind::permanent;
    co_return shaken.err();
  }
  auto conn = std::make_shared<connection>();
  conn->stream = std::move(st->stream);
  co_return conn;
}

// --- request and response -----------------------------------------------------------------

std::string serialize_request(const endpoint& ep, std::string_view method,
                              std::string_view path, std::string_view body,
                              std::string_view content_type, std::string_view accept,
                              std::string_view user_agent, std::string_view token,
                              const std::vector<std::pair<std::string, std::string>>* extra_headers) {
  std::string out;
  out.reserve(256 + path.size() + body.size() + token.size());
  out.append(method).append(" ").append(ep.path_prefix).append(path).append(" HTTP/1.1\r\n");
  out.append("Host: ").append(ep.host_header).append("\r\n");
  if (!user_agent.empty()) out.append("User-Agent: ").append(user_agent).append("\r\n");
  if (!accept.empty()) out.append("Accept: ").append(accept).append("\r\n");
  if (!token.empty()) out.append("Authorization: Bearer ").append(token).append("\r\n");
  if (extra_headers)
    for (const auto& [name, value] : *extra_headers)
      out.append(name).append(": ").append(value).append("\r\n");
  bool has_body = !body.empty() || method == "POST" || method == "PUT" || method == "PATCH";
  if (has_body) {
    if (!content_type.empty()) out.append("Content-Type: ").append(content_type).append("\r\n");
    out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  }
  out.append("\r\n");
  out.append(body);
  return out;
}

namespace {

// Beast's push parser with callbacks that forward the head and the body to a sink.
class response_reader final : public http::basic_parser<false> {
public:
  explicit response_reader(body_sink& sink) : sink_(sink) {}
  bool stopped() const { return stopped_; }

private:
  void on_request_impl(http::verb, boost::beast::string_view, boost::beast::string_view, int,
                       sys_error&) override {}
  void on_response_impl(int code, boost::beast::string_view reason, int, sys_error&) override {
    status_ = code;
    reason_.assign(reason.data(), reason.size());
  }
  void on_field_impl(http::field, boost::beast::string_view name,
                     boost::beast::string_view value, sys_error&) override {
    std::string key(name.data(), name.size());
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto [it, inserted] = headers_.try_emplace(std::move(key), value.data(), value.size());
    if (!inserted) it->second.append(", ").append(value.data(), value.size());
  }
  void on_header_impl(sys_error&) override {
    sink_.on_head(status_, reason_, std::move(headers_));
  }
  void on_body_init_impl(boost::optional<std::uint64_t> const&, sys_error&) override {}
  std::size_t on_body_impl(boost::beast::string_view body, sys_error& ec) override {
    return forward(body, ec);
  }
  void on_chunk_header_impl(std::uint64_t, boost::beast::string_view, sys_error&) override {}
  std::size_t on_chunk_body_impl(std::uint64_t, boost::beast::string_view body,
                                 sys_error& ec) override {
    return forward(body, ec);
  }
  void on_finish_impl(sys_error&) override {}

  std::size_t forward(boost::beast::string_view body, sys_error& ec) {
    if (!sink_.on_body(std::string_view(body.data(), body.size()))) {
      stopped_ = true;
      ec = net::error::operation_aborted;
    }
    return body.size();
  }

  body_sink& sink_;
  int status_ = 0;
  std::string reason_;
  std::map<std::string, std::string> headers_;
  bool stopped_ = false;
};

constexpr std::size_t read_size = 64 * 1024;

} // namespace

net::awaitable<exchange_result> exchange(connection& conn, std::string_view raw_request,
                                         body_sink& sink, bool unlimited_body, bool head) {
  exchange_result r;
  co_await conn.stream->write_all(net::buffer(raw_request.data(), raw_request.size()), r.ec);
  if (r.ec) co_return r;
  r.wrote_request = true;

  response_reader parser(sink);
  parser.eager(true);
  parser.skip(head);
  parser.header_limit(64 * 1024);
  // "Unlimited" is the largest limit, not boost::none: Boost 1.74 compares a Content-Length
  // against an empty optional as if it were smaller, so none rejects every sized body (a
  // 410 Status answering a watch, say) with "body limit exceeded".
  parser.body_limit(unlimited_body ? std::numeric_limits<std::uint64_t>::max()
                                   : std::uint64_t{1} << 30);

  boost::beast::flat_buffer buf;
  if (!conn.pending.empty()) {
    auto mb = buf.prepare(conn.pending.size());
    std::memcpy(mb.data(), conn.pending.data(), conn.pending.size());
    buf.commit(conn.pending.size());
    conn.pending.clear();
  }
  bool need_read = buf.size() == 0;
  for (;;) {
    if (need_read) {
      sys_error ec;
      std::size_t n = co_await conn.stream->read_some(buf.prepare(read_size), ec);
      buf.commit(n);
      if (n > 0) r.got_bytes = true;
      if (ec) {
        bool eof = ec == net::error::eof || ec == net::ssl::error::stream_truncated;
        if (eof && parser.got_some() && buf.size() == 0) {
          // A body delimited by the end of the connection ends here.
          sys_error eof_ec;
          parser.put_eof(eof_ec);
          if (!eof_ec && parser.is_done()) {
            r.complete = true;
            co_return r;
          }
        }
        if (n == 0) {
          r.ec = ec;
          co_return r;
        }
        // Parse what came with the error first; the next read reports it again.
      }
      need_read = false;
    }
    sys_error ec;
    std::size_t used = parser.put(buf.data(), ec);
    buf.consume(used);
    if (ec == http::error::need_more) {
      need_read = true;
      continue;
    }
    if (ec) {
      r.stopped = parser.stopped();
      if (!r.stopped) r.ec = ec;
      co_return r;
    }
    if (parser.is_done()) break;
    if (used == 0 || buf.size() == 0) need_read = true;
  }
  r.complete = true;
  r.keep_alive = parser.keep_alive();
  if (buf.size() > 0) {
    auto data = buf.data();
    conn.pending.assign(static_cast<const char*>(data.data()), data.size());
  }
  co_return r;
}

} // namespace kozmo::client::detail
