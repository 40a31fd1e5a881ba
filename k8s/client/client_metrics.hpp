// The client's Prometheus metrics (k8s/metrics/registry.hpp).
#pragma once

#include <string_view>

namespace kozmo::client {

// kozmo_client_requests_total{method, code}: one per attempt. `method` is the HTTP method
// (GET, POST, PUT, PATCH, DELETE; anything else: "other"); `status` the HTTP status, giving
// code="2xx" | "3xx" | "4xx" | "5xx", or 0 when no answer came (connection, TLS, timeout):
// code="error".
void count_request(std::string_view method, int status);

// client-go's names, for the dashboards operators have:
//   rest_client_requests_total{code,method,host}: one per attempt; code is the HTTP status
//     ("200", "409") or "<error>" when no answer came; method as above;
//   rest_client_request_duration_seconds{verb,host}: the attempt's time on the wire (verb is
//     the HTTP method, as client-go labels it).
// `host` is the API server's "host:port" (one per client configuration, so a handful).
void observe_request(std::string_view host, std::string_view method, int status, double seconds);

// kozmo_watch_relists_total{resource}: a watch's resourceVersion expired (410 Gone) and it
// listed everything again. `resource` is "pods", "pytorchjobs.kubeflow.org", ...
void count_relist(std::string_view resource);

} // namespace kozmo::client
