// The extender's HTTP/1.1 server (Beast, hidden behind a pimpl): it carries Kozmo's HTTP API
// (http_api.hpp: kube-scheduler's extender verbs, HiveD's inspect views, /healthz, /metrics),
// answered by an extender_backend. Connections are kept alive; 413 for a body over the limit,
// 504 when the backend does not answer in time.
//
// Threading: one io thread. Backend calls are made on it; their answers may come from any
// thread at any time (they are posted back to the io thread). Answers that arrive after stop()
// are dropped. The backend must outlive the server.
#pragma once

#include "actors/extender/extender_backend.hpp"
#include "actors/extender/http_api.hpp"
#include "k8s/error.hpp"
#include "k8s/serve/limits.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kozmo::extender {

// TLS on the server's port (PEM text). With a client CA the server asks every caller for a
// certificate and accepts those signed by it (mutual TLS, as kube-scheduler's extender
// tlsConfig presents one); callers without a certificate are still served, subject to `authorize`.
struct tls_options {
  std::string cert_pem;      // the server's certificate (chain)
  std::string key_pem;       // its private key
  std::string client_ca_pem; // "" = no client certificates asked for
};

// One request as the access check sees it.
struct access_request {
  std::string method;
  std::string target;
  std::string authorization;       // the Authorization header ("" if none)
  bool client_certificate = false; // a client certificate signed by tls_options::client_ca_pem
};
// status 0: let it through; else the status (401, 403, 503) and why.
struct access_verdict {
  unsigned status = 0;
  std::string message;
};
// Called once per request before it is served; answers exactly once, on any thread.
using access_check = std::function<void(access_request, std::function<void(access_verdict)>)>;

inline serve::limits extender_limits() {
  serve::limits l;
  l.idle_timeout = std::chrono::minutes(10);
  return l;
}

struct server_options {
  std::string address = "127.0.0.1"; // "0.0.0.0" for every interface
  unsigned short port = 0;            // 0: a free port (see extender_server::port())
  std::size_t body_limit = 16 * 1024 * 1024; // a filter request with a NodeList can be large
  std::chrono::milliseconds backend_timeout{30000};
  // Connections, timeouts and head size (serve/limits.hpp: kube-apiserver's), but for the idle
  // time between requests: 10 minutes, on purpose, since kube-scheduler's HTTP client does not
  // retry a POST that raced with a server-side close.
  serve::limits limits = extender_limits();
  // The routes this server answers (http_api.hpp); others get 404. Empty: every route.
  std::vector<route_kind> routes;
  // Serve TLS instead of plain HTTP.
  std::optional<tls_options> tls;
  // Who may call (delegated_auth.hpp: TokenReview + SubjectAccessReview). Null: anyone.
  access_check authorize;
};

class extender_server {
public:
  extender_server(std::shared_ptr<extender_backend> backend, server_options opts);
  ~extender_server(); // stop()
  extender_server(const extender_server&) = delete;
  extender_server& operator=(const extender_server&) = delete;

  // Binds and starts serving; the port actually bound.
  expected<unsigned short> start();
  // Stops accepting, drops open connections and pending answers, joins the io thread. Idempotent.
  void stop();
  unsigned short port() const;
  // Connections held now (server_options::limits bounds them).
  std::size_t open_connections() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace kozmo::extender
