// The task controller: the controller kit's supervisor configured for TaskExecutions, one task
// actor per task, with the resource manager and the pod template store they ask.
//
//   taskexecutions watch ──object_event<custom_object>──▶ supervisor ──spawns / stops (by uid)──▶ task
//   pods watch (shared) ──object_event<pod>──▶ supervisor ──routes by controller uid and the
//                                              kozmo.io/task-name label──▶ task
//   training jobs watches (with training_jobs) ──owned_event──▶ supervisor ──same routes──▶ task
//   task ──▶ resource manager (ResourcePools)      task ──▶ template store (PodTemplates)
#pragma once

#include "actors/tasks/platform_config.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <memory>
#include <string>
#include <vector>

namespace kozmo::client {
class client;
}

namespace kozmo::tasks {

struct task_controller_config {
  std::shared_ptr<client::client> cli;
  platform_config platform;
  std::string ns;                                   // restrict to one namespace ("" = all)
  std::string template_namespace = "kozmo-system";  // where platform-wide PodTemplates live
  caf::actor recorder;                              // the process's event recorder; null: its own
  // Training-job tasks (spec.type pytorch, tensorflow, ...): only where the training controller
  // runs and the training CRDs are installed, since the task controller then watches the jobs
  // it owns (those labelled kozmo.io/task-name).
  bool training_jobs = false;
};

// Spawns the supervisor, the resource manager and the template store; `pods_watch` is the
// engine's watch of pods. Returns the actors, for the caller to stop. The controller writes
// through a background view of `cfg.cli`: on a client shared with simulated nodes or a
// scheduler, their writes go first (the tasks' status and bookkeeping can wait).
std::vector<caf::actor> spawn_task_controller(caf::actor_system& sys, caf::actor pods_watch,
                                              task_controller_config cfg);

} // namespace kozmo::tasks
