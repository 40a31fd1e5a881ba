// Virtual clusters resolved against the physical cell forest, and the check that they all fit.
//
// Notes:
//  1. A VC cell type names a chain first: "DGX2-V100-NODE" means the top-level cells of that
//     type, not every DGX2-V100-NODE inside a rack; "4-DGX2-V100-NODE.2-DGX2-V100-NODE" means
//     the 2-DGX2-V100-NODE cells inside 4-DGX2-V100-NODE racks. Each dotted step must be the
//     child type of the one before.
//  2. A pinned cell belongs to exactly one VC, on top of its virtualCells quota.
//  3. Fit (HiveD's "invalid initial assignment"): per chain, the VCs' cells of every level must
//     be carvable from the physical cells that hold no pinned cell, larger cells first. All
//     cells of one type in one chain are alike, so taking whole cells top-down is optimal.
//  4. Borrowing limits name a cell type the way virtualCells do (plain or qualified): a
//     lendingLimit one of the VC's own quota cell types, a borrowingLimit one some VC has;
//     a limit counts cells of the plain type (the last step of a qualified name).
#pragma once

#include "actors/scheduler/cell_tree.hpp"
#include "actors/scheduler/config.hpp"
#include "k8s/error.hpp"

#include <map>
#include <string>
#include <vector>

namespace kozmo::scheduler {

// `cellNumber` cells of `cell_type` (level `level`) in chain `chain`.
struct vc_cell_quota {
  std::string qualified_type; // as written in the config
  std::string chain;
  std::string cell_type;
  int level = 1;
  int count = 0;
};

struct virtual_cluster {
  std::string name;
  std::vector<vc_cell_quota> cells;
  std::vector<cell_id> pinned_cells;      // in pinnedCells order
  std::vector<std::string> pinned_ids;
  // lendingLimit / borrowingLimit by plain cell type (note 4: "RACK.NODE" counts as "NODE").
  std::map<std::string, int> lending_limit;
  std::map<std::string, int> borrowing_limit;
};

// Resolves and checks every VC; errors name the VC, the cell type or the pinnedCellId.
expected<std::vector<virtual_cluster>> resolve_virtual_clusters(const config& cfg,
                                                                const cell_tree& tree);

// Everything the scheduler needs from its configuration file, checked.
struct cluster_model {
  config cfg;
  cell_tree tree;
  std::vector<virtual_cluster> vcs; // sorted by name
};

// parse_config + cell_tree::build + resolve_virtual_clusters.
expected<cluster_model> load_cluster_model(std::string_view yaml_text);

} // namespace kozmo::scheduler
