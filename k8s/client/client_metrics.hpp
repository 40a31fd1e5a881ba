// The client's Prometheus metrics (k8s/metrics/registry.hpp).
#pragma once

#include <string_view>

namespace kozmo::client {

// kozmo_client_requests_total{method, code}: one per attempt. `method` is the HTTP method
// (GET, POST, PUT, PATCH, DELETE; anything else: "other"); `status` the HTTP status, giving
// code="2xx" | "3xx" | "4xx" | "5xx", or 0 when no answer came (connection, TLS, timeout):
// code="error".
void count_request(std::string_view method, int status);

} // namespace kozmo::client
