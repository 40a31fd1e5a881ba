// The JobSet a TrainJob stands for, realised without a JobSet controller: the runtime's template
// with the TrainJob laid over it, as pods, one headless Service and the claims.
//
//   realise(train_job, runtime_spec, options) -> jobset{replicated jobs, pods, service, claims}
//
// Rules (numbered; tests/unit/trainer names them):
//   1. Each replicated job has `replicas` Jobs; Job j of replicated job r has `completions` pods
//      (the Job template's completions, else parallelism, else 1; the trainer step's is numNodes:
//      the TrainJob's trainer.numNodes, else the runtime's mlPolicy.numNodes, else 1). The pod for
//      completion index i is named and has the hostname `<trainjob>-<r>-<j>-<i>`, under the
//      subdomain `<trainjob>` (the headless Service of that name selects every pod of the job).
//   2. Pods carry JobSet's labels (jobset-name, replicatedjob-name, job-index,
//      replicatedjob-replicas, batch.kubernetes.io/job-name and job-completion-index, the last
//      also as an annotation), the Job template's labels (the ancestor step) and the pod
//      template's; the TrainJob is their controller owner.
//   3. runtimePatches apply in the order listed (a later manager's field wins): the JobSet
//      template's metadata goes to every pod's labels and annotations; a replicated job's entry
//      (by name) is a strategic merge patch of its Job template's metadata and pod template
//      (containers, volumes, env by name). Patches name no replicated job the runtime lacks.
//   4. The trainer step (ancestor label `trainer`, else the replicated job `node`) takes the
//      TrainJob's trainer: image, command and args replace the runtime's, env is merged by name
//      (the TrainJob's wins), resourcesPerNode replaces the container's resources. Its
//      container is the one named `node`, else the first.
//   5. Initializer steps (ancestor `dataset-initializer` / `model-initializer`) take the
//      TrainJob's initializer: STORAGE_URI, its env, and its secretRef as envFrom.
//   6. The ML policy's environment goes to the trainer container (ml_env.cpp says which); the
//      names it sets are reserved: a TrainJob or runtime that sets one is refused with the name.
//   7. Pods that ask for GPUs get Kozmo's scheduling annotations; the GPU pods of every step but
//      the initializers form one gang `<namespace>/<trainjob>` (members by GPU count), in the
//      virtual cluster of the TrainJob's `kozmo.io/virtual-cluster` annotation (else the default)
//      and at its `kozmo.io/priority`. A template's own annotation wins.
//   8. Claims and initializers: initializers.hpp (rules 9 and 10); the MPI policy: mpi.hpp (rule 11).
//   9. Every number is bounded before it sizes anything: a TrainJob over max_pods pods, or with a
//      hostname over 63 characters, is refused with what to change.
#pragma once

#include "actors/trainer/trainjob.hpp"

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace kozmo::trainer {

struct options {
  std::string scheduler_name = "kozmo";
  std::string default_virtual_cluster = "default";
  // kozmo.io/priority when the TrainJob names a class: the training pillar's table.
  std::map<std::string, int> priority_classes;
  // How long a TrainJob may name a runtime that does not exist (one `kubectl apply -f` may hold
  // the runtime and the job; their watches need not agree on the order) before it fails.
  std::chrono::seconds runtime_grace{5};
  // Pods one pass creates at most (kube-controller-manager's burst), so a large job is created
  // over several passes and one deleted meanwhile stops within one.
  int max_creates_per_pass = 500;
  // Initializer containers without a command fetch their storageUri with `kozmo copilot download`
  // (kozmo local, whose pods run no images): initializers.hpp rule 10.
  bool native_initializers = false;
};

struct job_slot {
  std::string rjob;
  int job_index = 0;
  int completion = 0;
  std::string name;
  int gpus = 0;
  json::value pod; // complete, ready to create
};

struct rjob_plan {
  std::string name;
  int replicas = 1;     // Jobs
  int completions = 1;  // pods per Job
  int backoff_limit = 6; // pod failures one Job absorbs (batch/v1's default)
  std::vector<depends_on> after;
  bool trainer_step = false;
  bool initializer = false;
};

struct jobset {
  std::vector<rjob_plan> rjobs;
  std::vector<job_slot> pods; // replicated job order, then Job index, then completion index
  json::value service;
  std::vector<json::value> claims; // PersistentVolumeClaims from volumeClaimPolicies
  json::value success_policy;      // null: every Job
  int max_restarts = 0;
  bool mpi = false;              // mpi.hpp: the hostfile and the SSH keys come with it
  bool launcher_is_node = false;
  json::value hostfile;          // the MPI hostfile ConfigMap
  int gang_pods = 0;
  int gang_gpus = 0;
  bool gang() const { return gang_pods > 0; }
};

expected<jobset> realise(const train_job& job, const runtime_spec& runtime, const options& opt);

// The nodes a TrainJob runs (rule 1) and the processes per node (torch's PET_NPROC_PER_NODE).
int num_nodes(const train_job& job, const runtime_spec& runtime);

// ml_env.cpp: the ML policy's variables for the trainer container of node `rank`, and the names
// it reserves (rule 6).
struct env_context {
  std::string job;  // the TrainJob's name (also the Service: the subdomain)
  int nodes = 1;
  int rank = 0;
  int gpus = 0;     // per node
  std::string cpu;  // the container's CPU limit, else request ("" when none)
  std::string proc_per_node;
};
std::vector<std::pair<std::string, std::string>> ml_env(const runtime_spec& runtime, const env_context& ctx);
std::vector<std::string_view> reserved_env(framework f);
// The trainer's port for the framework (torch, jax: 29500), 0 when none.
int framework_port(framework f);

} // namespace kozmo::trainer
