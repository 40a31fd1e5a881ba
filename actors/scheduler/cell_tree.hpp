// The physical cell forest: HiveD's physicalCluster turned into cells with parents, children,
// full addresses and GPU indices, checked once and immutable afterwards.
//
// Notes:
//  1. Levels count from the leaves: a leaf cell (one GPU) is level 1, its parent level 2, ...
//     A cell type has one level, because each type has exactly one child type.
//  2. Addresses (full form): a node-level cell's address is its Kubernetes node name; below it
//     "node/<a>/<b>/<gpu>"; above it "<top>/<a>/..." where <top> is the given address of the
//     top-level cell or its index in physicalCells. An omitted address below node level is
//     the cell's index among cells of its type within the node-level cell (so GPU indices
//     restart at 0 per node-level cell); above node level, within the top-level cell.
//  3. Buddies follow the tree, not index arithmetic: children keep the order written in the
//     YAML, and leaf_indices come out in tree order (node 1.0.0.0 of HiveD's design config
//     lists [1,3,4,7,0,2,6,5]).
//  4. One Kubernetes node may carry several node-level cells of different chains; their GPU
//     indices must not collide.
//  5. Addresses are unique per chain (the top-level cell type); node names repeat across chains.
#pragma once

#include "actors/scheduler/config.hpp"
#include "k8s/error.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::scheduler {

using cell_id = std::uint32_t;
inline constexpr cell_id no_cell = UINT32_MAX;

struct cell {
  std::string type;        // cell type; for a leaf, the leaf cell type ("DGX2-V100")
  std::string chain;       // type of the top-level cell this cell belongs to
  std::string leaf_type;   // the leaf cell type at the bottom of this cell's chain
  int level = 1;           // 1 = leaf
  bool is_node_level = false;
  std::string address;     // full address, see note 2
  std::string node;        // Kubernetes node name; empty above node level
  int node_id = -1;        // `node`'s index in the tree's nodes (sorted by name); -1 above node level
  std::vector<int> leaf_indices; // GPU indices on `node`, tree order; empty above node level
  int leaf_count = 0;      // leaves under this cell (any level)
  cell_id parent = no_cell;
  std::vector<cell_id> children;
  std::string pinned_id;   // pinnedCellId, empty if not pinned
  bool holds_pinned = false; // this cell or a descendant is pinned
};

// What the cell types imply, per type name (leaf types included).
struct cell_type_info {
  std::string name;
  std::string child_type;  // empty for a leaf type
  int child_number = 0;
  bool is_node_level = false;
  bool is_leaf = false;
  int level = 1;
  std::string leaf_type;
};

// A Kubernetes node and how many GPUs of each leaf type its node-level cells hold.
struct node_leaves {
  std::string node;
  std::map<std::string, int> leaves_by_type;
};

class cell_tree {
public:
  // Builds and validates. Errors name the offending cell type, address or pinnedCellId.
  static expected<cell_tree> build(const physical_cluster_spec& spec);

  std::size_t size() const { return cells_.size(); }
  const cell& at(cell_id id) const { return cells_.at(id); }
  // A cell's parent (no_cell for a top): the walks up the tree that every GPU's change takes
  // read these few bytes instead of a whole cell each step.
  cell_id parent(cell_id id) const { return parents_[id]; }
  // Top-level cells in physicalCells order.
  const std::vector<cell_id>& top_cells() const { return tops_; }

  // Type facts; nullopt for a name that no physical cell or cell type mentions.
  std::optional<cell_type_info> type_info(std::string_view type) const;

  // Nodes sorted by name, with their GPU count per leaf type.
  std::vector<node_leaves> nodes() const;
  // Leaf cells of a node, all chains, physicalCells order then tree order; empty if unknown.
  std::vector<cell_id> leaf_cells_of(std::string_view node) const;
  // Appends the leaf cells under `id` (itself when a leaf), tree order.
  void append_leaves(cell_id id, std::vector<cell_id>& out) const;
  // Node-level cells on a node (several when the node carries several chains).
  std::vector<cell_id> node_level_cells_of(std::string_view node) const;
  // The chain (top-level cell type) of a cell.
  const std::string& chain_of(cell_id id) const { return cells_.at(id).chain; }
  // Chains present, sorted.
  std::vector<std::string> chains() const;

  std::optional<cell_id> find(std::string_view chain, std::string_view address) const;
  std::optional<cell_id> find_pinned(std::string_view pinned_cell_id) const;

private:
  friend class cell_tree_builder;
  std::vector<cell> cells_;
  std::vector<cell_id> parents_; // cells_[id].parent, dense
  std::vector<cell_id> tops_;
  std::map<std::string, cell_type_info, std::less<>> types_;
  std::map<std::string, cell_id, std::less<>> pinned_;
  std::map<std::string, std::map<std::string, cell_id, std::less<>>, std::less<>> by_address_;
  std::map<std::string, std::vector<cell_id>, std::less<>> node_cells_; // node-level cells
};

} // namespace kozmo::scheduler
