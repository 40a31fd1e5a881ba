// The training job actor: one per PyTorchJob / TFJob / MPIJob / Caffe2Job (by uid), a thin
// shell over the pure reconcile step (reconcile.hpp), written on the controller kit.
//
//   supervisor ──object_event<custom_object> (the job), object_event<pod>,
//                object_event<service>, owned_event (the MPI config map)──▶ training_job
//   training_job ──reconcile() after each batch of events (coalesced, never a periodic resync)
//   training_job ──run_plan: the pass's actions, then the status──▶ executor ──▶ API server
//   training_job ◀──plan_outcome── executor
//   training_job ──(a wake-up) at reconcile_result::wake_at──▶ itself  (deadline, TTL, grace)
//
// The actor keeps the rules of reconcile.hpp through the executor's (controller/plan.hpp) and the
// kit's pass loop (controller/pass_loop.hpp): the first failure drops the rest and the status and
// re-reconciles after an exponential back-off (a 409 first takes in what conflicted);
// a pass that creates objects first re-reads the job (a job deleted a moment ago must not get
// its pods back before the jobs watch says so); an adopt re-reads the job first. Pods and
// services it deleted and still sees are left out of the next pass (expectations). What it
// creates is put in its view at once (from the API's answer), so a pass that runs before the
// watch echoes the create does not create it twice.
#pragma once

#include "actors/controller/supervisor_actor.hpp"
#include "actors/training/options.hpp"
#include "k8s/model/custom_object.hpp"

#include <caf/fwd.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>

namespace kozmo::training {

struct job_actor_config {
  std::shared_ptr<client::client> cli;
  options opts;
  // Back-off after a failed action or status write: doubles from min to max.
  std::chrono::milliseconds min_backoff{250};
  std::chrono::milliseconds max_backoff{30000};
  // Events' source.component.
  std::string component = "kozmo-training";
};

// The REST resource of a job kind: {"kubeflow.org", "v1", "pytorchjobs"}; empty resource for
// a kind that is not a training job.
struct job_resource {
  std::string group;
  std::string version;
  std::string resource;
};
job_resource resource_of_kind(const std::string& kind);

// Spawns the job actor linked to `parent` (the supervisor), or alone when `parent` is null
// (tests, bench). `job` must carry its kind and apiVersion; `view` is what the supervisor
// already holds for it (a restart of the controller finds the pods of running jobs).
caf::actor spawn_training_job(caf::actor_system& sys, caf::event_based_actor* parent,
                              std::shared_ptr<const job_actor_config> cfg, controller::child_tools tools,
                              std::shared_ptr<const k8s::custom_object> job, controller::owned_view view = {});

} // namespace kozmo::training
