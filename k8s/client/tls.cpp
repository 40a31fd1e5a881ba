// TLS for the client: the context built from the config, the handshake with server
// verification (CA + host name or IP SAN), and the TLS byte stream.
#include "k8s/client/detail/transport.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace kozmo::client::detail {
namespace ssl = net::ssl;

namespace {

class tls_stream final : public byte_stream {
public:
  tls_stream(tcp::socket sock, ssl::context& ctx) : s_(std::move(sock), ctx) {}

  net::awaitable<std::size_t> read_some(net::mutable_buffer buf, sys_error& ec) override {
    co_return co_await s_.async_read_some(buf, net::redirect_error(net::use_awaitable, ec));
  }
  net::awaitable<void> write_all(net::const_buffer buf, sys_error& ec) override {
    co_await net::async_write(s_, buf, net::redirect_error(net::use_awaitable, ec));
  }
  tcp::socket& socket() override { return s_.next_layer(); }
  bool is_tls() const override { return true; }

  ssl::stream<tcp::socket>& ssl_stream() { return s_; }

private:
  ssl::stream<tcp::socket> s_;
};

// The error queue's first message, for a context set-up failure.
std::string openssl_error(const sys_error& ec) {
  std::string msg = describe(ec);
  return msg.empty() ? "invalid PEM data" : msg;
}

bool is_ip_address(const std::string& host) {
  sys_error ec;
  net::ip::make_address(host, ec);
  return !ec;
}

} // namespace

bool is_tls_failure(const sys_error& ec) {
  if (ec == ssl::error::stream_truncated) return false;
  return ec.category() == net::error::get_ssl_category() ||
         ec.category() == ssl::error::get_stream_category();
}

expected<std::shared_ptr<ssl::context>> make_tls_context(const config& cfg) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  sys_error ec;
  if (cfg.insecure_skip_tls_verify) {
    ctx->set_verify_mode(ssl::verify_none);
  } else {
    ctx->set_verify_mode(ssl::verify_peer);
    if (!cfg.ca_pem.empty()) {
      ctx->add_certificate_authority(net::buffer(cfg.ca_pem), ec);
      if (ec) return error{"certificate authority: " + openssl_error(ec)};
    } else {
      ctx->set_default_verify_paths(ec);
      if (ec) return error{"system certificate authorities: " + openssl_error(ec)};
    }
  }
  if (!cfg.client_cert_pem.empty() || !cfg.client_key_pem.empty()) {
    if (cfg.client_cert_pem.empty() || cfg.client_key_pem.empty())
      return error{"client certificate and client key must be given together"};
    ctx->use_certificate_chain(net::buffer(cfg.client_cert_pem), ec);
    if (ec) return error{"client certificate: " + openssl_error(ec)};
    ctx->use_private_key(net::buffer(cfg.client_key_pem), ssl::context::pem, ec);
    if (ec) return error{"client key: " + openssl_error(ec)};
    if (SSL_CTX_check_private_key(ctx->native_handle()) != 1)
      return error{"client key does not match the client certificate"};
  }
  return ctx;
}

std::unique_ptr<byte_stream> make_tls_stream(tcp::socket sock, ssl::context& ctx) {
  return std::make_unique<tls_stream>(std::move(sock), ctx);
}

net::awaitable<expected<ok_t>> tls_handshake(byte_stream& stream, const std::string& verify_name,
                                             bool insecure, const std::string& authority,
                                             sys_error& failure) {
  auto& s = static_cast<tls_stream&>(stream).ssl_stream();
  SSL* native = s.native_handle();
  bool ip = is_ip_address(verify_name);
  // SNI carries names only (RFC 6066 forbids IP literals).
  if (!ip && !verify_name.empty()) SSL_set_tlsext_host_name(native, verify_name.c_str());
  if (!insecure) {
    X509_VERIFY_PARAM* param = SSL_get0_param(native);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    int rc = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, verify_name.c_str())
                : X509_VERIFY_PARAM_set1_host(param, verify_name.c_str(), 0);
    if (rc != 1) co_return error{"tls: cannot verify server name \"" + verify_name + "\""};
  }
  sys_error ec;
  co_await s.async_handshake(ssl::stream_base::client, net::redirect_error(net::use_awaitable, ec));
  if (!ec) co_return ok;
  failure = ec;
  std::string msg = "tls handshake with " + authority + ": " + describe(ec);
  long verify = SSL_get_verify_result(native);
  if (verify != X509_V_OK) {
    msg += ": ";
    msg += X509_verify_cert_error_string(verify);
  }
  co_return error{std::move(msg)};
}

} // namespace kozmo::client::detail
