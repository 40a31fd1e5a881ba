// The scheduler actor (direct mode: `schedulerName: kozmo`): exactly one per cluster. It owns
// the scheduler_core (the only place where GPU state changes) and serialises every call to it.
//
//   pods watch  ──object_event<pod> (schedulerName = cfg.scheduler_name)──▶ scheduler
//               (every pod when cfg.count_other_pods and no other_pods_watch is given)
//   other pods watch ──object_event<pod> (other schedulers' bound pods)──▶ scheduler
//   nodes watch ──object_event<node>──▶ scheduler         (Ready / unschedulable / deleted; with a
//                                                          derived configuration, GPU nodes joining)
//   scheduler ──group_bind / group_preempt / group_pod_gone / group_release──▶ cellgroup (one per gang)
//   cellgroup ──group_bind_failed──▶ scheduler   (a bound pod is seen on the pods watch)
//   scheduler ──PodScheduled=False──▶ API server;  ──event_note──▶ event recorder
//   inspect routes ──inspect_request / inspect_callback──▶ scheduler (messages/scheduler_messages.hpp)
//
// Start-up: it subscribes to both watches, waits until both have listed, recovers every pod
// already bound with a bind-info annotation, and only then schedules or answers inspect
// (requests that arrive earlier are answered once recovery is done). After each batch of
// watch events (one pass per mailbox drain) it runs the core's schedule() and acts on every
// decision. What the core notices on its own (a lazy preemption, a group downgraded after a
// reconfiguration, a cancelled preemption) is logged and posted as an Event on the group's pods.
//
// Pods enter the core through pod_intake.hpp and inspect is answered by inspect_api.hpp, the
// same code the extender (kube-scheduler mode, actors/extender) uses.
#pragma once

#include "actors/controller/clock.hpp"
#include "k8s/client/client.hpp"
#include "k8s/error.hpp"
#include "k8s/model/node.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kozmo::scheduler {

// A configuration derived from the cluster's GPU nodes (`kozmo controller` given none): the
// scheduler derives it again whenever a node's `signature` changes (a GPU node joins or leaves,
// its GPU count or type changes) and, when the configuration differs, rebuilds its core on it
// and recovers every placement (bind-info, and binds still being written): nodes join and leave
// without a restart, and running gangs keep their GPUs.
struct derived_config {
  std::function<std::string(const k8s::node&)> signature;             // "" = no GPUs to offer
  std::function<std::string(const std::vector<k8s::node>&)> derive;   // HiveD's YAML; "" = keep the one in use
};

struct scheduler_actor_config {
  std::string config_yaml;                    // HiveD's configuration, as text
  std::optional<derived_config> derived;      // config_yaml follows the nodes (above)
  std::string scheduler_name = "kozmo";       // pods with this spec.schedulerName are ours
  std::string default_virtual_cluster;        // for pods that name none; "" = "default", or the only VC
  std::string component = "kozmo-scheduler"; // Event source
  caf::actor recorder;                        // the event recorder (controller/event_recorder_actor.hpp)
  std::shared_ptr<const controller::clock> time = controller::real_clock();
  // GPUs that pods of other schedulers hold on our nodes are out of reach (scheduler_core
  // note 8). Their pods come from `other_pods_watch` when given (a watch of the bound pods of
  // other schedulers, beside a pods watch narrowed to ours); else from the pods watch, which
  // then holds every pod of the cluster. False: they are not counted (GPU nodes that only
  // this scheduler places pods on).
  bool count_other_pods = true;
  caf::actor other_pods_watch;
  // Called once, on the actor's thread, when both watches have listed and the bound pods are
  // recovered: from then on the scheduler places pods (a readiness probe waits for it).
  std::function<void()> on_ready;
};

// Spawns the cellgroup actor of `group` (dependency injection: runtime passes
// cellgroup::spawn_cellgroup). `force_bind_threshold` comes from the configuration;
// `scheduler` is where the cellgroup reports.
using cellgroup_factory =
    std::function<caf::actor(const std::string& group, int force_bind_threshold, const caf::actor& scheduler)>;

// Loads the configuration (errors name the offending cell or VC) and spawns the actor.
expected<caf::actor> spawn_scheduler(caf::actor_system& sys, std::shared_ptr<client::client> cli,
                                     caf::actor pods_watch, caf::actor nodes_watch, scheduler_actor_config cfg,
                                     cellgroup_factory spawn_group);

} // namespace kozmo::scheduler
