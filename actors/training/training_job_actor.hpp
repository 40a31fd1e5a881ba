// The training job actor: one per PyTorchJob / TFJob / MPIJob / Caffe2Job (by uid).
//
//   supervisor ──object_event<custom_object> (the job), object_event<pod>,
//                object_event<service>, config_map_event──▶ training_job
//   training_job ──reconcile() after each batch of events (coalesced, never a periodic resync)
//   training_job ──actions in order, then the status subresource, then Events──▶ API server
//   training_job ──(wake_atom) at reconcile_result::wake_at──▶ itself  (deadline, TTL, grace)
//
// The actor keeps the rules of reconcile.hpp: actions run in order (consecutive creates or
// deletes go out together, Events are fire-and-forget), the first failure drops the rest and
// the status and re-reconciles after an exponential back-off; pods and services it deleted and
// still sees are left out of the next pass (expectations); an adopt re-reads the job first.
// What it creates is put in its view at once (from the API's answer), so a pass that runs
// before the watch echoes the create does not create it twice.
#pragma once

#include "actors/training/options.hpp"
#include "k8s/model/custom_object.hpp"
#include "k8s/model/pod.hpp"
#include "k8s/model/service.hpp"

#include <caf/fwd.hpp>
#include <caf/meta/type_name.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kozmo::client {
class client;
}

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

// The MPI hostfile ConfigMap "<job>-config" changed: its data, or null when it is gone.
struct config_map_event {
  std::string name;
  std::shared_ptr<const std::map<std::string, std::string>> data;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, config_map_event& x) {
  return f(caf::meta::type_name("config_map_event"), x.name);
}

// The REST resource of a job kind: {"kubeflow.org", "v1", "pytorchjobs"}; empty resource for
// a kind that is not a training job.
struct job_resource {
  std::string group;
  std::string version;
  std::string resource;
};
job_resource resource_of_kind(const std::string& kind);

// What the supervisor already holds for a job when it spawns its actor (a restart of the
// controller finds the pods of running jobs): the first pass sees all of it at once.
struct job_view {
  std::vector<std::shared_ptr<const k8s::pod>> pods;
  std::vector<std::shared_ptr<const k8s::service>> services;
  std::shared_ptr<const std::map<std::string, std::string>> mpi_config; // null: no config map
};

// The data of a ConfigMap (its JSON), as config_map_event carries it.
std::shared_ptr<const std::map<std::string, std::string>> config_data(const json::value& config_map);

// Spawns the job actor linked to `parent` (the supervisor), or alone when `parent` is null
// (tests, bench). `job` must carry its kind and apiVersion.
caf::actor spawn_training_job(caf::actor_system& sys, caf::event_based_actor* parent,
                              std::shared_ptr<const job_actor_config> cfg,
                              std::shared_ptr<const k8s::custom_object> job, job_view view = {});

} // namespace kozmo::training
