// corev1.Pod: the parts of spec and status that Kozmo builds, schedules and watches.
//
// Not modelled (skipped when decoding): volumes and volumeMounts, probes, securityContext and the other
// container details Kozmo never decides on. A pod created from a user's template (a training
// job's replica spec) must therefore be built by editing the template's JSON, not by
// round-tripping it through pod_spec, or those fields would be lost.
#pragma once

#include "k8s/json/value.hpp"
#include "k8s/model/boxed.hpp"
#include "k8s/model/object_meta.hpp"
#include "k8s/model/quantity.hpp"

#include <string_view>

namespace kozmo::k8s {

using resource_list = flat_map<std::string, quantity>; // "cpu" → 500m, "nvidia.com/gpu" → 8

struct object_field_selector {
  std::string api_version;
  std::string field_path; // "metadata.name", "status.podIP"
  friend bool operator==(const object_field_selector&, const object_field_selector&) = default;
};

struct key_selector { // configMapKeyRef / secretKeyRef
  std::string name;
  std::string key;
  std::optional<bool> optional;
  friend bool operator==(const key_selector&, const key_selector&) = default;
};

struct resource_field_selector {
  std::string container_name;
  std::string resource; // "limits.nvidia.com/gpu"
  friend bool operator==(const resource_field_selector&, const resource_field_selector&) = default;
};

struct env_var_source {
  std::optional<object_field_selector> field_ref;
  std::optional<resource_field_selector> resource_field_ref;
  std::optional<key_selector> config_map_key_ref;
  std::optional<key_selector> secret_key_ref;
  friend bool operator==(const env_var_source&, const env_var_source&) = default;
};

struct env_var {
  std::string name;
  std::string value;
  boxed<env_var_source> value_from; // rare: kept out of line so that env vectors stay small
  friend bool operator==(const env_var&, const env_var&) = default;
};

struct container_port {
  std::string name;
  std::int32_t container_port = 0;
  std::string protocol; // "TCP" when empty, as the server defaults it
  std::int32_t host_port = 0;
  // (the member container_port hides the struct's name inside it)
  friend bool operator==(const struct container_port&, const struct container_port&) = default;
};

struct resource_requirements {
  resource_list requests;
  resource_list limits;
  friend bool operator==(const resource_requirements&, const resource_requirements&) = default;
};

struct container {
  std::string name;
  std::string image;
  std::string image_pull_policy;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::string working_dir;
  std::vector<env_var> env;
  std::vector<container_port> ports;
  resource_requirements resources;
  friend bool operator==(const container&, const container&) = default;
};

struct toleration {
  std::string key;
  std::string operator_; // "Exists" or "Equal"; "operator" on the wire
  std::string value;
  std::string effect; // "NoSchedule", "PreferNoSchedule", "NoExecute"
  std::optional<std::int64_t> toleration_seconds;
  friend bool operator==(const toleration&, const toleration&) = default;
};

struct node_selector_requirement {
  std::string key;
  std::string operator_; // "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"; "operator" on the wire
  std::vector<std::string> values;
  friend bool operator==(const node_selector_requirement&, const node_selector_requirement&) = default;
};

struct node_selector_term {
  std::vector<node_selector_requirement> match_expressions; // on node labels
  std::vector<node_selector_requirement> match_fields;      // on node fields (metadata.name)
  friend bool operator==(const node_selector_term&, const node_selector_term&) = default;
};

struct preferred_scheduling_term {
  std::int32_t weight = 0;
  node_selector_term preference;
  friend bool operator==(const preferred_scheduling_term&, const preferred_scheduling_term&) = default;
};

struct node_affinity {
  // requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms (ORed); nullopt when absent.
  std::optional<std::vector<node_selector_term>> required;
  // preferredDuringSchedulingIgnoredDuringExecution.
  std::vector<preferred_scheduling_term> preferred;
  friend bool operator==(const node_affinity&, const node_affinity&) = default;
};

struct affinity {
  std::optional<kozmo::k8s::node_affinity> node_affinity;
  json::value pod_affinity;      // as sent; null when absent (Kozmo places gangs itself)
  json::value pod_anti_affinity; // as sent; null when absent
  friend bool operator==(const affinity&, const affinity&) = default;
};

struct pod_spec {
  std::vector<container> init_containers;
  std::vector<container> containers;
  std::string restart_policy; // "Always", "OnFailure", "Never"
  std::optional<std::int64_t> termination_grace_period_seconds;
  std::optional<std::int64_t> active_deadline_seconds;
  std::string dns_policy;
  string_map node_selector;
  std::string service_account_name;
  std::string node_name;
  bool host_network = false;
  std::string hostname;
  std::string subdomain;
  std::optional<kozmo::k8s::affinity> affinity;
  std::string scheduler_name;
  std::vector<toleration> tolerations;
  std::string priority_class_name;
  std::optional<std::int32_t> priority;
  friend bool operator==(const pod_spec&, const pod_spec&) = default;
};

struct container_state_waiting {
  std::string reason; // "ContainerCreating", "ImagePullBackOff", "CrashLoopBackOff"
  std::string message;
  friend bool operator==(const container_state_waiting&, const container_state_waiting&) = default;
};

struct container_state_running {
  std::optional<time_point> started_at;
  friend bool operator==(const container_state_running&, const container_state_running&) = default;
};

struct container_state_terminated {
  std::int32_t exit_code = 0;
  std::int32_t signal = 0;
  std::string reason; // "Completed", "Error", "OOMKilled"
  std::string message;
  std::optional<time_point> started_at;
  std::optional<time_point> finished_at;
  std::string container_id;
  friend bool operator==(const container_state_terminated&, const container_state_terminated&) = default;
};

// At most one member is set; none means the state is unknown (Kubernetes then reads "waiting").
struct container_state {
  std::optional<container_state_waiting> waiting;
  std::optional<container_state_running> running;
  std::optional<container_state_terminated> terminated;
  friend bool operator==(const container_state&, const container_state&) = default;
};

struct container_status {
  std::string name;
  container_state state;
  container_state last_state;
  bool ready = false;
  std::int32_t restart_count = 0;
  std::string image;
  std::string image_id;
  std::string container_id;
  std::optional<bool> started;
  friend bool operator==(const container_status&, const container_status&) = default;
};

struct pod_status {
  std::string phase; // "Pending", "Running", "Succeeded", "Failed", "Unknown"
  std::vector<condition> conditions;
  std::string message;
  std::string reason;
  std::string nominated_node_name;
  std::string host_ip;
  std::string pod_ip;
  std::vector<std::string> pod_ips; // podIPs[].ip
  std::optional<time_point> start_time;
  std::vector<container_status> init_container_statuses;
  std::vector<container_status> container_statuses;
  std::string qos_class;
  friend bool operator==(const pod_status&, const pod_status&) = default;
};

struct pod {
  static constexpr std::string_view api_version = "v1";
  static constexpr std::string_view kind = "Pod";
  static constexpr std::string_view resource = "pods";
  static constexpr bool namespaced = true;

  object_meta metadata;
  pod_spec spec;
  pod_status status;
  friend bool operator==(const pod&, const pod&) = default;
};

// corev1.PodTemplateSpec: what workload kinds (PodTemplate, the training jobs' replica specs)
// embed to describe the pods they create.
struct pod_template_spec {
  object_meta metadata;
  pod_spec spec;
  friend bool operator==(const pod_template_spec&, const pod_template_spec&) = default;
};

} // namespace kozmo::k8s
