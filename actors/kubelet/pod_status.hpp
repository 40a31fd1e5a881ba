// The parts of a pod's status every runtime of the simulated kubelet writes alike (the simulated
// pods of pod_lifecycle, the local processes of process_lifecycle). Pure.
#pragma once

#include "k8s/json/value.hpp"

#include <chrono>
#include <string>

namespace kozmo::kubelet {

// Initialized, Ready, ContainersReady and PodScheduled as a kubelet writes them, each last
// changed at `since`; not ready is "PodCompleted" once the pod has finished.
json::value pod_conditions_json(bool initialized, bool ready, bool finished, std::chrono::system_clock::time_point since);

// phase, conditions, hostIP, podIP and podIPs (when `pod_ip` is set) and startTime.
json::value pod_status_head(const std::string& phase, json::value conditions, const std::string& host_ip,
                            const std::string& pod_ip, std::chrono::system_clock::time_point start);

} // namespace kozmo::kubelet
