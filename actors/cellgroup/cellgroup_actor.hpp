// The cellgroup actor: one per allocated affinity group (gang). It carries out what the
// scheduler actor decided for the group's pods, so that slow API calls never stall the one
// actor that owns the GPU state.
//
//   scheduler ──group_bind──▶ cellgroup ──pods/binding (+ bind-info, leaf-cell isolation)──▶ API
//   scheduler ──group_preempt──▶ cellgroup ──DELETE victims (uid precondition)──▶ API
//   cellgroup ──group_bind_failed──▶ scheduler   (a bind that worked shows on the pods watch)
//   scheduler ──group_release──▶ cellgroup, which exits
//   cellgroup ──Scheduled, Preempting, Preempted──▶ event recorder
//
// Per pod: Waiting -> Preempting -> Binding -> Bound. A failed bind is retried with an
// exponential back-off (k8s/client/retry.hpp's policy); from the `force_bind_threshold`-th
// failure on, the pod is re-read before each retry: already bound to the chosen node counts as
// bound, deleted / recreated / bound elsewhere is a permanent failure.
#pragma once

#include "k8s/client/client.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace kozmo::cellgroup {

struct cellgroup_config {
  std::string group;
  int force_bind_threshold = 3;           // HiveD's forcePodBindThreshold
  int max_bind_attempts = 12;             // then the bind fails permanently
  std::chrono::milliseconds min_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
  std::string component = "kozmo-scheduler"; // Event source
  caf::actor recorder;                        // the event recorder; null: no Events
};

caf::actor spawn_cellgroup(caf::actor_system& sys, std::shared_ptr<client::client> cli, caf::actor scheduler,
                           cellgroup_config cfg);

} // namespace kozmo::cellgroup
