// What a pod's annotations script for its life on a simulated node.
//
// Tests and demos steer the simulated kubelet with annotations on the pod (documented in
// docs/local.md, "Scripting a pod's life on simulated nodes"). Every key is optional; a pod without any runs for `run_duration` and exits 0.
//
//   kozmo.io/sim-duration         how long containers run: "5s", "250ms", "2m", or "forever"
//   kozmo.io/sim-pull-duration    time spent in ContainerCreating before the start ("500ms")
//   kozmo.io/sim-exit-code        exit code of the main containers (default 0)
//   kozmo.io/sim-fail-times       only the first N runs exit with sim-exit-code; later runs exit 0
//   kozmo.io/sim-fail             ImagePullBackOff | ErrImagePull | InvalidImageName |
//                                 CreateContainerConfigError | OOMKilled
//   kozmo.io/sim-restart-backoff  first restart back-off under OnFailure/Always ("10s" like a
//                                 kubelet; doubles per restart, capped at 5 minutes)
//   kozmo.io/sim-stop-duration    time containers take to stop after a delete (capped by the
//                                 pod's grace period; default 0)
#pragma once

#include "k8s/error.hpp"
#include "k8s/model/kozmo_keys.hpp"

#include <chrono>
#include <map>
#include <string>
#include <string_view>

namespace kozmo::kubelet {

using duration = std::chrono::milliseconds;

enum class scripted_failure {
  none,
  image_pull_backoff,          // ErrImagePull, then ImagePullBackOff, forever
  invalid_image_name,          // InvalidImageName, forever
  create_container_config_error,
  oom_killed,                  // runs, then is killed with exit 137 reason OOMKilled
};

struct pod_script {
  duration pull_duration{500};
  duration run_duration{2000};
  bool run_forever = false;
  int exit_code = 0;
  int fail_times = -1; // -1: every run exits with exit_code
  scripted_failure failure = scripted_failure::none;
  duration restart_backoff{10000};
  duration stop_duration{0};
  // The waiting message of a create_container_config_error (a real kubelet's, such as
  // `secret "db" not found`); empty: a generic one.
  std::string failure_message;
};

inline constexpr std::string_view annotation_prefix = keys::sim_prefix;

// Reads the kozmo.io/sim-* annotations. Unknown kozmo.io/sim-* keys and malformed values are
// errors that name the annotation and say what is accepted.
expected<pod_script> parse_pod_script(const std::map<std::string, std::string>& annotations);

// "250ms", "5s", "2m", "1h", "1.5s" → milliseconds. Go's time.ParseDuration subset.
expected<duration> parse_duration(std::string_view text);

} // namespace kozmo::kubelet
