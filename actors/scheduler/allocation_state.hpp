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
#pragma once

#include "actors/scheduler/cell_tree.hpp"
#include "k8s/error.hpp"

#include <map>
#include <set>
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
  bool is_free(cell_id id) const { return free_leaves_.at(id) == tree_->at(id).leaf_count; }
  int free_leaves(cell_id id) const { return free_leaves_.at(id); }
  // The group using a leaf; empty when free. REQUIRES: `leaf` is a leaf cell.
  const std::string& user_of(cell_id leaf) const { return user_.at(leaf); }
  // Leaves a group holds, in tree order.
  std::vector<cell_id> leaves_of(std::string_view group) const;
  bool holds(std::string_view group) const;

  // Maximal free cells of `level` in `chain`, tree order (see note 1).
  std::vector<cell_id> free_cells(std::string_view chain, int level) const;
  // How many cells free_cells would return, without building the list.
  int free_count(std::string_view chain, int level) const;
  // Calls fn on free_cells(chain, level) in order until fn returns false (no list built).
  template <class Fn>
  void visit_free(std::string_view chain, int level, Fn&& fn) const {
    auto c = free_lists_.find(chain);
    if (c == free_lists_.end()) return;
    auto l = c->second.find(level);
    if (l == c->second.end()) return;
    for (int r : l->second)
      if (!fn(by_rank_[r])) return;
  }
  // Position of a cell in a preorder walk of the forest: the "tree order" of notes and tests.
  int tree_rank(cell_id id) const { return rank_.at(id); }

  // Marks leaves as used by `group`. Errors (nothing changed): a cell that is not a leaf, a
  // leaf already in use, a leaf listed twice, an empty group name.
  status take(const std::vector<cell_id>& leaves, std::string_view group);
  // Frees every leaf of `group`; returns how many. Unknown group: 0.
  int release(std::string_view group);

  bool operator==(const allocation_state& other) const;

private:
  void take_leaf(cell_id leaf, const std::string& group);
  void release_leaf(cell_id leaf);
  void add_free(cell_id id);
  void remove_free(cell_id id);

  const cell_tree* tree_;
  std::vector<int> free_leaves_;
  std::vector<std::string> user_;
  std::vector<int> rank_;
  // chain -> level -> tree ranks of maximal free cells; by_rank_ maps back.
  std::map<std::string, std::map<int, std::set<int>>, std::less<>> free_lists_;
  std::vector<cell_id> by_rank_;
  std::map<std::string, std::set<int>, std::less<>> groups_; // group -> leaf ranks
};

} // namespace kozmo::scheduler
