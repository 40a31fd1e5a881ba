// The task actor: one per TaskExecution (by uid), a thin shell over the machinery's round
// (machinery.hpp), written on the controller kit.
//
//   supervisor ──object_event<custom_object> (the task), object_event<pod> (its pods)──▶ task
//   task ──run_round() after each batch of events and at its wake-ups (grace periods, pending
//          timeout, spec.timeout), never on a periodic sweep
//   task ──run_plan: finalizer, events, status (with resourceVersion), deletes, creates──▶ executor
//   task ◀──plan_outcome── executor                (a 409 re-reads; a failure backs off)
//   task ──pool_acquire / pool_release──▶ resource manager ──pool_answer, pool_granted──▶ task
//   task ──template_request──▶ template store ──template_reply──▶ task
//   task ──cache_request──▶ cache store ──cache_reply──▶ task; cache store ──cache_changed──▶ task
//
// What a plan creates or changes is put in the actor's view at once (from the API's answers), so
// a round that runs before the watch echoes it does not decide it again. A round does not run
// while a plan is with the executor.
#pragma once

#include "actors/controller/supervisor_actor.hpp"
#include "actors/tasks/platform_config.hpp"
#include "actors/tasks/plugin.hpp"
#include "k8s/model/custom_object.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace kozmo::tasks {

struct task_actor_config {
  std::shared_ptr<const platform_config> platform;
  std::shared_ptr<const plugin_registry> plugins;
  caf::actor pools;     // the resource manager
  caf::actor templates; // the pod template store
  caf::actor cache;     // the cache store (null: spec.cache finds no store and runs uncached)
  std::chrono::milliseconds min_backoff{250};
  std::chrono::milliseconds max_backoff{30000};
  std::string component = "kozmo-tasks"; // Events' source.component
};

// Spawns the task actor linked to `parent` (the supervisor), or alone when `parent` is null.
caf::actor spawn_task_actor(caf::actor_system& sys, caf::event_based_actor* parent,
                            std::shared_ptr<const task_actor_config> cfg, controller::child_tools tools,
                            std::shared_ptr<const k8s::custom_object> task, controller::owned_view view = {});

} // namespace kozmo::tasks
