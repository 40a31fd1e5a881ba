// corev1.Node: what the scheduler needs to know about a machine (labels, taints,
// schedulability, capacity such as "nvidia.com/gpu": "8", health conditions).
#pragma once

#include "k8s/model/object_meta.hpp"
#include "k8s/model/pod.hpp"

#include <string_view>

namespace kozmo::k8s {

struct taint {
  std::string key;
  std::string value;
  std::string effect; // "NoSchedule", "PreferNoSchedule", "NoExecute"
  std::optional<time_point> time_added;
  friend bool operator==(const taint&, const taint&) = default;
};

struct node_spec {
  std::string pod_cidr;
  std::vector<std::string> pod_cidrs;
  std::string provider_id;
  bool unschedulable = false;
  std::vector<taint> taints;
  friend bool operator==(const node_spec&, const node_spec&) = default;
};

struct node_address {
  std::string type; // "InternalIP", "Hostname", ...
  std::string address;
  friend bool operator==(const node_address&, const node_address&) = default;
};

struct node_system_info {
  std::string machine_id;
  std::string system_uuid;
  std::string boot_id;
  std::string kube_proxy_version;
  std::string kernel_version;
  std::string os_image;
  std::string container_runtime_version;
  std::string kubelet_version;
  std::string operating_system;
  std::string architecture;
  friend bool operator==(const node_system_info&, const node_system_info&) = default;
};

struct node_status {
  resource_list capacity;
  resource_list allocatable;
  std::string phase;
  std::vector<condition> conditions; // "Ready", "MemoryPressure", ...
  std::vector<node_address> addresses;
  node_system_info node_info;
  friend bool operator==(const node_status&, const node_status&) = default;
};

struct node {
  static constexpr std::string_view api_version = "v1";
  static constexpr std::string_view kind = "Node";
  static constexpr std::string_view resource = "nodes";
  static constexpr bool namespaced = false;

  object_meta metadata;
  node_spec spec;
  node_status status;
  friend bool operator==(const node&, const node&) = default;
};

} // namespace kozmo::k8s
