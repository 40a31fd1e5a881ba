// HiveD's scheduler configuration, read unchanged from its YAML (pkg/api/config.go in
// microsoft/hivedscheduler). This header holds the configuration as written; cell_tree.hpp
// turns it into the physical cell forest and virtual_clusters.hpp checks the VCs against it.
//
// Notes:
//  1. parse_config never throws; a malformed document, a wrong scalar type or an unknown key
//     comes back as an error whose message names the key path ("physicalCluster.cellTypes.X.foo").
//  2. Parsing checks shape only. Semantics (cycles, node levels, addresses, quotas) are checked
//     when the cell tree and the virtual clusters are built.
#pragma once

#include "k8s/error.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::scheduler {

// `cellTypes.<name>`. A name that is not a key of cellTypes is a leaf cell type (one GPU).
struct cell_type_spec {
  std::string child_cell_type;
  int child_cell_number = 0;
  bool is_node_level = false;
};

// `physicalCells[]`, recursive. Empty strings mean "omitted" (the tree builder infers them).
struct physical_cell_spec {
  std::string cell_type;
  std::string cell_address;
  std::string pinned_cell_id;
  std::vector<physical_cell_spec> cell_children;
};

struct physical_cluster_spec {
  std::map<std::string, cell_type_spec> cell_types;
  std::vector<physical_cell_spec> physical_cells;
};

// `virtualClusters.<vc>.virtualCells[]`; cell_type may be qualified: "3-K80-NODE.K80-NODE".
struct virtual_cell_spec {
  std::string cell_type;
  int cell_number = 0;
};

struct virtual_cluster_spec {
  std::vector<virtual_cell_spec> virtual_cells;
  std::vector<std::string> pinned_cells; // pinnedCells[].pinnedCellId
  // Kozmo's borrowing (scheduler_core.hpp note 9): `lendingLimit: {<cellType>: <count>}`, the
  // VC's idle quota cells of that type others may borrow at once (absent: none), and
  // `borrowingLimit: {<cellType>: <count>}`, the cells of that type it may borrow at once.
  std::map<std::string, int> lending_limit;
  std::map<std::string, int> borrowing_limit;
};

// Top-level `borrowing: {enabled: true, reclaimTimeout: 30s}`: off unless enabled; a lender's
// gang gets a lent cell back at most reclaimTimeout after it asks (0s: at once).
struct borrowing_spec {
  bool enabled = false;
  std::int64_t reclaim_timeout_ms = 30'000;
};

// `topologyFromLabels.levels[]` (label_topology.hpp): one level of cells derived from node
// labels, top to bottom; `label` is empty for the node level (`{name: node}`).
struct topology_level {
  std::string name;
  std::string label;
};

struct config {
  std::string kube_api_server_address;
  std::string kube_config_file_path;
  std::string web_server_address; // "" = not set (HiveD's own default is ":9096")
  int force_pod_bind_threshold = 3;
  int waiting_pod_scheduling_block_millisec = 0;
  physical_cluster_spec physical_cluster;
  std::map<std::string, virtual_cluster_spec> virtual_clusters;
  borrowing_spec borrowing;
  // `topologyFromLabels`: the physical cells come from node labels (label_topology.hpp), not
  // from physicalCluster (giving both is an error). Empty when the key is absent.
  std::vector<topology_level> topology_from_labels;
  bool has_topology_from_labels = false;
};

// Parses HiveD's YAML. REQUIRES: nothing; an empty document yields the defaults.
expected<config> parse_config(std::string_view yaml_text);

} // namespace kozmo::scheduler
