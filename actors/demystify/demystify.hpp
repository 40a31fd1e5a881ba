// Demystify: what a pod's status means for the work it runs, in plain words. A pod that waits
// forever on an image that cannot be pulled, a container killed for memory, a node that went
// away: each becomes an outcome (queued, initializing, running, succeeded, a failure that is
// worth retrying or not, the user's fault or the platform's), a short code and a message that
// says what happened and what to do. The rules are the peer's (its DemystifyPending /
// DemystifyFailure / DemystifySuccess / primary-container rules), with the grace periods users
// asked for. Pure: no CAF, no I/O, no clock (callers pass `now`).
//
// Shared by the task plugins (a task's pod) and the training controller (a job's pods).
#pragma once

#include "k8s/model/pod.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace kozmo::demystify {

using time_point = std::chrono::system_clock::time_point;
using std::chrono::milliseconds;

enum class outcome { queued, initializing, running, succeeded, retryable_failure, permanent_failure };
enum class fault { user, system };

struct verdict {
  outcome what = outcome::queued;
  fault whose = fault::user; // failures only
  bool cleanup = false;      // failures: the pod must be deleted (it would linger otherwise)
  std::string code;          // "Unschedulable", "ImagePullBackOff", "OOMKilled", ...
  std::string message;
  // A grace period or the pending timeout runs out then: look again at that time.
  std::optional<time_point> deadline;

  bool is_failure() const { return what == outcome::retryable_failure || what == outcome::permanent_failure; }
};

struct grace_periods {
  milliseconds create_container_error{std::chrono::minutes(3)};
  milliseconds create_container_config_error{std::chrono::minutes(3)};
  milliseconds image_pull_backoff{std::chrono::minutes(3)};
  milliseconds pending_timeout{0}; // 0: off
};

// A Pending pod: scheduled or not, its containers being created, or stuck.
verdict pending(const k8s::pod& pod, const grace_periods& grace, time_point now);
// A Failed pod. `primary` names the container whose SIGKILL is the platform's doing (an
// interrupted node); "" when every container counts alike.
verdict failed(const k8s::pod& pod, std::string_view primary);
// A Succeeded pod: succeeded, unless a container was OOM-killed.
verdict succeeded(const k8s::pod& pod, std::string_view primary);
// A pod task's outcome is its primary container's: running while it runs, then its exit.
verdict primary_container(const k8s::pod& pod, std::string_view primary);

// The whole reading of a pod by its phase. With `primary_decides`, a Running pod's outcome is
// its primary container's (a pod task with sidecars).
verdict of_pod(const k8s::pod& pod, std::string_view primary, bool primary_decides, const grace_periods& grace,
               time_point now);

// What a waiting container's reason means: initializing for a while, failed at once, or
// stuck past a grace period. The training controller reads stuck replicas with it.
enum class waiting_class { creating, image_pull, invalid_image, create_error, config_error, other };
waiting_class classify_waiting(std::string_view reason);

} // namespace kozmo::demystify
