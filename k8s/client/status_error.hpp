// Turning an HTTP error answer into a kozmo::error a user can read.
#pragma once

#include "k8s/error.hpp"

#include <string_view>

namespace kozmo::client {

// The error for a response with `status` >= 400. A Kubernetes Status body gives the message,
// reason and code (`pods "x" not found`, NotFound, 404); any other body is used as the
// message (trimmed, shortened), and an empty one falls back to the status line
// ("503 Service Unavailable").
error error_from_response(int status, std::string_view reason_phrase, std::string_view body);

} // namespace kozmo::client
