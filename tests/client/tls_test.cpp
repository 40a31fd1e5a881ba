// TLS: server verification against a CA, host name / IP checks, insecure mode, and client
// certificate authentication, with certificates made by openssl at test time.
#include "k8s/client/client.hpp"
#include "tests/client/support/scripted_server.hpp"
#include "tests/client/support/tls_material.hpp"
#include "tests/client/support/waiting.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace kozmo;
using namespace kozmo::client;
using kozmo::test::received_request;
using kozmo::test::scripted_server;
using kozmo::test::server_connection;
using kozmo::test::test_tls_material;
using kozmo::test::tls_setup;

namespace {

tls_setup server_tls(bool require_client_cert = false) {
  const auto& m = test_tls_material();
  return tls_setup{m.server_cert_pem, m.server_key_pem, require_client_cert ? m.ca_pem : ""};
}

void answer_with_subject(const received_request&, server_connection& c) {
  c.respond(200, R"({"subject":")" + c.client_subject() + "\"}");
}

config tls_config(const scripted_server& s) {
  config cfg;
  cfg.server = s.url();
  cfg.ca_pem = test_tls_material().ca_pem;
  cfg.max_retries = 0;
  return cfg;
}

} // namespace

TEST_CASE("a server certificate signed by the configured CA is accepted", "[tls]") {
  scripted_server server(answer_with_subject, server_tls());
  kozmo::client::client k(tls_config(server));
  auto r = k.send_sync(request{"GET", "/version"});
  REQUIRE(r);
  CHECK(r->status == 200);
  // Keep-alive works over TLS too.
  REQUIRE(k.send_sync(request{"GET", "/version"}));
  CHECK(server.connections() == 1);
}

TEST_CASE("a server certificate from another CA is refused with a clear error", "[tls]") {
  scripted_server server(answer_with_subject, server_tls());
  auto cfg = tls_config(server);
  cfg.ca_pem = test_tls_material().other_ca_pem;
  cfg.max_retries = 3;
  kozmo::client::client k(cfg);
  auto r = k.send_sync(request{"GET", "/version"});
  REQUIRE_FALSE(r);
  const std::string& msg = r.err().message;
  INFO(msg);
  CHECK(msg.find("tls handshake with 127.0.0.1:" + std::to_string(server.port())) == 0);
  CHECK(msg.find("certificate verify failed") != std::string::npos);
  CHECK(server.requests().empty());
  // A bad certificate is not retried.
  CHECK(server.connections() == 1);
}

TEST_CASE("the certificate must name the host the client asked for", "[tls]") {
  scripted_server server(answer_with_subject, server_tls());
  auto cfg = tls_config(server);
  cfg.tls_server_name = "api.example.com";
  kozmo::client::client wrong(cfg);
  auto r = wrong.send_sync(request{"GET", "/version"});
  REQUIRE_FALSE(r);
  INFO(r.err().message);
  CHECK(r.err().message.find("hostname mismatch") != std::string::npos);

  cfg.tls_server_name = "localhost";  // a DNS SAN of the test certificate
  kozmo::client::client right(cfg);
  CHECK(right.send_sync(request{"GET", "/version"}));
}

TEST_CASE("insecure-skip-tls-verify talks to a server whose CA is unknown", "[tls]") {
  scripted_server server(answer_with_subject, server_tls());
  config cfg;
  cfg.server = server.url();
  cfg.insecure_skip_tls_verify = true;
  kozmo::client::client k(cfg);
  auto r = k.send_sync(request{"GET", "/version"});
  REQUIRE(r);
  CHECK(r->status == 200);
}

TEST_CASE("a server that requires a client certificate accepts ours and refuses none",
          "[tls]") {
  scripted_server server(answer_with_subject, server_tls(true));
  const auto& m = test_tls_material();

  auto with_cert = tls_config(server);
  with_cert.client_cert_pem = m.client_cert_pem;
  with_cert.client_key_pem = m.client_key_pem;
  kozmo::client::client good(with_cert);
  auto r = good.send_sync(request{"GET", "/api"});
  REQUIRE(r);
  CHECK(r->body.find("CN=kozmo-test-client") != std::string::npos);

  auto without = tls_config(server);
  without.max_retries = 3;
  kozmo::client::client bad(without);
  auto refused = bad.send_sync(request{"GET", "/api"});
  REQUIRE_FALSE(refused);
  INFO(refused.err().message);
  CHECK(refused.err().code == 0);
  CHECK(refused.err().message.find("certificate required") != std::string::npos);
}

TEST_CASE("a kubeconfig with certificate files next to it drives a TLS client", "[tls]") {
  scripted_server server(answer_with_subject, server_tls(true));
  const auto& m = test_tls_material();
  std::string dir = kozmo::test::make_temp_dir();
  std::filesystem::create_directories(dir + "/certs");
  kozmo::test::spit(dir + "/certs/ca.crt", m.ca_pem);
  kozmo::test::spit(dir + "/certs/me.crt", m.client_cert_pem);
  kozmo::test::spit(dir + "/certs/me.key", m.client_key_pem);
  kozmo::test::spit(dir + "/kubeconfig", "apiVersion: v1\nkind: Config\ncurrent-context: local\n"
                                         "clusters:\n- name: local\n  cluster:\n    server: " +
                                             server.url() +
                                             "\n    certificate-authority: certs/ca.crt\n"
                                             "users:\n- name: me\n  user:\n"
                                             "    client-certificate: certs/me.crt\n"
                                             "    client-key: certs/me.key\n"
                                             "contexts:\n- name: local\n  context: {cluster: local, user: me}\n");
  auto cfg = load_kubeconfig(dir + "/kubeconfig");
  REQUIRE(cfg);
  kozmo::client::client k(*cfg);
  auto r = k.send_sync(request{"GET", "/api"});
  REQUIRE(r);
  CHECK(r->body.find("CN=kozmo-test-client") != std::string::npos);
}

TEST_CASE("watches stream over TLS", "[tls]") {
  scripted_server server([](const received_request&, server_connection& c) {
    c.start_chunked(200);
    c.send_chunk("{\"type\":\"ADDED\",");
    c.send_chunk("\"object\":{}}\n");
    c.end_chunks();
  }, server_tls());
  kozmo::client::client k(tls_config(server));
  kozmo::test::mailbox<std::string> lines;
  kozmo::test::mailbox<bool> ended;
  k.watch({"", "v1", "pods"}, {}, [&](std::string_view l) { lines.put(std::string(l)); },
          [&](expected<ok_t> how) { ended.put(how.has_value()); });
  auto clean = ended.take();
  REQUIRE(clean);
  CHECK(*clean);
  CHECK(lines.take() == std::string("{\"type\":\"ADDED\",\"object\":{}}"));
}

TEST_CASE("broken TLS material is reported by the first request", "[tls]") {
  config cfg;
  cfg.server = "https://127.0.0.1:1";
  cfg.ca_pem = "not a certificate";
  kozmo::client::client k(cfg);
  auto r = k.send_sync(request{"GET", "/"});
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("tls for https://127.0.0.1:1: certificate authority:") == 0);
}
