// The life of one pod on a simulated node, as a pure state machine.
//
//   ContainerCreating ──pull──▶ Running ──run──▶ terminated ─┬─▶ Succeeded / Failed (final)
//        │                        ▲                          └─▶ CrashLoopBackOff ──backoff──┘
//        └─▶ ErrImagePull → ImagePullBackOff / InvalidImageName / CreateContainerConfigError (stay)
//   any stage ──delete──▶ stopping ──stop──▶ gone (the actor removes the pod with grace 0)
//
// The kubelet actor owns one `pod_lifecycle` per pod, calls `advance()` when the delay it
// returned has passed, and writes `status_json()` to the pod's status subresource. Restart
// rules follow the kubelet: Always restarts every exit, OnFailure only non-zero exits, Never
// none; the back-off doubles per restart up to five minutes.
#pragma once

#include "actors/kubelet/pod_script.hpp"
#include "k8s/json/value.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace kozmo::kubelet {

using clock = std::chrono::system_clock;

// The parts of a pod the simulation needs (filled by the actor from the typed model).
struct sim_pod {
  struct container {
    std::string name;
    std::string image;
  };
  std::string uid;
  std::vector<container> init_containers;
  std::vector<container> containers;
  std::string restart_policy = "Always";
  std::string host_ip;
  std::string pod_ip;
};

enum class stage {
  creating,        // ContainerCreating
  image_pull_error,// ErrImagePull (moves on to ImagePullBackOff)
  stuck,           // a waiting reason that never resolves on its own
  running,
  backoff,         // CrashLoopBackOff before the next run
  finished,        // Succeeded or Failed; nothing more happens
  stopping,        // deletion requested; containers stopping
  gone,            // stopped; the actor deletes the pod object
};

class pod_lifecycle {
public:
  pod_lifecycle(sim_pod pod, pod_script script, clock::time_point now);

  // Moves to the next stage if its time has come. Returns the delay until the next
  // transition, or nothing when the pod is stable (final, stuck, or running forever).
  std::optional<duration> advance(clock::time_point now);

  // A pod that was Running when this kubelet restarted keeps its time: it runs on from
  // `started` (its container's startedAt) with `restarts` restarts behind it, instead of starting
  // over (every pod would otherwise end at once, long after it should). Returns the delay until
  // its run ends (zero when that time has passed), nothing when it runs forever.
  std::optional<duration> resume_running(clock::time_point started, int restarts, clock::time_point now);

  // Deletion was requested with this grace period. Returns the delay until the containers
  // have stopped (advance() then moves to `gone`).
  duration begin_stop(clock::time_point now, duration grace);

  stage current() const { return stage_; }
  // "Pending", "Running", "Succeeded" or "Failed".
  std::string phase() const;
  // The full `status` object for the pod's status subresource.
  json::value status_json() const;
  // The delay before the first transition, for the actor's first timer.
  duration first_delay() const { return script_.pull_duration; }
  // False when an image name does not parse: the pod stays InvalidImageName and nothing is pulled.
  bool pulls_images() const { return !image_error_; }

private:
  struct termination {
    int exit_code = 0;
    std::string reason;
    clock::time_point started;
    clock::time_point finished;
  };

  void terminate_run(clock::time_point now);
  duration backoff_delay() const;
  json::value container_status(const sim_pod::container& c, bool init) const;
  json::value conditions() const;

  sim_pod pod_;
  pod_script script_;
  std::optional<std::string> image_error_; // the kubelet's message for the first unparseable image
  stage stage_ = stage::creating;
  std::string waiting_reason_ = "ContainerCreating";
  std::string waiting_message_;
  clock::time_point created_;
  clock::time_point run_started_;
  int runs_ = 0;
  int restart_count_ = 0;
  std::optional<termination> last_;     // the last finished run (lastState while restarting)
  std::optional<termination> final_;    // the final state when finished or stopped
  std::string phase_ = "Pending";
};

} // namespace kozmo::kubelet
