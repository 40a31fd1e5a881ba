// Kozmo's HTTP API beside the Kubernetes one, whatever server carries it: the extender's own
// server (extender_server.hpp: kube-scheduler's verbs, inspect, /healthz, /metrics) and the
// embedded API server's routes in `kozmo local` (inspect and /metrics on its port). One router
// and one answering function, so that every front door answers alike. Pure: no Beast, no CAF.
//
//   POST /v1/extender/filter | preempt | bind        ExtenderArgs / PreemptionArgs / BindingArgs
//   GET  /v1/inspect/...                             HiveD's inspect views (inspect_api.hpp)
//   GET  /healthz                                    "ok"
//   GET  /readyz                                     "ok", or 503 with the backend's reason
//   GET  /metrics                                    Prometheus text (k8s/metrics/registry.hpp)
//   GET  /ui/...                                     the cell map page (ui/ui_assets.hpp), no credential
//
// Errors are HiveD's {"code": N, "message": "..."} with that HTTP status: 400 for a body that
// cannot be read, 404 for an unknown path, 405 for a wrong method.
#pragma once

#include "actors/extender/extender_backend.hpp"
#include "k8s/error.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace kozmo::extender {

// Where a request goes.
enum class route_kind { filter, preempt, bind, inspect, healthz, readyz, not_found, method_not_allowed, metrics, ui };
struct route {
  route_kind kind = route_kind::not_found;
  inspect_query query; // for inspect
};
route route_of(std::string_view method, std::string_view target);

struct http_answer {
  unsigned status = 200;
  std::string body;
  const char* content_type = "application/json";
};

http_answer error_answer(const error& e);

// Answers one request through `backend`; `done` is called exactly once, on any thread. The
// backend's own errors become HiveD's error bodies; a backend that throws answers 500.
void serve_request(extender_backend& backend, std::string_view method, std::string_view target,
                   const std::string& body, std::function<void(http_answer)> done);

// "127.0.0.1:30096", ":30096", "0.0.0.0:0" -> (address, port); an empty host means 0.0.0.0.
expected<std::pair<std::string, unsigned short>> parse_listen(std::string_view text);

// Whether a listen host is reachable from this machine only (127.0.0.0/8, ::1, localhost).
bool is_loopback(std::string_view host);

} // namespace kozmo::extender
