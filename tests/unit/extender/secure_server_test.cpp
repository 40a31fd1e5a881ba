// The HTTP server with TLS and an access check, over a real socket, called by Kozmo's own
// client (which verifies the server's certificate against the CA it is given): the self-signed
// certificate is accepted for 127.0.0.1, a refused caller gets the check's status and message, an
// accepted one the page, and plain HTTP gets no answer.
#include "actors/extender/extender_server.hpp"
#include "k8s/serve/pki.hpp"
#include "k8s/client/client.hpp"
#include "tests/support/raw_http.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <vector>

using namespace kozmo;
using namespace kozmo::extender;
using kozmo::serve::pem_identity;
using kozmo::serve::self_signed_identity;

namespace {

class metrics_only final : public extender_backend {
public:
  void filter(filter_args, reply_fn<filter_result> done) override { done(error::not_found("no")); }
  void preempt(preempt_args, reply_fn<preempt_result> done) override { done(error::not_found("no")); }
  void bind(bind_args, reply_fn<bind_result> done) override { done(error::not_found("no")); }
  void inspect(std::string, inspect_fn done) override { done({200, "{}"}); }
};

// Lets "Bearer good" through, refuses "Bearer weak" with 403 and anything else with 401; counts
// what it was asked.
access_check token_check(std::atomic<int>& asked) {
  return [&asked](access_request req, std::function<void(access_verdict)> done) {
    ++asked;
    if (req.authorization == "Bearer good")
      return done({});
    if (req.authorization == "Bearer weak")
      return done({403, "Forbidden: user \"weak\" may not " + req.method + " " + req.target});
    done({401, "Unauthorized"});
  };
}

struct answer {
  int status = 0; // 0: no HTTP answer (TLS or connection failure)
  std::string body;
};

// The client reports a non-2xx answer as an error carrying the status and the body.
answer get_with(const client::config& base, unsigned short port, const std::string& path) {
  client::config cfg = base;
  cfg.server = "https://127.0.0.1:" + std::to_string(port);
  cfg.max_retries = 0;
  client::client cli(cfg);
  auto r = cli.send_sync({"GET", path, "", "application/json", "*/*", client::lane::normal});
  if (r)
    return {r->status, r->body};
  return {r.err().code, r.err().message};
}

answer get(unsigned short port, const std::string& ca, const std::string& token, const std::string& path) {
  client::config cfg;
  cfg.ca_pem = ca;
  cfg.token = token;
  return get_with(cfg, port, path);
}

} // namespace

TEST_CASE("A self-signed serving certificate is PEM, with a fresh key each time") {
  auto id = self_signed_identity("kozmo-controller", {"localhost", "kozmo.example"}, {"127.0.0.1"});
  REQUIRE(id);
  CHECK(id->cert_pem.rfind("-----BEGIN CERTIFICATE-----", 0) == 0);
  CHECK(id->key_pem.rfind("-----BEGIN PRIVATE KEY-----", 0) == 0);
  auto other = self_signed_identity("kozmo-controller", {"localhost"}, {"127.0.0.1"});
  REQUIRE(other);
  CHECK(other->key_pem != id->key_pem); // a fresh key every time
}

TEST_CASE("Over TLS, the access check decides who gets /metrics") {
  auto id = self_signed_identity("kozmo-controller", {"localhost"}, {"127.0.0.1"});
  REQUIRE(id);
  std::atomic<int> asked{0};
  server_options so;
  so.tls = tls_options{id->cert_pem, id->key_pem, ""};
  so.authorize = token_check(asked);
  so.routes = {route_kind::metrics, route_kind::inspect};
  extender_server srv(std::make_shared<metrics_only>(), so);
  auto port = srv.start();
  REQUIRE(port);

  auto none = get(*port, id->cert_pem, "", "/metrics");
  CHECK(none.status == 401);
  CHECK(none.body.find("Unauthorized") != std::string::npos);

  auto weak = get(*port, id->cert_pem, "weak", "/metrics");
  CHECK(weak.status == 403);
  CHECK(weak.body.find("may not GET /metrics") != std::string::npos);

  auto good = get(*port, id->cert_pem, "good", "/metrics");
  CHECK(good.status == 200);
  auto inspect = get(*port, id->cert_pem, "good", "/v1/inspect/clusterstatus");
  CHECK(inspect.status == 200);
  CHECK(inspect.body == "{}");
  CHECK(asked == 4);

  // A path this server does not serve is 404 without asking anyone.
  CHECK(get(*port, id->cert_pem, "", "/healthz").status == 404);
  CHECK(asked == 4);
}

TEST_CASE("A TLS server does not answer plain HTTP, and a client that does not trust it gets nothing") {
  auto id = self_signed_identity("kozmo-controller", {"localhost"}, {"127.0.0.1"});
  REQUIRE(id);
  server_options so;
  so.tls = tls_options{id->cert_pem, id->key_pem, ""};
  extender_server srv(std::make_shared<metrics_only>(), so);
  auto port = srv.start();
  REQUIRE(port);

  kozmo::test::raw_connection plain(*port);
  REQUIRE(plain.connected());
  CHECK(plain.request("GET", "/healthz").status == 0);

  auto stranger = self_signed_identity("someone-else", {"localhost"}, {"127.0.0.1"});
  REQUIRE(stranger);
  auto untrusted = get(*port, stranger->cert_pem, "", "/healthz");
  CHECK(untrusted.status == 0); // the certificate is not one the client trusts: no answer
  CHECK(untrusted.body.find("certificate") != std::string::npos);

  // The server still serves callers that trust it.
  CHECK(get(*port, id->cert_pem, "", "/healthz").status == 200);
}

TEST_CASE("A server refuses a key that does not match its certificate") {
  auto a = self_signed_identity("a", {"localhost"}, {});
  auto b = self_signed_identity("b", {"localhost"}, {});
  REQUIRE(a);
  REQUIRE(b);
  server_options so;
  so.tls = tls_options{a->cert_pem, b->key_pem, ""};
  extender_server srv(std::make_shared<metrics_only>(), so);
  auto port = srv.start();
  REQUIRE_FALSE(port);
  INFO(port.err().message);
  CHECK(port.err().message.find("serving key") != std::string::npos);
}

TEST_CASE("With a client CA, a caller's certificate counts only when that CA vouches for it") {
  auto id = self_signed_identity("kozmo-controller", {"localhost"}, {"127.0.0.1"});
  auto scheduler = self_signed_identity("kube-scheduler", {}, {}, true);
  auto stranger = self_signed_identity("kube-scheduler", {}, {}, true);
  REQUIRE(id);
  REQUIRE(scheduler);
  REQUIRE(stranger);
  std::vector<bool> seen;
  std::mutex m;
  server_options so;
  so.tls = tls_options{id->cert_pem, id->key_pem, scheduler->cert_pem};
  so.authorize = [&](access_request req, std::function<void(access_verdict)> done) {
    {
      std::lock_guard lock(m);
      seen.push_back(req.client_certificate);
    }
    done(req.client_certificate ? access_verdict{} : access_verdict{401, "Unauthorized"});
  };
  extender_server srv(std::make_shared<metrics_only>(), so);
  auto port = srv.start();
  REQUIRE(port);
  auto call = [&](const pem_identity* as) {
    client::config cfg;
    cfg.ca_pem = id->cert_pem;
    if (as) {
      cfg.client_cert_pem = as->cert_pem;
      cfg.client_key_pem = as->key_pem;
    }
    return get_with(cfg, *port, "/metrics").status;
  };
  CHECK(call(&*scheduler) == 200);
  CHECK(call(nullptr) == 401);
  CHECK(call(&*stranger) == 401);
  std::lock_guard lock(m);
  CHECK(seen == std::vector<bool>{true, false, false});
}
