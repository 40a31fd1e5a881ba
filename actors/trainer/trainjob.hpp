// Kubeflow Trainer v2 as the TrainJob core reads it: a TrainJob, the runtime it names
// (TrainingRuntime or ClusterTrainingRuntime, trainer.kubeflow.org/v1alpha1), and the words both
// share with the pods (labels, env names, ports). Decoding applies the peer's defaults and checks
// every number that sizes work (nodes, processes, replicas) before anything uses it; a malformed
// object comes back as an error whose message names the field and says what to write.
#pragma once

#include "k8s/error.hpp"
#include "k8s/json/value.hpp"
#include "k8s/model/custom_object.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kozmo::trainer {

inline constexpr std::string_view group = "trainer.kubeflow.org";
inline constexpr std::string_view api_version = "trainer.kubeflow.org/v1alpha1";
inline constexpr std::string_view kind_trainjob = "TrainJob";
inline constexpr std::string_view kind_runtime = "TrainingRuntime";
inline constexpr std::string_view kind_cluster_runtime = "ClusterTrainingRuntime";
// spec.managedBy values this controller runs (absent means the first).
inline constexpr std::string_view managed_by_trainer = "trainer.kubeflow.org/trainjob-controller";

namespace label {
inline constexpr std::string_view jobset_name = "jobset.sigs.k8s.io/jobset-name";
inline constexpr std::string_view replicated_job = "jobset.sigs.k8s.io/replicatedjob-name";
inline constexpr std::string_view job_index = "jobset.sigs.k8s.io/job-index";
inline constexpr std::string_view replicated_job_replicas = "jobset.sigs.k8s.io/replicatedjob-replicas";
inline constexpr std::string_view completion_index = "batch.kubernetes.io/job-completion-index";
inline constexpr std::string_view job_name = "batch.kubernetes.io/job-name";
inline constexpr std::string_view ancestor = "trainer.kubeflow.org/trainjob-ancestor-step";
inline constexpr std::string_view framework = "trainer.kubeflow.org/framework";
} // namespace label

// Names of replicated jobs, containers and ancestor steps, as the peer's runtimes use them.
namespace step {
inline constexpr std::string_view node = "node";
inline constexpr std::string_view launcher = "launcher";
inline constexpr std::string_view trainer = "trainer"; // the ancestor label's value for `node`
inline constexpr std::string_view dataset = "dataset-initializer";
inline constexpr std::string_view model = "model-initializer";
} // namespace step

inline constexpr int trainer_port = 29500;
inline constexpr int max_nodes = 10000;             // numNodes (the CRD says the same)
inline constexpr int max_proc_per_node = 1024;      // numProcPerNode
inline constexpr int max_replicas = 1000;           // a replicated job's replicas / completions
inline constexpr int max_pods = 20000;              // all pods of one TrainJob

struct runtime_ref {
  std::string name;
  std::string api_group = std::string(group);
  std::string kind = std::string(kind_cluster_runtime);
};

struct initializer {
  std::string storage_uri;
  json::value env = json::array{}; // EnvVar list as written
  std::string secret_ref;          // a Secret's name, its keys become env (envFrom)
};

struct trainer_override {
  std::string image;
  std::optional<json::value> command; // arrays as written
  std::optional<json::value> args;
  json::value env = json::array{};
  std::optional<int> num_nodes;
  json::value resources_per_node; // ResourceRequirements, null when absent
  std::string num_proc_per_node;  // "" (runtime decides), "auto", "cpu", "gpu" or a number
};

// One runtimePatches entry: who owns it and the template fragment it lays over the runtime's.
struct runtime_patch {
  std::string manager;
  json::value template_patch; // trainingRuntimeSpec.template (JobSet template: metadata, spec)
};

struct train_job {
  k8s::object_meta metadata;
  runtime_ref runtime;
  std::optional<initializer> dataset;
  std::optional<initializer> model;
  std::optional<trainer_override> trainer;
  std::vector<runtime_patch> patches;
  bool suspend = false;
  std::optional<std::int64_t> active_deadline_seconds;
};

enum class framework { none, torch, mpi, jax, xgboost };
std::string_view to_string(framework f);

struct ml_policy {
  std::optional<int> num_nodes;
  framework kind = framework::none;
  std::string num_proc_per_node; // torch: "auto" by default; mpi: a number (default "1")
  std::string mpi_implementation = "OpenMPI";
  std::string ssh_auth_mount_path = "/root/.ssh";
  bool run_launcher_as_node = false;
};

struct depends_on {
  std::string name;
  std::string status; // "Complete" or "Ready"
};

struct replicated_job {
  std::string name;
  int replicas = 1;                 // Jobs of this template
  std::vector<depends_on> after;    // dependsOn
  json::value job_template;         // batch Job template: metadata, spec{parallelism, completions, template}
};

struct runtime_spec {
  std::string kind; // TrainingRuntime or ClusterTrainingRuntime
  std::string name;
  std::string framework_label; // trainer.kubeflow.org/framework
  ml_policy ml;
  bool coscheduling = false;
  std::optional<int> schedule_timeout_seconds;
  json::value template_metadata;      // the JobSet template's metadata (labels, annotations)
  std::vector<replicated_job> jobs;   // in the template's order
  json::value volume_claim_policies;  // as written, null when absent
  json::value success_policy;         // JobSet successPolicy, null: all jobs
  int max_restarts = 0;               // JobSet failurePolicy.maxRestarts
};

// The TrainJob's name must be an RFC 1035 label of at most 63 characters.
std::optional<std::string> name_problem(std::string_view name);

// Reads spec.managedBy without validating the rest (someone else's job is left alone as it is).
std::string managed_by_of(const json::value& document);
bool managed_here(const std::string& managed_by);

expected<train_job> decode_train_job(const k8s::custom_object& object);

// A runtime as stored: the object's document (TrainingRuntime or ClusterTrainingRuntime).
expected<runtime_spec> decode_runtime(const json::value& document);

// The TrainJob as the controller owner of what it makes (pods, Service, ConfigMaps, Secret, claims).
json::value owner_reference(const std::string& name, const std::string& uid);
inline json::value owner_reference(const train_job& job) {
  return owner_reference(job.metadata.name, job.metadata.uid);
}

// The runtime as the snapshot keeps it (kind, name, framework label, spec), and back.
json::value snapshot_document(const json::value& runtime_document);

} // namespace kozmo::trainer
