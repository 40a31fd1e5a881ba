// metav1.Status: the body of an API error, and the object of a watch ERROR event
// ({"kind":"Status","status":"Failure","reason":"Expired","code":410,...}).
#pragma once

#include "k8s/error.hpp"
#include "k8s/json/value.hpp"

#include <cstdint>
#include <string>

namespace kozmo::k8s {

struct api_status {
  std::string status;  // "Success" or "Failure"
  std::string message;
  std::string reason;  // "NotFound", "Expired", ...
  std::int32_t code = 0;
  json::value details; // null when absent

  // A kozmo::error carrying the message, code and reason.
  error to_error() const { return error{message, code, reason}; }
  // 410 Gone: the resourceVersion is too old; the watcher must relist.
  bool is_gone() const { return code == 410 || reason == "Expired" || reason == "Gone"; }
  friend bool operator==(const api_status&, const api_status&) = default;
};

} // namespace kozmo::k8s
