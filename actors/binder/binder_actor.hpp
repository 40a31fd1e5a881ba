// The binder: `kozmo local`'s stand-in for kube-scheduler.
//
//   pods watch  ──object_event<pod>──▶ binder    (pods with schedulerName default-scheduler)
//   nodes watch ──object_event<node>──▶ binder
//   binder ──pods/binding, Scheduled / FailedScheduling Events, PodScheduled=False──▶ API server
//
// Pods that ask for Kozmo's GPU scheduler (schedulerName: kozmo) are not its business.
#pragma once

#include "k8s/client/client.hpp"

#include <caf/fwd.hpp>

#include <memory>

namespace kozmo::binder {

caf::actor spawn_binder(caf::actor_system& sys, std::shared_ptr<client::client> cli, caf::actor pods_watch,
                        caf::actor nodes_watch);

} // namespace kozmo::binder
