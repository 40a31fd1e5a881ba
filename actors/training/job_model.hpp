// A training job (PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob, Caffe2Job) as the
// reconcile core reads it.
//
// The kinds share one model: a list of replica specs (each with its pod template kept as
// JSON so that every field the user wrote reaches the pod), a run policy, and the few
// kind-specific fields. `decode_job` reads the custom object, applies the peer's defaults
// (replicas 1, the kind's restart policy, the default port on the default container) and
// validates; a malformed job comes back as an error whose message says what to fix.
#pragma once

#include "actors/training/job_status.hpp"
#include "k8s/error.hpp"
#include "k8s/json/value.hpp"
#include "k8s/model/custom_object.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::training {

enum class job_kind { pytorch, tensorflow, mpi, xgboost, paddle, jax, caffe2 };

// What differs between kinds, as a table (see kind_table in job_model.cpp).
struct kind_traits {
  job_kind kind;
  std::string_view name;             // "PyTorchJob"
  std::string_view api_version;      // "kubeflow.org/v1"
  std::string_view plural;           // "pytorchjobs"
  std::string_view replica_specs_key; // "pytorchReplicaSpecs"; Caffe2: "replicaSpecs" (one spec)
  std::string_view default_container; // "pytorch"
  std::string_view default_port_name; // "pytorchjob-port"
  int default_port = 0;
  std::string_view default_restart;   // "OnFailure"
  std::string_view operator_name;     // value of training.kubeflow.org/operator-name
  std::vector<std::string_view> replica_types; // canonical spelling, in creation order
  // The peer's validation asks every replica for a container named default_container (all
  // kinds but MPIJob, whose main container is simply the first).
  bool container_name_required = true;
};

// Every kind this core runs, in the order the supervisor watches them.
const std::vector<kind_traits>& all_kinds();

// The traits of a kind name ("PyTorchJob"), or nullptr for a kind this core does not run.
const kind_traits* traits_for(std::string_view kind);

enum class restart_policy { always, on_failure, never, exit_code };
std::string_view to_string(restart_policy p);

enum class clean_pod_policy { none, running, all };

struct replica_spec {
  std::string type; // canonical: "Master", "Worker", "PS", ...
  int replicas = 1;
  restart_policy restart = restart_policy::never;
  // The pod template (metadata + spec) after defaulting: the default container carries the
  // default port. Fields this core does not know are kept as they were written.
  json::value pod_template;
  int gpus_per_pod = 0; // nvidia.com/gpu limits summed over the containers
  // The container that runs the training process: the one named after the kind, else (MPIJob)
  // the first. Its exit code decides restarts; MPIJob's environment and mounts go to it.
  std::string main_container;
};

struct scheduling_policy {
  std::optional<int> min_available;
  std::string queue;
  std::string priority_class;
  std::optional<int> schedule_timeout_seconds;
};

struct run_policy {
  clean_pod_policy clean_pods = clean_pod_policy::none;
  std::optional<std::int64_t> ttl_seconds_after_finished;
  std::optional<std::int64_t> active_deadline_seconds;
  std::optional<int> backoff_limit;
  scheduling_policy scheduling;
  bool suspend = false;
  std::string managed_by;
};

// PyTorch elastic training (torchrun's rendezvous).
struct elastic_policy {
  std::optional<int> min_replicas;
  std::optional<int> max_replicas;
  std::string rdzv_backend = "c10d";
  std::optional<int> rdzv_port;
  std::string rdzv_host;
  std::string rdzv_id;
  std::vector<std::pair<std::string, std::string>> rdzv_conf;
  std::optional<int> max_restarts;
  std::optional<int> nproc_per_node;
};

struct training_job {
  const kind_traits* traits = nullptr;
  k8s::object_meta metadata;
  std::vector<replica_spec> replicas; // in the kind's canonical order
  run_policy run;
  job_status status;

  // PyTorchJob
  std::optional<elastic_policy> elastic;
  std::string nproc_per_node = "auto";
  // TFJob: "" (default: worker-0 decides) or "AllWorkers"
  std::string success_policy;
  // MPIJob
  int slots_per_worker = 1;
  std::string main_container; // spec.mainContainer: kubexec.sh's `kubectl exec --container`
  // PaddleJob (the peer only defaults it: min and max replicas, max restarts)
  std::optional<elastic_policy> paddle_elastic;
  // Caffe2Job
  std::string backend_type; // "redis", "nfs", "none" or empty
  std::string redis_host;
  int redis_port = 6379;
  std::optional<std::pair<std::string, int>> chief; // terminationPolicy.chief {replicaName, replicaIndex}

  const replica_spec* find(std::string_view type) const;
  int total_replicas() const;
};

// Reads the managedBy and suspend fields without validating the rest (a job managed by
// someone else is left alone even if it is malformed for us).
std::string managed_by_of(const json::value& document);

// The bounds decode_job holds a job's numbers to, beyond what their type allows: each of them
// sizes work or memory (pods to create, processes per pod, timers), so none is used unchecked.
struct decode_limits {
  // Replicas of one replica type (deploy/crds says the same as the schema's maximum, so that
  // kube-apiserver refuses a larger number at admission).
  int max_replicas = 10000;
};
inline constexpr int max_processes_per_pod = 1024;     // nprocPerNode, slotsPerWorker
inline constexpr int max_gpus_per_container = 1024;    // nvidia.com/gpu of one container

// Decodes and validates. Errors are user errors: "spec.pytorchReplicaSpecs.Worker.replicas
// is -1: use 0 to 10000".
expected<training_job> decode_job(const k8s::custom_object& object, const decode_limits& limits = {});

// The GPUs (nvidia.com/gpu limit, else request) a pod template's containers ask for, summed.
int gpus_of_template(const json::value& pod_template);

} // namespace kozmo::training
