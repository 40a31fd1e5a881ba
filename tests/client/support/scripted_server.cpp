#include "tests/client/support/scripted_server.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>

#include <openssl/x509.h>
#include <sys/socket.h>

#include <atomic>
#include <cctype>
#include <list>
#include <mutex>
#include <thread>

namespace kozmo::test {
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

void server_connection::respond(int status, std::string_view body,
                                const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason_phrase(status)) + "\r\n";
  bool has_type = false;
  for (const auto& [k, v] : headers) {
    out += k + ": " + v + "\r\n";
    if (k == "Content-Type") has_type = true;
  }
  if (!has_type) out += "Content-Type: application/json\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  if (closing()) out += "Connection: close\r\n";
  out += "\r\n";
  out += body;
  write(out);
}

void server_connection::start_chunked(int status, std::string_view content_type) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason_phrase(status)) + "\r\n";
  out += "Content-Type: " + std::string(content_type) + "\r\n";
  out += "Transfer-Encoding: chunked\r\n\r\n";
  write(out);
}

void server_connection::send_chunk(std::string_view data) {
  if (data.empty()) return;
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string out = size;
  out += data;
  out += "\r\n";
  write(out);
}

void server_connection::end_chunks() { write("0\r\n\r\n"); }

namespace {

// One accepted connection: a plain or TLS stream behind the same few calls.
class conn_impl final : public server_connection {
public:
  conn_impl(tcp::socket sock, ssl::context* tls) {
    if (tls)
      tls_.emplace(std::move(sock), *tls);
    else
      plain_.emplace(std::move(sock));
  }

  tcp::socket& socket() { return tls_ ? tls_->next_layer() : *plain_; }

  bool handshake() {
    if (!tls_) return true;
    boost::system::error_code ec;
    tls_->handshake(ssl::stream_base::server, ec);
    return !ec;
  }

  std::size_t read_some(char* buf, std::size_t n, boost::system::error_code& ec) {
    if (tls_) return tls_->read_some(net::buffer(buf, n), ec);
    return plain_->read_some(net::buffer(buf, n), ec);
  }

  void write(std::string_view raw) override {
    boost::system::error_code ec;
    if (tls_)
      net::write(*tls_, net::buffer(raw.data(), raw.size()), ec);
    else
      net::write(*plain_, net::buffer(raw.data(), raw.size()), ec);
  }

  void wait_for_client_close() override {
    char buf[1024];
    boost::system::error_code ec;
    while (!ec) read_some(buf, sizeof buf, ec);
  }

  std::string client_subject() const override {
    if (!tls_) return {};
    X509* cert = SSL_get1_peer_certificate(const_cast<ssl::stream<tcp::socket>&>(*tls_).native_handle());
    if (!cert) return {};
    char name[256];
    X509_NAME_oneline(X509_get_subject_name(cert), name, sizeof name);
    X509_free(cert);
    return name;
  }

  // Reads one request; false at the end of the connection.
  bool read_request(received_request& out) {
    for (;;) {
      auto end = buffer_.find("\r\n\r\n");
      if (end != std::string::npos) {
        if (!parse_head(buffer_.substr(0, end), out)) return false;
        buffer_.erase(0, end + 4);
        std::size_t length = 0;
        if (auto it = out.headers.find("content-length"); it != out.headers.end())
          length = std::stoul(it->second);
        while (buffer_.size() < length)
          if (!fill()) return false;
        out.body = buffer_.substr(0, length);
        buffer_.erase(0, length);
        return true;
      }
      if (!fill()) return false;
    }
  }

private:
  bool fill() {
    char buf[16384];
    boost::system::error_code ec;
    std::size_t n = read_some(buf, sizeof buf, ec);
    buffer_.append(buf, n);
    return n > 0 || !ec;
  }

  static bool parse_head(const std::string& head, received_request& out) {
    auto line_end = head.find("\r\n");
    std::string line = head.substr(0, line_end);
    auto sp1 = line.find(' ');
    auto sp2 = line.find(' ', sp1 + 1);
    if (sp1 == std::string::npos || sp2 == std::string::npos) return false;
    out.method = line.substr(0, sp1);
    out.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    std::size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      auto next = head.find("\r\n", pos);
      if (next == std::string::npos) next = head.size();
      std::string field = head.substr(pos, next - pos);
      auto colon = field.find(':');
      if (colon != std::string::npos) {
        std::string key = field.substr(0, colon);
        for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        std::string value = field.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        out.headers[key] = value;
      }
      pos = next + 2;
    }
    return true;
  }

  std::optional<tcp::socket> plain_;
  std::optional<ssl::stream<tcp::socket>> tls_;
  std::string buffer_;
};

} // namespace

struct scripted_server::impl {
  struct live_conn {
    int fd = -1;
    std::thread thread;
  };

  handler on_request;
  net::io_context ioc;  // never run: the sockets are used synchronously
  tcp::acceptor acceptor{ioc};
  std::optional<ssl::context> tls;
  std::atomic<bool> stopping{false};
  std::thread accept_thread;
  std::uint16_t port = 0;

  mutable std::mutex mu;
  std::vector<received_request> log;
  std::list<live_conn> conns;
  int accepted = 0;

  void accept_loop() {
    for (;;) {
      boost::system::error_code ec;
      tcp::socket sock(ioc);
      acceptor.accept(sock, ec);
      if (stopping || ec) return;
      std::lock_guard lk(mu);
      int index = ++accepted;
      conns.push_back(live_conn{});
      auto& lc = conns.back();
      lc.fd = sock.native_handle();
      lc.thread = std::thread(
          [this, index, &lc, s = std::move(sock)]() mutable { serve(std::move(s), index, lc); });
    }
  }

  void serve(tcp::socket sock, int index, live_conn& lc) {
    conn_impl conn(std::move(sock), tls ? &*tls : nullptr);
    serve_requests(conn, index);
    // Forget the descriptor before it is closed: the number may be reused at once, by the
    // client under test in this very process.
    {
      std::lock_guard lk(mu);
      lc.fd = -1;
    }
    boost::system::error_code ec;
    conn.socket().shutdown(tcp::socket::shutdown_both, ec);
    conn.socket().close(ec);
  }

  void serve_requests(conn_impl& conn, int index) {
    if (!conn.handshake()) return;
    for (int n = 1; !stopping; ++n) {
      received_request req;
      if (!conn.read_request(req)) break;
      req.connection = index;
      req.index_on_connection = n;
      {
        std::lock_guard lk(mu);
        log.push_back(req);
      }
      on_request(req, conn);
      if (conn.closing()) break;
    }
  }
};

scripted_server::scripted_server(handler h, std::optional<tls_setup> tls)
    : impl_(std::make_unique<impl>()) {
  impl_->on_request = std::move(h);
  if (tls) {
    impl_->tls.emplace(ssl::context::tls_server);
    auto& ctx = *impl_->tls;
    ctx.use_certificate_chain(net::buffer(tls->cert_pem));
    ctx.use_private_key(net::buffer(tls->key_pem), ssl::context::pem);
    if (!tls->client_ca_pem.empty()) {
      ctx.add_certificate_authority(net::buffer(tls->client_ca_pem));
      ctx.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
    }
  }
  tcp::endpoint ep(net::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor.open(ep.protocol());
  impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  impl_->acceptor.bind(ep);
  impl_->acceptor.listen();
  impl_->port = impl_->acceptor.local_endpoint().port();
  impl_->accept_thread = std::thread([this] { impl_->accept_loop(); });
}

scripted_server::~scripted_server() {
  impl_->stopping = true;
  // shutdown() wakes threads blocked in accept/read; close() alone would not.
  ::shutdown(impl_->acceptor.native_handle(), SHUT_RDWR);
  impl_->accept_thread.join();
  drop_connections();
  std::list<impl::live_conn> conns;
  {
    std::lock_guard lk(impl_->mu);
    conns.swap(impl_->conns);
  }
  for (auto& c : conns)
    if (c.thread.joinable()) c.thread.join();
}

std::uint16_t scripted_server::port() const { return impl_->port; }

std::string scripted_server::url() const {
  return std::string(impl_->tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(impl_->port);
}

std::vector<received_request> scripted_server::requests() const {
  std::lock_guard lk(impl_->mu);
  return impl_->log;
}

int scripted_server::connections() const {
  std::lock_guard lk(impl_->mu);
  return impl_->accepted;
}

void scripted_server::drop_connections() {
  std::lock_guard lk(impl_->mu);
  for (auto& c : impl_->conns)
    if (c.fd >= 0) ::shutdown(c.fd, SHUT_RDWR);
}

} // namespace kozmo::test
