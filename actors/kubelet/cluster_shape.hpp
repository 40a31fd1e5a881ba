// The shape of a simulated cluster: which nodes exist and what each offers.
//
// From flags (`--nodes 4 --gpus-per-node 8`) or a small YAML file (`--cluster FILE`):
//
//   nodes:
//     - name: gpu-a        # a single node, or a name prefix when count > 1 (gpu-a-0, gpu-a-1, ...)
//       count: 2
//       gpus: 8
//       gpuType: V100      # label kozmo.io/gpu-type (default "sim-gpu")
//       cpu: "64"
//       memory: 512Gi
//       labels: {zone: a}
#pragma once

#include "k8s/error.hpp"
#include "k8s/json/value.hpp"

#include <map>
#include <string>
#include <vector>

namespace kozmo::kubelet {

struct node_shape {
  std::string name;
  int gpus = 8;
  std::string gpu_type = "sim-gpu";
  std::string cpu = "64";
  std::string memory = "512Gi";
  std::string ephemeral_storage = "1Ti"; // the node's disk, as a real kubelet reports it
  std::string pods = "110";
  std::map<std::string, std::string> labels;
  // Addresses assigned by the cluster: one /24 of pod IPs per node.
  std::string internal_ip;
  std::string pod_cidr;
};

struct cluster_shape {
  std::vector<node_shape> nodes;
};

// `count` nodes named <prefix>-0 .. <prefix>-(count-1), each with `gpus` GPUs.
cluster_shape uniform_cluster(int count, int gpus, const std::string& prefix = "node");

// A cluster of exactly these nodes, with node IPs and pod ranges assigned.
cluster_shape shape_of(std::vector<node_shape> nodes);

// Parses the YAML form above; errors name the entry and field at fault.
expected<cluster_shape> parse_cluster_yaml(const std::string& yaml_text);

// The Node object a kubelet registers for this shape (metadata, spec, status with capacity,
// allocatable, Ready condition, addresses, nodeInfo).
json::value node_object(const node_shape& shape, const std::string& now_rfc3339);

// The version a simulated kubelet reports (nodeInfo.kubeletVersion and kubeProxyVersion).
inline constexpr const char* kubelet_version = "v1.32.0-kozmo-sim";

// status.nodeInfo with all ten fields a real kubelet sends (clients such as the official Python
// client refuse a Node without them): machineID and systemUUID derived from the node's name,
// bootID from its name and registration time, so a re-registration looks like a reboot.
json::value node_info(const node_shape& shape, const std::string& registered_at_rfc3339);

// The Ready / MemoryPressure / DiskPressure / PIDPressure conditions of a healthy node.
json::value node_conditions(const std::string& heartbeat_rfc3339, const std::string& since_rfc3339);

} // namespace kozmo::kubelet
