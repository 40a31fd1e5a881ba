// Building the objects a training job owns: its pods (from the replica templates, with the
// labels, owner reference, environment, ports, restart policy and gang annotations filled
// in), one headless service per replica index, and the MPI hostfile ConfigMap.
//
// Everything returned is a complete JSON object ready to POST. Fields of the template that
// Kozmo does not model (volumes, probes, securityContext, ...) are kept as written.
#pragma once

#include "actors/training/job_model.hpp"
#include "actors/training/options.hpp"
#include "actors/scheduler/pod_scheduling_spec.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kozmo::training {

namespace label {
inline constexpr const char* replica_index = "training.kubeflow.org/replica-index";
inline constexpr const char* replica_type = "training.kubeflow.org/replica-type";
inline constexpr const char* operator_name = "training.kubeflow.org/operator-name";
inline constexpr const char* job_name = "training.kubeflow.org/job-name";
inline constexpr const char* job_role = "training.kubeflow.org/job-role";
} // namespace label

// "<job>-<lowercase type>-<index>": the pod and its service; MPIJob's launcher is "<job>-launcher".
std::string replica_object_name(const std::string& job, std::string_view type, int index);
std::string lower_type(std::string_view type);

// The labels every pod and service of the job carries (job-name, operator-name): the
// selector used to claim them.
std::map<std::string, std::string> job_labels(const training_job& job);
// The replicaStatuses selector string: "training.kubeflow.org/job-name=x,...".
std::string selector_string(const training_job& job, std::string_view type);

// Whether the pod of (type, index) is the job's master role (job-role=master).
bool is_master_role(const training_job& job, std::string_view type, int index);

// The owner reference pods, services and config maps get: controller and blockOwnerDeletion.
json::value controller_ref(const training_job& job);

// How the job's pods form one gang for Kozmo's scheduler. Only pods that ask for GPUs are
// gang members (the scheduler places GPUs; CPU-only pods go to the default scheduler).
// minAvailable m < total: the first m pods in creation order (chief/master first, then by
// type and index) form the gang; the GPU pods after them are scheduled one by one.
struct gang_plan {
  bool enabled = false;       // some replica asks for GPUs
  std::string name;           // "<ns>/<job>"
  std::vector<scheduler::affinity_member> members; // of the gang, in first-seen order
  std::string virtual_cluster;
  int priority = 0;
  // Elastic PyTorchJob (elasticPolicy.minReplicas): the fewest pods the gang runs with, the
  // workers' minimum plus the other members; 0: not elastic (scheduler_core.hpp note 10).
  int min_members = 0;
  std::map<std::pair<std::string, int>, bool> in_gang; // (type, index) → member of the gang
};
gang_plan plan_gang(const training_job& job, const options& opt);
int priority_of(const std::string& priority_class, const std::map<std::string, int>& table);

// Environment for the containers of one replica, in order (kind-specific; see env.cpp).
std::vector<std::pair<std::string, std::string>> replica_env(const training_job& job, const replica_spec& spec,
                                                             int index, const options& opt);

// The MPIJob launcher's identity, as the peer gives it: the launcher's serviceAccountName, else
// "<job>-launcher" (then Kozmo creates that ServiceAccount), a Role "<job>-launcher" that may
// read pods and exec into the workers (kubexec.sh), and the RoleBinding between them.
// mpi_launcher_name: "<job>-launcher", the name of the launcher pod, its Role and RoleBinding.
std::string mpi_launcher_name(const training_job& job);
std::string mpi_launcher_account(const training_job& job);
bool mpi_launcher_account_is_ours(const training_job& job);
json::value mpi_role_rules(const training_job& job);
json::value build_mpi_service_account(const training_job& job);
json::value build_mpi_role(const training_job& job);
json::value build_mpi_role_binding(const training_job& job);

// Environment taken from the pod's own fields (name, fieldPath): PaddleJob's rank-0 pod
// announces its IP as POD_IP_DUMMY.
std::vector<std::pair<std::string, std::string>> replica_field_env(const training_job& job, const replica_spec& spec,
                                                                   int index);

json::value build_pod(const training_job& job, const replica_spec& spec, int index, const gang_plan& gang,
                      const options& opt);
json::value build_service(const training_job& job, const replica_spec& spec, int index);

// MPIJob: "<job>-config" with the hostfile (one line per worker: "<pod> slots=N").
std::string mpi_config_map_name(const training_job& job);
// The ConfigMap "<job>-config": `hostfile` (a GPU launcher first, then every worker, "<pod>
// slots=N"), `kubexec.sh` (how mpirun reaches a worker: kubectl exec, into spec.mainContainer
// when set) and `discover_hosts.sh` (the running workers, for Horovod elastic).
bool is_gpu_launcher(const training_job& job);
std::map<std::string, std::string> mpi_config_data(const training_job& job,
                                                   const std::vector<std::string>& running_workers = {});
json::value build_mpi_config_map(const training_job& job, const std::vector<std::string>& running_workers = {});

} // namespace kozmo::training
