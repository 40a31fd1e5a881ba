// The platform's settings for task pods: the `tasks:` section of Kozmo's configuration file
// (`kozmo local --config FILE`). Keys are the peer's k8s plugin keys where they apply, so a
// platform team's existing values carry over; docs/tasks.md ("Task platform configuration") lists
// each with its default.
//
// Parsed once into an immutable object that every task actor shares. An unknown key, a value
// of the wrong type or a malformed quantity/duration is an error naming the key
// ("tasks.image-pull-backoff-grace-period: ..."), reported before anything starts.
#pragma once

#include "k8s/error.hpp"
#include "k8s/json/value.hpp"
#include "k8s/model/quantity.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace kozmo::tasks {

// `tasks.copilot`: the containers that move a task's data in and out (copilot.hpp).
struct copilot_config {
  std::string image = "ghcr.io/kozmo-io/kozmo:latest"; // an image with the kozmo binary
  std::string command = "kozmo";                       // the binary, by name (on PATH) or path
  k8s::quantity cpu = k8s::quantity::from_milli(500);  // each copilot container's request = limit
  k8s::quantity memory = k8s::quantity::from_int(128LL * 1024 * 1024, k8s::quantity_format::binary_si);
  std::optional<k8s::quantity> max_dataset_size;       // the inputs' total; none: no cap
  std::chrono::milliseconds timeout{std::chrono::hours(1)}; // the uploader waits this long for the task
  // S3-compatible storage (s3:// URIs). Credentials only by reference: a Secret in the task's
  // namespace, whose two keys become AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY in the copilot
  // containers (env valueFrom.secretKeyRef).
  std::string s3_endpoint;           // "http://minio:9000"; "": https://s3.<region>.amazonaws.com
  std::string s3_region = "us-east-1";
  bool s3_path_style = true;         // https://endpoint/bucket/key (false: bucket.endpoint/key)
  std::string s3_credentials_secret; // "": no credentials from a Secret
  std::string s3_access_key_id_key = "AWS_ACCESS_KEY_ID";
  std::string s3_secret_access_key_key = "AWS_SECRET_ACCESS_KEY";
};

struct platform_config {
  // Requests (and limits) a container gets when it sets none.
  k8s::quantity default_cpus = k8s::quantity::from_int(1);
  k8s::quantity default_memory = k8s::quantity::from_int(1024LL * 1024 * 1024, k8s::quantity_format::binary_si);
  // The extended resource "gpu" stands for.
  std::string gpu_resource_name = "nvidia.com/gpu";
  std::string gpu_device_node_label = "k8s.amazonaws.com/accelerator";
  std::string gpu_partition_size_node_label = "k8s.amazonaws.com/gpu-partition-size";
  // Interruptible (spot) placement: tolerations and node selector requirement for attempts that
  // may run there, and a requirement for those that may not. JSON as Kubernetes writes them.
  json::value interruptible_tolerations = json::array{};
  json::value interruptible_node_selector_requirement;     // null: none
  json::value non_interruptible_node_selector_requirement; // null: none
  json::value default_tolerations = json::array{};
  std::map<std::string, std::string> default_node_selector;
  std::map<std::string, std::string> default_annotations = {{"cluster-autoscaler.kubernetes.io/safe-to-evict", "false"}};
  std::map<std::string, std::string> default_labels;
  std::string scheduler_name; // "": the cluster's default scheduler
  std::string default_pod_template_name;
  // Grace periods of demystify (pending pods) and the pending timeout (0: off).
  std::chrono::milliseconds create_container_error_grace_period{std::chrono::minutes(3)};
  // The peer's default is 0, which fails a task on the transient "failed to sync secret cache"
  // a kubelet reports while a new Secret propagates; Kozmo waits as long as for the others.
  std::chrono::milliseconds create_container_config_error_grace_period{std::chrono::minutes(3)};
  std::chrono::milliseconds image_pull_backoff_grace_period{std::chrono::minutes(3)};
  std::chrono::milliseconds pod_pending_timeout{0};
  // Platform caps per container (resource name → quantity): cpu, memory, the GPU resource,
  // ephemeral-storage. Missing: no cap.
  std::map<std::string, k8s::quantity> resource_limits;
  // When an interruptible task leaves interruptible nodes, counted in system failures (a spot
  // node taken away is one): N > 0 after N of them; -N for the last N attempts the platform
  // allows (max-system-failures + 1). The peer's default -1: the last attempt runs on demand.
  int interruptible_failure_threshold = -1;
  // System failures (the platform's fault: node lost, pod deleted, CreateContainerError) a task
  // may have before it fails; they do not use up spec.retries.
  int max_system_failures = 3;
  // The output cache's reservations (cache.hpp): the holder extends its reservation this often;
  // it expires three heartbeats after the last one (the peer's datacatalog: 10 s, × 3).
  std::chrono::milliseconds cache_reservation_heartbeat{std::chrono::seconds(10)};
  copilot_config copilot;
};

// Reads the `tasks:` section (a JSON object, from YAML). A null section gives the defaults.
expected<platform_config> parse_platform_config(const json::value& section);

} // namespace kozmo::tasks
