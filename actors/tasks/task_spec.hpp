// A TaskExecution (kozmo.io/v1alpha1) as the task machinery reads it: the spec users write,
// decoded and validated once per change. Pure: no CAF, no I/O.
//
//   spec.type            "container" | "pod" | a training kind: "pytorch", "tensorflow", "mpi",
//                        "xgboost", "paddle", "jax", "caffe2" (registered when training runs)
//   spec.container       image, command, args, env, resources ("gpu" names the GPU resource)
//   spec.pod             primaryContainerName + a pod spec (sidecars allowed)
//   spec.job             training types: the job's spec as written for its kind
//   spec.podTemplateName a PodTemplate of the task's namespace, merged under the task
//   spec.interruptible   bool; spec.retries (user-error retries); spec.timeout (Go duration)
//   spec.gpuAccelerator  device, partitionSize | unpartitioned
//   spec.resourcePool    a ResourcePool: one token held while an attempt runs
//   spec.resources       overrides for the primary container (requests / limits)
//   spec.environment     extra env; spec.inputs (name → URI); spec.outputPrefix (URI)
//   spec.secrets         [{name, key, mountAs: env|file, envVar|path}]: Secret values for every
//                        container, by reference
//   spec.cache           {enabled, version, serializable}: the output cache (cache.hpp)
//   spec.dataLoading     {enabled, inputPath, outputPath}: type container only; the inputs are
//                        downloaded before the container starts and what it writes under
//                        outputPath is uploaded to spec.outputPrefix after (copilot.hpp)
//
// `decode_task` never throws and never guesses: a malformed spec is an error whose message
// names the field the way kube-apiserver's validation does ("spec.retries: Invalid value: -1:
// must be 0 or more"), which the task reports as its failure.
#pragma once

#include "k8s/error.hpp"
#include "k8s/json/value.hpp"
#include "k8s/model/custom_object.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kozmo::tasks {

inline constexpr const char* group = "kozmo.io";
inline constexpr const char* version = "v1alpha1";
inline constexpr const char* api_version = "kozmo.io/v1alpha1";
inline constexpr const char* task_kind = "TaskExecution";
inline constexpr const char* task_resource = "taskexecutions";
inline constexpr const char* pool_kind = "ResourcePool";
inline constexpr const char* pool_resource = "resourcepools";

struct gpu_accelerator {
  std::string device;          // node label value, e.g. "nvidia-tesla-a100"
  std::string partition_size;  // "1g.5gb"; empty: no partition asked
  bool unpartitioned = false;  // a whole, unpartitioned GPU
};

// One value of a Kubernetes Secret the task's containers need (spec.secrets[]). Only the
// reference is ever in Kozmo's hands: the kubelet reads the value.
struct secret_ref {
  std::string name;    // the Secret, in the task's namespace
  std::string key;     // its key
  bool as_file = false; // mountAs: env (default) | file
  std::string env_var; // env: the variable (default: KOZMO_SECRET_<NAME>_<KEY>, upper case)
  std::string path;    // file: where the value is (default /etc/kozmo/secrets/<name>/<key>)
};

// spec.cache (cache.hpp): present only when enabled.
struct cache_spec {
  std::string version;       // part of the key: change it to recompute
  bool serializable = false; // identical tasks running at once: one computes, the others wait
  friend bool operator==(const cache_spec&, const cache_spec&) = default;
};

// spec.dataLoading (copilot.hpp): present only when enabled.
struct data_loading_spec {
  std::string input_path = "/var/kozmo/inputs";
  std::string output_path = "/var/kozmo/outputs";
  friend bool operator==(const data_loading_spec&, const data_loading_spec&) = default;
};

struct task_spec {
  std::string type; // registry key: "container", "pod"
  // type container: the container as written (name defaults to "primary"). type pod: the pod
  // spec as written. Kept as JSON so every field the user wrote reaches the pod.
  json::value container;
  json::value pod_spec;
  json::value job; // training types: the job's spec as written (pytorchReplicaSpecs, runPolicy, ...)
  std::string primary_container; // type pod: spec.pod.primaryContainerName; container: its name
  std::string pod_template_name;
  bool interruptible = false;
  int retries = 0;
  std::optional<std::chrono::milliseconds> timeout;
  std::optional<gpu_accelerator> accelerator;
  std::string resource_pool;
  json::value resources; // overrides {requests, limits}; null when absent
  std::vector<std::pair<std::string, std::string>> environment; // in the order written
  std::map<std::string, std::string> inputs;
  std::vector<secret_ref> secrets;
  std::optional<cache_spec> cache;
  std::optional<data_loading_spec> data_loading;
  std::string output_prefix;

  int max_attempts() const { return retries + 1; }
};

// Types the registry knows, for the "supported values" of the error message.
expected<task_spec> decode_task(const k8s::custom_object& task, const std::vector<std::string>& known_types);

// The project a task belongs to: its kozmo.io/project label, else its namespace.
std::string project_of(const k8s::object_meta& meta);

} // namespace kozmo::tasks
