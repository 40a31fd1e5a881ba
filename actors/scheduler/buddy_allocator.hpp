// Buddy allocation of leaf cells (GPUs) for one pod: HiveD's cell_allocation.go as free
// functions over an allocation_state. They only choose; the caller takes the leaves.
//
// Notes:
//  1. A pod's leaves always sit on one Kubernetes node, inside one node-level cell of one chain.
//  2. Buddy rule: take the smallest cell that holds N leaves within one node and is free,
//     cut from the smallest maximal free cell that contains such a cell (keep big cells whole),
//     then its first N leaves in tree order. Ties: closest to the `near` leaves (the pod's
//     gang), then the node with the fewest free leaves (fill used nodes first), then tree order.
//  3. Relaxed rule (no such free cell): any node-level cell with at least N free leaves, the
//     one with the fewest free leaves first (best fit: emptier nodes stay whole), ties by
//     closeness to `near`, then tree order. Inside it, whole maximal free cells are taken
//     smallest first; only the last one taken is split.
//  4. An empty leaf type means any type; chains are tried together, the rules above decide.
#pragma once

#include "actors/scheduler/allocation_state.hpp"

#include <optional>
#include <string_view>
#include <vector>

namespace kozmo::scheduler {

struct leaf_choice {
  cell_id node_cell = no_cell;  // the node-level cell holding every chosen leaf
  std::vector<cell_id> leaves;  // tree order
  bool relaxed = false;         // true when chosen by the relaxed rule (note 3)
};

// Buddy rule (note 2), then relaxed rule (note 3). nullopt: no node-level cell of a matching
// chain has `leaf_count` free leaves. REQUIRES: leaf_count >= 1.
std::optional<leaf_choice> choose_pod_leaves(const allocation_state& state, int leaf_count,
                                             std::string_view leaf_type,
                                             const std::vector<cell_id>& near = {});

// The two rules on their own, for tests and for callers that want only one of them.
std::optional<leaf_choice> choose_buddy_leaves(const allocation_state& state, int leaf_count,
                                               std::string_view leaf_type,
                                               const std::vector<cell_id>& near = {});
std::optional<leaf_choice> choose_relaxed_leaves(const allocation_state& state, int leaf_count,
                                                 std::string_view leaf_type,
                                                 const std::vector<cell_id>& near = {});

// Node-level cells of the chains matching `leaf_type` (all chains when empty), tree order.
std::vector<cell_id> node_level_cells(const allocation_state& state, std::string_view leaf_type);

} // namespace kozmo::scheduler
