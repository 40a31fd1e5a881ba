// The life of one pod whose containers run as local processes, as a pure state machine.
//
// Pure: no CAF, no I/O, no clock (callers pass `now`). The kubelet actor feeds it what happened
// ("container X started", "container X exited with code N at T", "the back-off timer fired",
// "the pod is being deleted") and carries out the `step` each call returns: the containers to
// start, when to call on_timer() again, whether to signal the running processes.
//
// Rules, as a kubelet applies them:
//  1. Init containers run one after another, in order; the main containers all start together
//     once the last init container has exited 0.
//  2. An exited container restarts under restartPolicy Always (any exit), OnFailure (non-zero
//     exit) and never under Never. An init container that fails is restarted unless the policy
//     is Never, where it fails the pod. Each restart waits a back-off that starts at
//     `restart_backoff` and doubles per restart of that container, capped at five minutes
//     (waiting reason CrashLoopBackOff meanwhile); `lastState` keeps the run before.
//  3. A container that cannot be created (no command, a missing Secret key) waits with that
//     reason and never starts; a container that cannot start (exec failed) ends at once with
//     exit code 128, reason StartError.
//  4. The phase is Pending until the main containers run, Running while any runs or will
//     restart, then Succeeded when every main container ended 0 and none restarts, Failed when
//     one ended non-zero (or an init container failed under Never).
//  5. Deletion: begin_stop() asks for every running container to be signalled; nothing
//     restarts any more; stopped() says when the last process is gone.
#pragma once

#include "actors/kubelet/pod_script.hpp"
#include "k8s/json/value.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace kozmo::kubelet {

using clock = std::chrono::system_clock;

// The parts of a pod the process lifecycle decides on.
struct process_pod_shape {
  struct container {
    std::string name;
    std::string image;
    // Why it can never be created (a waiting reason such as CreateContainerError and its
    // message); empty when it can.
    std::string blocked_reason;
    std::string blocked_message;
  };
  std::string uid;
  std::vector<container> init_containers;
  std::vector<container> containers;
  std::string restart_policy = "Always";
  std::string host_ip;
  std::string pod_ip;
  duration restart_backoff{10000};
};

// How a run ended, as the process layer saw it.
struct process_exit {
  int exit_code = 0;         // 128 + signal for a process killed by a signal
  std::string message;       // the termination message (already chosen by policy)
  std::string reason;        // "" = Completed / Error by exit code; "StartError" for exec failures
};

// One container to start: its name, whether it is an init container, and the restart count
// the run will have (the log file's number).
struct container_run {
  std::string name;
  bool init = false;
  int restart = 0;
  friend bool operator==(const container_run&, const container_run&) = default;
};

struct process_step {
  std::vector<container_run> start;  // start these now
  std::optional<duration> wake_after; // call on_timer() after this delay (the earliest back-off)
  bool signal_running = false;       // deletion: send SIGTERM to every running container
};

class process_lifecycle {
public:
  process_lifecycle(process_pod_shape pod, clock::time_point now);

  // The pod was accepted: start the first init container, or every main container.
  process_step begin(clock::time_point now);
  // The whole pod cannot start (a volume that cannot be set up): every container waits with
  // this reason (ContainerCreating, with the message as an Event).
  void block(std::string reason, std::string message);
  // The process of this run is running.
  void on_started(const std::string& name, bool init, clock::time_point now);
  // The process of the current run of `name` is gone.
  process_step on_exited(const std::string& name, bool init, const process_exit& exit, clock::time_point now);
  // A back-off may have elapsed: start what is due.
  process_step on_timer(clock::time_point now);
  // Deletion requested: nothing restarts; running containers are to be signalled.
  process_step begin_stop(clock::time_point now);

  bool stopping() const { return stopping_; }
  // Stopping and no process left.
  bool stopped() const;
  // No container will ever run again (Succeeded or Failed).
  bool finished() const { return phase_ == "Succeeded" || phase_ == "Failed"; }
  // Whether this run of `name` is the one running now (stale exits are ignored by the actor).
  bool is_running(const std::string& name, bool init) const;
  std::string phase() const { return phase_; }
  // The full `status` object for the pod's status subresource.
  json::value status_json() const;

private:
  struct termination {
    int exit_code = 0;
    std::string reason;
    std::string message;
    clock::time_point started;
    clock::time_point finished;
    int run = 0;
  };
  enum class state { waiting, starting, running, terminated };
  struct record {
    process_pod_shape::container spec;
    bool init = false;
    state st = state::waiting;
    std::string waiting_reason;
    std::string waiting_message;
    clock::time_point started;
    std::optional<termination> current; // when terminated
    std::optional<termination> last;    // lastState
    int restart_count = 0;
    std::optional<clock::time_point> restart_at; // in back-off until then
  };

  record* find(const std::string& name, bool init);
  const record* find(const std::string& name, bool init) const;
  // Starts `r` (or leaves it waiting on its blocked reason); appends to `step`.
  void request_start(record& r, process_step& step);
  void start_mains(process_step& step);
  duration backoff_for(const record& r) const;
  void settle_phase();
  std::optional<duration> next_wake(clock::time_point now) const;
  json::value container_status(const record& r) const;
  json::value conditions() const;

  process_pod_shape pod_;
  std::vector<record> init_;
  std::vector<record> main_;
  clock::time_point created_;
  std::size_t next_init_ = 0;   // the init container whose turn it is
  bool initialized_ = false;    // every init container completed
  bool stopping_ = false;
  bool init_failed_ = false;    // an init container failed under restartPolicy Never
  std::string phase_ = "Pending";
};

} // namespace kozmo::kubelet
