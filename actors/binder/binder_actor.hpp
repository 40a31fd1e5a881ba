// The binder: `kozmo local`'s stand-in for kube-scheduler.
//
//   pods watch  ──object_event<pod>──▶ binder    (pods with schedulerName default-scheduler)
//   nodes watch ──object_event<node>──▶ binder
//   binder ──pods/binding, PodScheduled=False──▶ API server; Scheduled / FailedScheduling──▶ event recorder
//
// Pods that ask for Kozmo's GPU scheduler (schedulerName: kozmo) are not its business.
#pragma once

#include "k8s/client/client.hpp"

#include <caf/fwd.hpp>

#include <memory>

namespace kozmo::binder {

// `recorder` posts its Scheduled / FailedScheduling Events (null: none).
caf::actor spawn_binder(caf::actor_system& sys, std::shared_ptr<client::client> cli, caf::actor pods_watch,
                        caf::actor nodes_watch, caf::actor recorder);

} // namespace kozmo::binder
