// `kozmo local --cluster FILE` with a HiveD configuration: its node-level cells become the
// simulated nodes, each with as many GPUs as the cell tree gives it.
#pragma once

#include "actors/kubelet/cluster_shape.hpp"
#include "actors/scheduler/label_topology.hpp"
#include "k8s/error.hpp"
#include "k8s/model/node.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kozmo::json {
class value;
}

namespace kozmo::runtime {

// Whether `yaml_text` looks like a HiveD configuration (has `physicalCluster`).
bool is_hived_config(const std::string& yaml_text);

// A trivial HiveD configuration for a simple cluster shape (kozmo's cluster.yaml or
// --nodes/--gpus-per-node), so that `schedulerName: kozmo` works in every `kozmo local`:
//  - one chain per (GPU type, GPUs per node): node-level cells "<TYPE>-NODE" (or
//    "<TYPE>-<N>GPU-NODE" when one type comes in several node sizes) with address = node name;
//  - below the node, pairs of GPUs under a switch ("-SWITCH") when N is even and at least 4,
//    and pairs of switches under a socket ("-SOCKET") when that divides evenly again:
//    8 GPUs = 2 sockets x 2 switches x 2 GPUs, as on a DGX-1 style board;
//  - one virtual cluster "default" owning every node.
// Nodes without GPUs get no cell. Returns YAML text.
std::string hived_config_from_shape(const kubelet::cluster_shape& shape);

// The GPU nodes of a NodeList (the API server's JSON), for a scheduler started without a HiveD
// configuration (`kozmo controller`): every node whose allocatable nvidia.com/gpu is above
// zero and that is not being deleted, with that many GPUs, of the type its kozmo.io/gpu-type
// label names (else nvidia.com/gpu.product, GPU feature discovery's label; else "gpu"). Sorted
// by name, so that the same nodes always give the same configuration.
kubelet::cluster_shape shape_from_nodes(const json::value& node_list);
kubelet::cluster_shape shape_from_nodes(const std::vector<k8s::node>& nodes);
// The nodes of a NodeList (items that do not decode are left out).
std::vector<k8s::node> nodes_of(const json::value& node_list);
// One node's part of that shape; nullopt for a node without GPUs or being deleted.
std::optional<kubelet::node_shape> gpu_shape_of(const k8s::node& node);

// Cells from node labels (actors/scheduler/label_topology.hpp). The GPU nodes (gpu_shape_of)
// with their labels; whether any of them carries a valid value for one of `levels`' labels;
// and a node's signature for a derivation from `levels` (GPU type and count, and the value of
// each label the levels read), "" for a node without GPUs: a change re-derives the cells.
std::vector<scheduler::labelled_node> labelled_nodes(const std::vector<k8s::node>& nodes);
bool carries_topology_labels(const std::vector<k8s::node>& nodes, const std::vector<scheduler::topology_level>& levels);
std::string topology_signature(const k8s::node& node, const std::vector<scheduler::topology_level>& levels);
bool carries_topology_labels(const kubelet::cluster_shape& shape, const std::vector<scheduler::topology_level>& levels);

// The configuration `kozmo controller` (and `kozmo local` with topology labels) derives with
// none given: from the default levels' labels when a GPU node carries one, else
// hived_config_from_shape, as before labels were read.
std::string derived_config_of(const std::vector<k8s::node>& nodes);

// One node per Kubernetes node named by the config's node-level cells; nvidia.com/gpu is the
// node's total leaf count. A node carrying several leaf types (several chains) gets
// kozmo.io/gpu-type = the type with most GPUs, and a kozmo.io/gpus.<type> label per type.
expected<kubelet::cluster_shape> shape_from_hived_config(const std::string& yaml_text);

} // namespace kozmo::runtime
