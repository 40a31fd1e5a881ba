// Request → response logic of the embedded API server, free of any networking: the HTTP layer
// (server.hpp) hands every request here and writes what comes back. A watch request returns a
// watch_stream that the HTTP layer subscribes and streams; a followed pod log returns a
// log_stream that it polls.
#pragma once

#include "k8s/apiserver/http_types.hpp"
#include "k8s/apiserver/log_stream.hpp"
#include "k8s/apiserver/store.hpp"
#include "k8s/apiserver/watch_stream.hpp"

#include <memory>
#include <variant>

namespace kozmo::apiserver {

using route_result = std::variant<http_response, std::shared_ptr<watch_stream>, std::shared_ptr<log_stream>>;

class router {
public:
  // `pod_logs_root`: where pods/log reads the process runtime's logs ("" = none kept).
  explicit router(store& s, std::string pod_logs_root = {}) : store_(s), pod_logs_root_(std::move(pod_logs_root)) {}

  // Thread-safe: may be called concurrently from several connections.
  route_result handle(const http_request& req) const;

  store& backing_store() const { return store_; }

private:
  store& store_;
  std::string pod_logs_root_;
};

} // namespace kozmo::apiserver
