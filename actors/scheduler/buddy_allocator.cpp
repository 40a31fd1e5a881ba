// Buddy allocation for one pod; the rules are stated in buddy_allocator.hpp.
#include "actors/scheduler/buddy_allocator.hpp"

#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <tuple>

namespace kozmo::scheduler {
namespace {

bool chain_matches(const cell& c, std::string_view leaf_type) {
  return leaf_type.empty() || c.leaf_type == leaf_type;
}

// The node-level cell at or above `id`; no_cell above node level.
cell_id node_cell_of(const cell_tree& tree, cell_id id) {
  for (cell_id up = id; up != no_cell; up = tree.at(up).parent)
    if (tree.at(up).is_node_level) return up;
  return no_cell;
}

// Closeness of a candidate cell to the gang's leaves: the leaf count of the smallest cell that
// holds both the candidate and one of them, so "same switch" beats "same node" beats "same
// rack". Another chain on the same Kubernetes node counts just after anything in-chain; no
// relation at all is INT_MAX.
class proximity {
public:
  proximity(const cell_tree& tree, const std::vector<cell_id>& near) : tree_(tree) {
    for (cell_id leaf : near) {
      for (cell_id up = leaf; up != no_cell; up = tree.at(up).parent) ancestors_.insert(up);
      if (cell_id n = node_cell_of(tree, leaf); n != no_cell) nodes_.insert(tree.at(n).node);
    }
  }
  int distance(cell_id candidate) const {
    if (ancestors_.empty()) return INT_MAX;
    for (cell_id up = tree_.at(candidate).parent; up != no_cell; up = tree_.at(up).parent)
      if (ancestors_.count(up)) return tree_.at(up).leaf_count;
    cell_id n = node_cell_of(tree_, candidate);
    if (n != no_cell && nodes_.count(tree_.at(n).node)) return INT_MAX - 1;
    return INT_MAX;
  }

private:
  const cell_tree& tree_;
  std::set<cell_id> ancestors_;
  std::set<std::string> nodes_;
};

// The first `count` leaves of a free cell, tree order.
void first_leaves(const cell_tree& tree, cell_id id, int count, std::vector<cell_id>& out) {
  if (count <= 0) return;
  const cell& c = tree.at(id);
  if (c.level == 1) {
    out.push_back(id);
    return;
  }
  for (cell_id child : c.children) {
    const int before = static_cast<int>(out.size());
    first_leaves(tree, child, count, out);
    count -= static_cast<int>(out.size()) - before;
    if (count <= 0) return;
  }
}

// The smallest cell under a free cell (itself included) that still holds `count` leaves:
// follow first children while they are big enough. Every cell under a free cell is free.
cell_id smallest_holding(const cell_tree& tree, cell_id id, int count) {
  for (;;) {
    const auto& children = tree.at(id).children;
    auto big = std::find_if(children.begin(), children.end(),
                            [&](cell_id child) { return tree.at(child).leaf_count >= count; });
    if (big == children.end()) return id;
    id = *big;
  }
}

// Maximal free cells inside `id` (descending only through partly used cells).
void maximal_free_cells(const allocation_state& state, cell_id id, std::vector<cell_id>& out) {
  if (state.free_leaves(id) == 0) return;
  if (state.is_free(id)) {
    out.push_back(id);
    return;
  }
  for (cell_id child : state.tree().at(id).children) maximal_free_cells(state, child, out);
}

void sort_tree_order(const allocation_state& state, std::vector<cell_id>& cells) {
  std::sort(cells.begin(), cells.end(),
            [&](cell_id a, cell_id b) { return state.tree_rank(a) < state.tree_rank(b); });
}

} // namespace

std::vector<cell_id> node_level_cells(const allocation_state& state, std::string_view leaf_type) {
  const cell_tree& tree = state.tree();
  std::vector<cell_id> out;
  for (cell_id id = 0; id < tree.size(); ++id)
    if (tree.at(id).is_node_level && chain_matches(tree.at(id), leaf_type)) out.push_back(id);
  sort_tree_order(state, out);
  return out;
}

// Buddy rule. Walks the free lists of every matching chain from the leaves up; each maximal
// free cell F yields a candidate: the smallest cell under F that holds the pod, which must be
// at or below node level. The key is (candidate size, size of F, gang distance, free leaves
// on its node, tree order). Splitting the smallest sufficient cell, cut from the smallest
// free cell, is what keeps larger cells whole for larger pods later; the size of F only
// matters across chains or between a free cell and a bigger one holding an equal candidate.
std::optional<leaf_choice> choose_buddy_leaves(const allocation_state& state, int leaf_count,
                                               std::string_view leaf_type,
                                               const std::vector<cell_id>& near) {
  const cell_tree& tree = state.tree();
  const proximity closeness(tree, near);
  std::optional<std::tuple<int, int, int, int, int>> best_key;
  leaf_choice best;
  for (const std::string& chain : tree.chains()) {
    auto info = tree.type_info(chain);
    if (!info || (!leaf_type.empty() && info->leaf_type != leaf_type)) continue;
    for (int level = 1; level <= info->level; ++level) {
      for (cell_id free_cell : state.free_cells(chain, level)) {
        const cell& c = tree.at(free_cell);
        if (c.leaf_count < leaf_count) continue;
        const cell_id target = smallest_holding(tree, free_cell, leaf_count);
        const cell_id node = node_cell_of(tree, target);
        if (node == no_cell) continue; // the pod is bigger than this chain's nodes
        const auto key =
            std::make_tuple(tree.at(target).leaf_count, c.leaf_count,
                            closeness.distance(target), state.free_leaves(node),
                            state.tree_rank(free_cell));
        if (best_key && *best_key <= key) continue;
        best_key = key;
        best.node_cell = node;
        best.leaves.clear();
        first_leaves(tree, target, leaf_count, best.leaves);
      }
    }
  }
  if (!best_key) return std::nullopt;
  return best;
}

// Relaxed rule. Used when no single free cell can hold the pod on one node (for example after
// earlier pods fragmented every node a little): best fit over node-level cells by free leaves,
// then, inside the chosen node, whole maximal free cells smallest first so that at most one
// free cell is split.
std::optional<leaf_choice> choose_relaxed_leaves(const allocation_state& state, int leaf_count,
                                                 std::string_view leaf_type,
                                                 const std::vector<cell_id>& near) {
  const cell_tree& tree = state.tree();
  const proximity closeness(tree, near);
  std::optional<std::tuple<int, int, int>> best_key;
  cell_id best_node = no_cell;
  for (cell_id node : node_level_cells(state, leaf_type)) {
    const int free = state.free_leaves(node);
    if (free < leaf_count) continue;
    const auto key = std::make_tuple(free, closeness.distance(node), state.tree_rank(node));
    if (best_key && *best_key <= key) continue;
    best_key = key;
    best_node = node;
  }
  if (best_node == no_cell) return std::nullopt;

  std::vector<cell_id> pieces;
  maximal_free_cells(state, best_node, pieces);
  std::stable_sort(pieces.begin(), pieces.end(), [&](cell_id a, cell_id b) {
    const int la = tree.at(a).leaf_count, lb = tree.at(b).leaf_count;
    return la != lb ? la < lb : state.tree_rank(a) < state.tree_rank(b);
  });
  leaf_choice choice;
  choice.node_cell = best_node;
  choice.relaxed = true;
  for (cell_id piece : pieces) {
    const int missing = leaf_count - static_cast<int>(choice.leaves.size());
    if (missing <= 0) break;
    first_leaves(tree, piece, missing, choice.leaves);
  }
  sort_tree_order(state, choice.leaves);
  return choice;
}

std::optional<leaf_choice> choose_pod_leaves(const allocation_state& state, int leaf_count,
                                             std::string_view leaf_type,
                                             const std::vector<cell_id>& near) {
  if (leaf_count < 1) return std::nullopt;
  if (auto buddy = choose_buddy_leaves(state, leaf_count, leaf_type, near)) return buddy;
  return choose_relaxed_leaves(state, leaf_count, leaf_type, near);
}

} // namespace kozmo::scheduler
