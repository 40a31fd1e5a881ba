// The TrainJob controller: the controller kit's supervisor configured for TrainJobs, running one
// trainjob actor per TrainJob on the kit's pass loop.
//
//   trainjobs watch ──object_event<custom_object>──▶ supervisor ──spawns / stops (by uid)──▶ trainjob
//   pods watch (shared), services watch, configmaps watch (label jobset.sigs.k8s.io/jobset-name:
//   the runtime snapshot) ──routed by controller uid and jobset-name──▶ trainjob
//   trainingruntimes, clustertrainingruntimes watches ──referenced: every child that can see one──▶ trainjob
//
// The actor supplies its world to trainjob_reconcile.hpp's pass and absorbs what the executor
// answered; everything else (back-off, 409 / 404 / 5xx, wake-ups) is the pass loop's.
#pragma once

#include "actors/trainer/jobset.hpp"
#include "k8s/client/resource.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace kozmo::client {
class client;
}

namespace kozmo::trainer {

struct controller_config {
  std::shared_ptr<client::client> cli;
  options opts;
  std::string ns;      // restrict to one namespace ("" = all)
  caf::actor recorder; // the process's event recorder; null: the supervisor spawns one
  std::chrono::milliseconds min_backoff{250};
  std::chrono::milliseconds max_backoff{30000};
};

// `pods_watch` is the engine's shared watch of pods; the supervisor spawns its own watches of
// TrainJobs, services, snapshot ConfigMaps and runtimes, linked to it.
caf::actor spawn_trainjob_controller(caf::actor_system& sys, caf::actor pods_watch, controller_config cfg);

} // namespace kozmo::trainer
