// Reading a training pod's state: its replica, how it failed, whether it is stuck.
#pragma once

#include "actors/training/job_model.hpp"
#include "k8s/model/pod.hpp"

#include <optional>
#include <string>

namespace kozmo::training {

// The replica index label as a number; nullopt when missing or not a number.
std::optional<int> replica_index_of(const k8s::object_meta& meta);
// The replica type label (lowercase, as written on pods), "" when missing.
std::string replica_type_of(const k8s::object_meta& meta);

// The exit code of the kind's default container, or 0xbeef (the peer's "unknown", which
// counts as retryable) when it has not terminated.
inline constexpr int unknown_exit_code = 0xbeef;
int main_exit_code(const k8s::pod& pod, std::string_view default_container);
// ExitCode policy: 128 and above (signals, OOM kills, the unknown) are retried; 1-127 are
// the program's own verdict and are permanent.
inline bool is_retryable_exit_code(int code) { return code >= 128; }

// Whether a Failed pod of a replica with this policy is deleted and recreated.
bool restarts_after_failure(restart_policy policy, int exit_code);

// Container restarts the kubelet made in place (summed over init and main containers).
int container_restarts(const k8s::pod& pod);

// A pending pod that cannot start on its own.
struct stuck_pod {
  std::string reason;  // "ImagePullBackOff", "ErrImagePull", "InvalidImageName",
                       // "CreateContainerConfigError" or "Unschedulable"
  std::string message; // for users: what is wrong and what to fix
  bool unschedulable = false;
};
std::optional<stuck_pod> stuck_reason(const k8s::pod& pod);

} // namespace kozmo::training
