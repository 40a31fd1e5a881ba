// Cells from node labels (issue 43 rule 5): HiveD's physicalCluster derived from the labels of
// the GPU nodes and a list of levels, top to bottom (`topologyFromLabels.levels`), so that the
// rest of the scheduler sees an ordinary HiveD configuration. Pure: no CAF, no I/O.
//
// Rules:
//  1. Levels: 1 to 8, names unique (ignoring case), 1-32 characters of [A-Za-z0-9-]; exactly
//     one level is the node level, `{name: node}` with no label; every other level names a
//     label key (a Kubernetes qualified name: optional DNS prefix and '/', a name of 1-63
//     characters), each key once. `default_levels()`: zone (topology.kubernetes.io/zone), rack
//     (kozmo.io/rack), node, clique (nvidia.com/gpu.clique).
//  2. A labelled level above the node level groups the nodes of its parent cell by the label's
//     value. Nodes without the label, or with a value that is not a valid label value, go into
//     one cell of that parent addressed `_unlabelled` (a label value cannot start with '_', so
//     it never collides with a real value).
//  3. A level below the node level cannot split a node's GPUs (labels are per node): it yields
//     one cell per node, addressed by the node's value (or `_unlabelled`). GPUs (leaf cells, the
//     node's GPU type) lie under the last level, indices 0..n-1.
//  4. Cell types are per level and per shape: `<LEVEL>-<counts>-<GPU>`, LEVEL the level's name in
//     capitals, counts the number of children at each level from this one down to the node,
//     then the node's GPU count, joined by 'x' (levels below the node always have one child and
//     are not counted), GPU the GPU type with '.' written '_'. Example: RACK-4x8-A100 is a rack
//     of 4 nodes of 8 A100; ZONE-2x4x8-A100 a zone of 2 such racks; NODE-8-A100 and CLIQUE-8-A100
//     the node and the cell below it. A name is the same whatever else the cluster holds (a
//     quota written with it survives nodes joining elsewhere); in the rare case of two shapes
//     writing the same name (GPU types "A.1" and "A_1"), the one met later (nodes in name order)
//     gets a '_' appended, as does a name equal to a GPU type.
//  5. HiveD's cells of one type have one child type, so a group whose members differ in shape
//     (racks of 4 and of 3 nodes in one zone; nodes of two GPU types in one rack) becomes one
//     cell per member shape, all with the group's address and each of its own type (and so of
//     its own chain when at the top).
//  6. Addresses: a node-level cell's address is the node's name; other cells' are the label
//     values (rule 2, 3); top-level cells are unique per type, lower ones per parent.
//  7. Deterministic: nodes are taken in name order and groups in value order, top-level cells
//     sorted by type then address, so the same nodes and labels always give the same text.
//  8. Only nodes with GPUs (gpus > 0), a Kubernetes node name (a DNS subdomain) and a GPU type
//     that is a valid label value take part (an API server has no others); no nodes gives an
//     empty physicalCluster.
#pragma once

#include "actors/scheduler/config.hpp"
#include "k8s/error.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::scheduler {

inline constexpr std::size_t max_topology_levels = 8;
inline constexpr std::string_view unlabelled_address = "_unlabelled";

// A node as the derivation sees it (runtime builds these from Kubernetes nodes: gpu_shape_of).
struct labelled_node {
  std::string name;
  int gpus = 0;
  std::string gpu_type;
  std::map<std::string, std::string> labels;
};

std::vector<topology_level> default_levels();

// Rule 1; the error names the level (`topologyFromLabels.levels[i]`) and what is wrong.
status check_levels(const std::vector<topology_level>& levels);

// Whether `value` is a valid Kubernetes label value (empty counts as unlabelled, not valid here).
bool valid_label_value(std::string_view value);
// A Kubernetes node name: a DNS subdomain (rule 8).
bool valid_node_name(std::string_view name);

// Rules 2-8. REQUIRES: check_levels(levels) passed (else an error naming it).
expected<physical_cluster_spec> cells_from_labels(const std::vector<labelled_node>& nodes,
                                                  const std::vector<topology_level>& levels);

// The physicalCluster section as HiveD YAML ("physicalCluster:\n  cellTypes: ...").
std::string physical_cluster_yaml(const physical_cluster_spec& spec);

// A whole HiveD configuration from a configuration with `topologyFromLabels` and no
// physicalCluster (`config_text`; empty = the default levels and one virtual cluster "default"
// owning every top-level cell): the derived physicalCluster, then every other key as given.
// A quota's cellType that names a non-top-level type held by exactly one chain is written
// qualified with that chain ("RACK-4x8-A100" -> "ZONE-1x4x8-A100.RACK-4x8-A100"), so users
// write the type of the level they mean; any other is left as written (the loader names it).
expected<std::string> config_from_labels(std::string_view config_text, const std::vector<labelled_node>& nodes);

} // namespace kozmo::scheduler
