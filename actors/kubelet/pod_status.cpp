#include "actors/kubelet/pod_status.hpp"

#include "k8s/model/time.hpp"

namespace kozmo::kubelet {

json::value pod_conditions_json(bool initialized, bool ready, bool finished, std::chrono::system_clock::time_point since) {
  auto cond = [&](const char* type, bool status, const char* reason) {
    json::value c;
    c["type"] = type;
    c["status"] = status ? "True" : "False";
    c["lastProbeTime"] = nullptr;
    c["lastTransitionTime"] = k8s::format_time(since);
    if (!status && reason)
      c["reason"] = reason;
    return c;
  };
  const char* not_ready = finished ? "PodCompleted" : "ContainersNotReady";
  json::array out;
  out.push_back(cond("Initialized", initialized, "ContainersNotInitialized"));
  out.push_back(cond("Ready", ready, not_ready));
  out.push_back(cond("ContainersReady", ready, not_ready));
  out.push_back(cond("PodScheduled", true, nullptr));
  return out;
}

json::value pod_status_head(const std::string& phase, json::value conditions, const std::string& host_ip,
                            const std::string& pod_ip, std::chrono::system_clock::time_point start) {
  json::value st;
  st["phase"] = phase;
  st["conditions"] = std::move(conditions);
  st["hostIP"] = host_ip;
  if (!pod_ip.empty()) {
    st["podIP"] = pod_ip;
    json::value ip;
    ip["ip"] = pod_ip;
    st["podIPs"] = json::array{ip};
  }
  st["startTime"] = k8s::format_time(start);
  return st;
}

} // namespace kozmo::kubelet
