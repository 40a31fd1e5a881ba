// The scheduler actor: exactly one per cluster. It owns the scheduler_core (the only place
// where GPU state changes) and serialises every call to it.
//
//   pods watch  ──object_event<pod> (schedulerName = cfg.scheduler_name)──▶ scheduler
//   nodes watch ──object_event<node>──▶ scheduler         (Ready / unschedulable / deleted)
//   scheduler ──group_bind / group_preempt / group_pod_gone / group_release──▶ cellgroup (one per gang)
//   cellgroup ──group_pod_bound / group_bind_failed / group_released──▶ scheduler
//   scheduler ──PodScheduled=False, FailedScheduling / InvalidSchedulingSpec Events──▶ API server
//   extender / inspect routes ──filter/preempt/bind/inspect_request──▶ scheduler (messages/scheduler_messages.hpp)
//
// Start-up: it subscribes to both watches, waits until both have listed, recovers every pod
// already bound with a bind-info annotation, and only then schedules or answers requests
// (requests that arrive earlier are answered once recovery is done).
//
// Direct mode (`kozmo local`): after each batch of watch events (one pass per mailbox drain)
// it runs the core's schedule() and acts on every decision. Extender mode: kube-scheduler
// drives placement through filter/preempt/bind requests; the watches only feed recovery,
// deletions and node health.
#pragma once

#include "k8s/client/client.hpp"
#include "k8s/error.hpp"

#include <caf/fwd.hpp>

#include <functional>
#include <memory>
#include <string>

namespace kozmo::scheduler {

struct scheduler_actor_config {
  std::string config_yaml;                  // HiveD's configuration, as text
  std::string scheduler_name = "kozmo";     // pods with this spec.schedulerName are ours
  bool direct = true;                       // false: extender mode (no schedule() passes)
  std::string default_virtual_cluster;      // for pods that name none; "" = "default", or the only VC
  std::string component = "kozmo-scheduler"; // Event source
};

// Spawns the cellgroup actor of `group` (dependency injection: runtime passes
// cellgroup::spawn_cellgroup, tests may pass a fake). `force_bind_threshold` comes from the
// configuration; `scheduler` is where the cellgroup reports.
using cellgroup_factory =
    std::function<caf::actor(const std::string& group, int force_bind_threshold, const caf::actor& scheduler)>;

// Loads the configuration (errors name the offending cell or VC) and spawns the actor.
expected<caf::actor> spawn_scheduler(caf::actor_system& sys, std::shared_ptr<client::client> cli,
                                     caf::actor pods_watch, caf::actor nodes_watch, scheduler_actor_config cfg,
                                     cellgroup_factory spawn_group);

} // namespace kozmo::scheduler
