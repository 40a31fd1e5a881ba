// The scheduler actor's state and the parts of its shell that live apart from the message
// table (scheduler_actor.cpp): pods and nodes into the core (scheduler_actor_pods.cpp) and the
// configuration derived from the nodes (scheduler_actor_derived.cpp). Included by those three
// files only.
#pragma once

#include "actors/scheduler/cell_map.hpp"
#include "actors/scheduler/derived_following.hpp"
#include "actors/scheduler/other_pods.hpp"
#include "actors/scheduler/pod_intake.hpp"
#include "actors/scheduler/pod_reporter.hpp"
#include "actors/scheduler/scheduler_actor.hpp"
#include "actors/scheduler/scheduler_core.hpp"
#include "actors/scheduler/startup.hpp"
#include "messages/scheduler_messages.hpp"
#include "messages/watch_types.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace kozmo::scheduler::shell {

struct scheduler_state {
  static inline const char* name = "scheduler";
  std::optional<scheduler_core> core;
  std::shared_ptr<client::client> cli;
  scheduler_actor_config cfg;
  cellgroup_factory spawn_group;
  int force_bind_threshold = 3;
  intake_options intake;

  // Start-up (startup.hpp) holds the watch events until the scheduler may act on them;
  // `deferred`: inspect requests waiting for readiness.
  std::optional<startup> start;
  std::vector<std::function<void()>> deferred;

  std::optional<pod_reporter> report;
  std::map<std::string, caf::actor> cellgroups; // group -> its cellgroup actor
  std::set<std::string> given_up;               // binds that failed permanently
  // Admitted pods' creationTimestamps until their bind is sent (kozmo_scheduling_latency_seconds).
  std::unordered_map<std::string, std::int64_t> created_ms;
  bool pass_queued = false;
  bool flush_queued = false; // a flush of queued wait reasons is on its way
  bool vc_metrics_queued = false; // a refresh of the per-VC gauges is on its way
  std::optional<std::int64_t> wake_at; // a pass is due then (a reclaim's deadline)

  // With a derived configuration (cfg.derived): what a rebuild of the core starts from.
  std::optional<derived_following> follow;
  bool rebuild_queued = false;

  // Other schedulers' pods that hold GPUs; the core keeps each node's sum.
  std::optional<other_pods> others;

  // Readers of the cell map waiting for a change (scheduler_actor_map.cpp).
  struct map_waiter {
    std::uint64_t since = 0;
    std::int64_t until_ms = 0;
    std::function<void(inspect_reply)> done;
  };
  std::optional<cell_map_journal> journal;
  std::vector<map_waiter> map_waiters;
  bool map_tick_queued = false;
};

using scheduler_actor = caf::stateful_actor<scheduler_state>;

// ---- scheduler_actor.cpp: decisions --------------------------------------------------------
void queue_pass(scheduler_actor* self); // one scheduling round behind the messages already queued
void act(scheduler_actor* self, const pod_decision& d);
void untrack(scheduler_actor* self, const std::string& uid); // the pod left the core

// ---- scheduler_actor_pods.cpp: pods and nodes into the core --------------------------------
void admit(scheduler_actor* self, const k8s::pod& p);   // a waiting pod of ours
void recover(scheduler_actor* self, const k8s::pod& p); // a bound pod of ours, from its bind-info
void apply_pod(scheduler_actor* self, watch::event_type type, const pod_ptr& pod);
void apply_node(scheduler_actor* self, watch::event_type type, const node_ptr& node);
void shift_other_gpus(scheduler_actor* self, const std::vector<other_pods::change>& changes);

// ---- scheduler_actor_map.cpp: the cell map and its readers ------------------------------------
inspect_reply answer(scheduler_actor* self, const std::string& path);
// GET /v1/inspect/cellmap/since/N: answered when the map moves past N, or after a few seconds.
void watch_map(scheduler_actor* self, std::uint64_t since, std::function<void(inspect_reply)> done);
void map_tick(scheduler_actor* self);

// ---- scheduler_actor_derived.cpp: a configuration derived from the nodes -------------------
void follow_node(scheduler_actor* self, watch::event_type type, const node_ptr& n);
void derive_at_start(scheduler_actor* self, const std::map<std::string, node_ptr>& nodes);
void rebuild(scheduler_actor* self);

} // namespace kozmo::scheduler::shell
