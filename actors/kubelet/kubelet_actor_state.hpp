// Private to the kubelet actor's translation units (kubelet_actor.cpp: the node, simulated
// pods; kubelet_process_actor.cpp: pods of the process runtime). Includes CAF.
#pragma once

#include "actors/controller/listed_gate.hpp"
#include "actors/kubelet/admission.hpp"
#include "actors/kubelet/kubelet_actor.hpp"
#include "actors/kubelet/pod_lifecycle.hpp"
#include "actors/kubelet/process_lifecycle.hpp"
#include "actors/kubelet/process_runner.hpp"
#include "actors/kubelet/process_spec.hpp"
#include "k8s/model/pod.hpp"
#include "messages/atoms.hpp"
#include "messages/local_message.hpp"
#include "messages/watch_messages.hpp"

#include <caf/all.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>

namespace kozmo::kubelet {

using proc_ready_atom = caf::atom_constant<caf::atom("procready")>;
using grace_atom = caf::atom_constant<caf::atom("grace")>;
using refused_atom = caf::atom_constant<caf::atom("refused")>;
using remount_atom = caf::atom_constant<caf::atom("remount")>;

// What the runner saw, posted by its thread to the actor.
KOZMO_LOCAL_MESSAGE(process_report)

// A process pod between acceptance and start: the pod as stored and the Secrets/ConfigMaps it
// names, filled by client callbacks (any thread), read by the actor after proc_ready_atom.
struct process_admission;

// A pod of the process runtime once started.
struct process_pod {
  pod_run_spec spec;
  std::vector<std::vector<std::pair<std::string, std::string>>> env; // per spec.containers entry
  std::unique_ptr<process_lifecycle> life;
};

struct tracked_pod {
  std::string ns;
  std::string name;
  std::unique_ptr<pod_lifecycle> life; // simulated; null while the pod's Secrets are being looked up
  std::unique_ptr<process_pod> proc;   // process runtime; null until admitted
  std::shared_ptr<process_admission> admission; // process runtime, while being admitted
  std::uint64_t timer_generation = 0; // a timer carrying an older generation is stale
  std::string mount_error; // process runtime: why its volumes could not be mounted (tried again)
  int mount_attempts = 0;
  bool stopping = false;
  // One status write in flight per pod: two concurrent merge patches may travel on different
  // connections and land out of order, leaving an older status (ContainerCreating) on top.
  bool writing = false;
  bool write_again = false; // the status changed while a write was in flight
  bool writing_final = false; // the write in flight says the pod ended
  // The API server holds the pod's final status (or the pod is gone). Until then the pod still
  // shows Running to everyone else, so it keeps its resources: a pod admitted into them would be
  // seen running beside it (a lost status write used to over-commit the node that way).
  bool final_written = false;
  resource_need need; // what it holds on the node until it finishes (admission.hpp)

  bool started() const { return life || proc; }
  bool ended() const {
    if (life)
      return life->current() == stage::finished || life->current() == stage::gone;
    if (proc)
      return proc->life->finished();
    return false; // being admitted (its Secrets looked up, its process prepared)
  }
  // Counted against the node's capacity: admitted, and not yet known to have ended.
  bool holds_resources() const { return !ended() || !final_written; }
  json::value status_json() const { return proc ? proc->life->status_json() : life->status_json(); }
};

struct kubelet_state {
  static inline const char* name = "kubelet";
  std::shared_ptr<client::client> cli;
  caf::actor pods_watch;
  controller::listed_gate listed; // this node's pods are listed: on_synced
  kubelet_config cfg;
  std::unordered_map<std::string, tracked_pod> pods; // by uid
  std::uint32_t next_pod_ip = 2;
  std::string registered_since;
  std::shared_ptr<process_runner> runner; // created with the first process pod
  std::string process_path;               // PATH of container processes
  // Admission waits for the pods watch's first LIST: a pod that was Running on this node when the
  // kubelet restarted must be counted before a new one is admitted beside it.
  bool synced = false;
  std::map<std::string, object_event<k8s::pod>> deferred; // by uid, the latest event
  std::set<std::string> rejected;                         // refused by admission (until deleted)
};

using kubelet_actor = caf::stateful_actor<kubelet_state>;

// Shared by both files (kubelet_actor.cpp).
void post_event(kubelet_actor* self, const tracked_pod& p, const std::string& uid, const std::string& type,
                const std::string& reason, const std::string& message);
void write_status(kubelet_actor* self, const std::string& uid, tracked_pod& p);
void arm(kubelet_actor* self, const std::string& uid, tracked_pod& p, duration delay);
void remove_pod_object(kubelet_actor* self, const std::string& uid, const std::string& ns, const std::string& name);

// The process runtime (kubelet_process_actor.cpp).
// Whether the pod runs as processes: its kozmo.io/runtime annotation, else the node's runtime.
// An unknown value is an error naming the accepted ones; so is `process` on a node whose
// operator did not allow it (`allow_process`, or the node's runtime is process).
expected<bool> runs_as_processes(const k8s::pod& pod, const std::string& node_runtime, bool allow_process);
// Accepts the pod: reads it and what it references, then starts it (proc_ready_atom).
void admit_process_pod(kubelet_actor* self, const k8s::pod& pod);
void on_process_ready(kubelet_actor* self, const std::string& uid);
// A pod whose volumes could not be mounted is admitted again (remount_atom).
void on_remount(kubelet_actor* self, const std::string& uid, std::uint64_t generation);
void on_process_report(kubelet_actor* self, const process_report& r);
// Deletion with this grace period: SIGTERM now, SIGKILL when it has passed.
void stop_process_pod(kubelet_actor* self, const std::string& uid, tracked_pod& p, duration grace);
void on_grace_over(kubelet_actor* self, const std::string& uid, std::uint64_t generation);
void on_process_timer(kubelet_actor* self, const std::string& uid, tracked_pod& p);
// The pod object is gone: kill what is left, remove its files.
void forget_process_pod(kubelet_actor* self, const std::string& uid, tracked_pod& p);

} // namespace kozmo::kubelet
