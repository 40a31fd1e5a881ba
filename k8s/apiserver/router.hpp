// Request → response logic of the embedded API server, free of any networking: the HTTP layer
// (server.hpp) hands every request here and writes what comes back. A watch request returns a
// watch_stream that the HTTP layer subscribes and streams.
#pragma once

#include "k8s/apiserver/http_types.hpp"
#include "k8s/apiserver/store.hpp"
#include "k8s/apiserver/watch_stream.hpp"

#include <memory>
#include <variant>

namespace kozmo::apiserver {

using route_result = std::variant<http_response, std::shared_ptr<watch_stream>>;

class router {
public:
  explicit router(store& s) : store_(s) {}

  // Thread-safe: may be called concurrently from several connections.
  route_result handle(const http_request& req) const;

  store& backing_store() const { return store_; }

private:
  store& store_;
};

} // namespace kozmo::apiserver
