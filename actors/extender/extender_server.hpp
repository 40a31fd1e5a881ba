// The extender's HTTP/1.1 server (Beast, hidden behind a pimpl): kube-scheduler's extender
// verbs and HiveD's inspect views, answered by an extender_backend.
//
//   POST /v1/extender/filter | preempt | bind        ExtenderArgs / PreemptionArgs / BindingArgs
//   GET  /v1/inspect/affinitygroups/[{name}]         HiveD's inspect views (JSON)
//   GET  /v1/inspect/clusterstatus[/physicalcluster | /virtualclusters/[{vc}]]
//   GET  /healthz                                    "ok"
//   GET  /metrics                                    Prometheus text (k8s/metrics/registry.hpp)
//
// Errors are HiveD's {"code": N, "message": "..."} with that HTTP status: 400 for a body that
// cannot be read, 404 for an unknown path, 405 for a wrong method, 413 for a body over the
// limit, 504 when the backend does not answer in time. Connections are kept alive.
//
// Threading: one io thread. Backend calls are made on it; their answers may come from any
// thread at any time (they are posted back to the io thread). Answers that arrive after stop()
// are dropped. The backend must outlive the server.
#pragma once

#include "actors/extender/extender_backend.hpp"
#include "k8s/error.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace kozmo::extender {

struct server_options {
  std::string address = "127.0.0.1"; // "0.0.0.0" for every interface
  unsigned short port = 0;            // 0: a free port (see extender_server::port())
  std::size_t body_limit = 16 * 1024 * 1024; // a filter request with a NodeList can be large
  std::chrono::milliseconds backend_timeout{30000};
  // Idle keep-alive connections are closed after this long. Long on purpose: kube-scheduler's
  // HTTP client does not retry a POST that raced with a server-side close.
  std::chrono::milliseconds idle_timeout{600000};
};

// Where a request goes (pure; exposed for tests).
enum class route_kind { filter, preempt, bind, inspect, healthz, not_found, method_not_allowed, metrics };
struct route {
  route_kind kind = route_kind::not_found;
  inspect_query query; // for inspect
};
route route_of(std::string_view method, std::string_view target);

// "127.0.0.1:30096", ":30096", "0.0.0.0:0" -> (address, port); an empty host means 0.0.0.0.
expected<std::pair<std::string, unsigned short>> parse_listen(std::string_view text);

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

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace kozmo::extender
