// Patches of a pod's status that schedulers send, built in one place.
#pragma once

#include "k8s/json/value.hpp"

#include <string>

namespace kozmo::k8s {

// The strategic merge patch that sets PodScheduled=False with `reason` ("Unschedulable",
// "InvalidSchedulingSpec") and `message`, as kube-scheduler writes it for a pod it cannot place.
inline json::value pod_scheduled_false(const std::string& reason, const std::string& message) {
  json::value cond;
  cond["type"] = "PodScheduled";
  cond["status"] = "False";
  cond["reason"] = reason;
  cond["message"] = message;
  cond["lastProbeTime"] = nullptr;
  json::value body;
  body["status"]["conditions"] = json::array{cond};
  return body;
}

} // namespace kozmo::k8s
