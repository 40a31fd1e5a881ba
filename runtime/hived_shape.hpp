// `kozmo local --cluster FILE` with a HiveD configuration: its node-level cells become the
// simulated nodes, each with as many GPUs as the cell tree gives it.
#pragma once

#include "actors/kubelet/cluster_shape.hpp"
#include "k8s/error.hpp"

#include <string>

namespace kozmo::runtime {

// Whether `yaml_text` looks like a HiveD configuration (has `physicalCluster`).
bool is_hived_config(const std::string& yaml_text);

// One node per Kubernetes node named by the config's node-level cells; nvidia.com/gpu is the
// node's total leaf count. A node carrying several leaf types (several chains) gets
// kozmo.io/gpu-type = the type with most GPUs, and a kozmo.io/gpus.<type> label per type.
expected<kubelet::cluster_shape> shape_from_hived_config(const std::string& yaml_text);

} // namespace kozmo::runtime
