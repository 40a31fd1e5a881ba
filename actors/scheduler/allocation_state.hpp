// Who uses which physical cell, kept beside the immutable cell_tree: per-leaf owner (an
// affinity group name), free-leaf counts per cell, and per-chain buddy free lists by level.
//
// Notes:
//  1. A cell is *free* when every leaf under it is free. The free list of (chain, level) holds
//     the maximal free cells of that level: free cells whose parent is not free (or that are
//     top-level). This is the classic buddy free list: taking a leaf splits the maximal free
//     cell above it, releasing the last used leaf under a cell merges its buddies back.
//  2. The state is a pure function of which leaves are used: any sequence of take/release that
//     ends with the same used leaves ends in an equal state (operator==). Rollback is release.
//  3. take/release check their preconditions and change nothing on error.
//  4. Not thread-safe; the scheduler serialises calls (HiveD: one lock around Schedule/Add/Delete).
//  5. It is on the scheduler's hot path (every virtual-cell binding takes a cell's leaves), so
//     names are interned: chains and groups are small integers inside, and each free list is a
//     bitmap over the cells of its (chain, level) in tree order, not a node-based set.
#pragma once

#include "actors/scheduler/cell_tree.hpp"
#include "k8s/error.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::scheduler {

class allocation_state {
public:
  // Everything free. The tree must outlive the state.
  explicit allocation_state(const cell_tree& tree);

  const cell_tree& tree() const { return *tree_; }

  // True when every leaf under `id` is free.
  bool is_free(cell_id id) const { return free_leaves_[id] == tree_->at(id).leaf_count; }
  int free_leaves(cell_id id) const { return free_leaves_.at(id); }
  // The group using a leaf; empty when free. REQUIRES: `leaf` is a leaf cell.
  const std::string& user_of(cell_id leaf) const;
  // Leaves a group holds, in tree order.
  std::vector<cell_id> leaves_of(std::string_view group) const;
  bool holds(std::string_view group) const;

  // Maximal free cells of `level` in `chain`, tree order (see note 1).
  std::vector<cell_id> free_cells(std::string_view chain, int level) const;
  // How many cells free_cells would return, without building the list.
  int free_count(std::string_view chain, int level) const {
    const free_list* l = list(chain, level);
    return l ? l->count : 0;
  }
  // Calls fn on free_cells(chain, level) in order until fn returns false (no list built).
  template <class Fn>
  void visit_free(std::string_view chain, int level, Fn&& fn) const {
    const free_list* l = list(chain, level);
    if (!l || l->count == 0) return;
    for (std::size_t w = 0; w < l->bits.size(); ++w)
      for (std::uint64_t word = l->bits[w]; word != 0; word &= word - 1)
        if (!fn(l->cells[w * 64 + static_cast<std::size_t>(__builtin_ctzll(word))])) return;
  }
  // Spare cells: a mark the caller keeps (cluster_state: no pod uses the cell and no GPU in it
  // is bad; a spare cell's descendants must be spare too), so that the best place to bind a
  // virtual cell is found with a few word operations instead of a scan. Every cell starts
  // spare. The caller re-marks the path from a leaf to its top cell after the leaf changed:
  // spare(cell) says whether each cell on it is spare now.
  template <class Spare>
  void set_spare_path(cell_id leaf, Spare&& spare) {
    cell_id highest_changed = no_cell;
    for (cell_id up = leaf; up != no_cell; up = tree_->parent(up)) {
      const char now = spare(up) ? 1 : 0;
      if (now != spare_[up]) highest_changed = up;
      spare_[up] = now;
    }
    if (highest_changed == no_cell) return;
    // Depths change from the leaf up to the highest re-marked cell, and above it only while
    // they keep changing.
    bool below_changed = true;
    for (cell_id up = leaf; up != no_cell; up = tree_->parent(up)) {
      const bool changed = update_spare_depth(up);
      if (below_changed && up == highest_changed) below_changed = false;
      if (!below_changed && !changed) break;
    }
  }
  // The first cell of free_cells(chain, level), tree order, that holds a spare cell of
  // `inner_level` (<= level); no_cell if none.
  cell_id first_free_holding_spare(std::string_view chain, int level, int inner_level) const;
  // The first spare cell of `inner_level` under `id` in tree order. REQUIRES: one exists.
  cell_id first_spare_under(cell_id id, int inner_level) const;
  // Position of a cell in a preorder walk of the forest: the "tree order" of notes and tests.
  int tree_rank(cell_id id) const { return rank_[id]; }
  // Asks the cache for tree_rank(id) ahead of a scan that reads it for many cells.
  void prefetch_rank(cell_id id) const { __builtin_prefetch(&rank_[id]); }

  // Marks leaves as used by `group`. Errors (nothing changed): a cell that is not a leaf, a
  // leaf already in use, a leaf listed twice, an empty group name.
  status take(const std::vector<cell_id>& leaves, std::string_view group);
  // Frees every leaf of `group`; returns how many. Unknown group: 0.
  int release(std::string_view group);

  bool operator==(const allocation_state& other) const;

private:
  // The maximal free cells of one (chain, level): bit i stands for cells[i], tree order.
  struct free_list {
    std::vector<cell_id> cells;
    std::vector<std::uint64_t> bits;
    // holds_spare[k]: bit i set when cells[i] holds a spare cell of level k (k <= this level).
    std::vector<std::vector<std::uint64_t>> holds_spare;
    int count = 0;
  };
  const free_list* list(std::string_view chain, int level) const;
  bool update_spare_depth(cell_id id);
  void take_leaf(cell_id leaf, int group);
  void release_leaf(cell_id leaf);
  void add_free(cell_id id);
  void remove_free(cell_id id);

  const cell_tree* tree_;
  std::vector<int> free_leaves_;
  std::vector<int> rank_;
  std::vector<std::string> chains_;             // chain index -> name
  std::vector<std::vector<free_list>> lists_;   // [chain][level]
  std::vector<int> chain_;                      // cell -> chain index
  std::vector<int> position_;                   // cell -> bit in its (chain, level) list
  std::vector<char> spare_;
  // The highest level at which the cell holds a spare cell (itself when spare); 0: none.
  std::vector<int> spare_depth_;
  std::vector<int> user_;                       // leaf -> group index, -1 free
  std::vector<std::string> group_names_;        // group index -> name ("" once released)
  std::vector<std::vector<cell_id>> group_leaves_;
  std::vector<int> recycled_;                   // group indices free for reuse
  std::map<std::string, int, std::less<>> group_ids_;
};

} // namespace kozmo::scheduler
