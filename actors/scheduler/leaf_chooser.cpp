// Cost-aware buddy choice of one pod's GPUs; the rules are in leaf_chooser.hpp.
#include "actors/scheduler/leaf_chooser.hpp"

#include <algorithm>
#include <climits>
#include <set>
#include <tuple>
#include <unordered_map>

namespace kozmo::scheduler {
namespace {

struct counts {
  int usable = 0;
  int free = 0;
  int weight = 0;  // summed cost of the usable leaves
  bool whole = false;
};

// Per-call scratch: counts for every cell under the roots.
struct survey {
  const cluster_state& state;
  const pick_request& req;
  std::vector<counts>& at;  // indexed by cell id; written before read for every surveyed cell

  counts walk(cell_id id) {
    const cell& c = state.tree().at(id);
    counts out;
    if ((req.cost_implies_avail && req.max_cost == 0 && state.avail_leaves(id) == 0) ||
        state.barrier(id) >= req.unusable_from) {
      at[id] = out; // nothing usable below: children are never read
      return out;
    }
    if (c.children.empty()) {
      const int cost = req.cost(id);
      out.usable = cost == 0 || (cost > 0 && req.max_cost > 0) ? 1 : 0;
      out.free = cost == 0 ? 1 : 0;
      out.weight = out.usable ? cost : 0;
      out.whole = out.usable == 1;
    } else {
      out.whole = true;
      for (cell_id child : c.children) {
        const counts sub = walk(child);
        out.usable += sub.usable;
        out.free += sub.free;
        out.weight += sub.weight;
        out.whole = out.whole && sub.whole;
      }
    }
    at[id] = out;
    return out;
  }
};

// Closeness to the gang's GPUs so far: the leaf count of the smallest cell holding the
// candidate and one of them; the same Kubernetes node in another chain counts just after.
class proximity {
public:
  proximity(const cluster_state& state, const std::vector<cell_id>* near) : state_(state) {
    if (!near || near->empty()) return;
    marked_.resize(state.tree().size(), 0);
    for (cell_id leaf : *near) {
      for (cell_id up = leaf; up != no_cell && !marked_[up]; up = state.tree().at(up).parent) {
        marked_[up] = 1;
        ancestors_.push_back(up);
      }
      const std::string* node = &state.tree().at(leaf).node;
      if (nodes_.empty() || nodes_.back() != node) nodes_.push_back(node);
    }
  }
  ~proximity() {
    for (cell_id id : ancestors_) marked_[id] = 0;
  }
  proximity(const proximity&) = delete;
  proximity& operator=(const proximity&) = delete;

  int distance(cell_id candidate) const {
    if (ancestors_.empty()) return INT_MAX;
    const cell_tree& t = state_.tree();
    for (cell_id up = t.at(candidate).parent; up != no_cell; up = t.at(up).parent)
      if (marked_[up]) return t.at(up).leaf_count;
    const std::string& node = t.at(candidate).node;
    for (const std::string* n : nodes_)
      if (*n == node) return INT_MAX - 1;
    return INT_MAX;
  }

private:
  const cluster_state& state_;
  // Marks on the gang's GPUs' ancestors; shared scratch, cleared again by the destructor.
  static thread_local std::vector<char> marked_;
  std::vector<cell_id> ancestors_;
  std::vector<const std::string*> nodes_;
};

thread_local std::vector<char> proximity::marked_;

// Usable leaves of a cell, free ones first, then tree order; at most `count`. Appends in
// tree order when every usable leaf costs the same (always so on a free-only pass).
void take_usable(const cluster_state& state, const pick_request& req, cell_id id, int count,
                 std::vector<cell_id>& out) {
  thread_local std::vector<cell_id> stack;
  thread_local std::vector<std::pair<int, cell_id>> leaves; // cost, leaf
  stack.assign(1, id);
  leaves.clear();
  bool mixed = false;
  while (!stack.empty()) {
    const cell_id cur = stack.back();
    stack.pop_back();
    const auto& children = state.tree().at(cur).children;
    if (children.empty()) {
      const int cost = req.cost(cur);
      if (cost == 0 || (cost > 0 && req.max_cost > 0)) {
        mixed = mixed || (!leaves.empty() && leaves.front().first != cost);
        leaves.push_back({cost, cur});
      }
      continue;
    }
    if (req.cost_implies_avail && req.max_cost == 0 && state.avail_leaves(cur) == 0) continue;
    stack.insert(stack.end(), children.rbegin(), children.rend());
  }
  if (mixed)
    std::stable_sort(leaves.begin(), leaves.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 0; i < leaves.size() && count > 0; ++i, --count) out.push_back(leaves[i].second);
}

void maximal_whole(const survey& s, cell_id id, std::vector<cell_id>& out) {
  const auto& c = s.at[id];
  if (c.usable == 0) return;
  if (c.whole) {
    out.push_back(id);
    return;
  }
  for (cell_id child : s.state.tree().at(id).children) maximal_whole(s, child, out);
}

void sort_tree_order(const cluster_state& state, std::vector<cell_id>& v) {
  std::sort(v.begin(), v.end(), [&](cell_id a, cell_id b) { return state.tree_rank(a) < state.tree_rank(b); });
}

} // namespace

thread_local std::vector<char> survey_memo::valid_;

void survey_memo::mark(cell_id root) {
  if (valid_.size() < tree_.size()) valid_.resize(tree_.size(), 0);
  if (!valid_[root]) marked_.push_back(root);
  valid_[root] = 1;
}

void survey_memo::changed(cell_id leaf) {
  if (marked_.empty()) return;
  for (cell_id up = leaf; up != no_cell; up = tree_.at(up).parent) valid_[up] = 0;
}

void survey_memo::clear() {
  for (cell_id id : marked_) valid_[id] = 0;
  marked_.clear();
}

std::optional<leaf_pick> pick_leaves(const cluster_state& state, const std::vector<choice_root>& roots,
                                     const pick_request& req) {
  const cell_tree& t = state.tree();
  const int n = req.leaf_count;
  thread_local std::vector<counts> scratch;
  if (scratch.size() < state.tree().size()) scratch.resize(state.tree().size());
  survey s{state, req, scratch};
  for (const auto& r : roots) {
    if (req.memo && req.memo->valid(r.cell)) continue;
    s.walk(r.cell);
    if (req.memo) req.memo->mark(r.cell);
  }
  const proximity closeness(state, req.near);
  auto in_vc = [&](cell_id id) {
    return req.avoid_vc_cells && state.bindings.free_leaves(id) < t.at(id).leaf_count ? 1 : 0;
  };
  auto node_free = [&](cell_id id) {
    const cell_id node = state.node_cell_of(id);
    return node == no_cell ? 0 : t.at(node).leaf_count - state.used_leaves(node);
  };

  using buddy_key = std::tuple<int, int, int, int, int, int, int, int, int>;
  std::optional<buddy_key> best;
  int best_root = -1;
  cell_id best_cell = no_cell;
  thread_local std::vector<std::pair<cell_id, int>> stack; // cell, whole-ancestor size
  for (std::size_t r = 0; r < roots.size(); ++r) {
    stack.assign(1, {roots[r].cell, 0});
    while (!stack.empty()) {
      auto [id, around] = stack.back();
      stack.pop_back();
      const cell& c = t.at(id);
      const counts& k = s.at[id];
      if (k.usable < n) continue;
      const int piece = k.whole ? std::max(around, c.leaf_count) : 0;
      const bool small_enough = std::none_of(c.children.begin(), c.children.end(),
                                             [&](cell_id ch) { return t.at(ch).leaf_count >= n; });
      if (k.whole && small_enough && state.node_cell_of(id) != no_cell) {
        const buddy_key key{std::max(0, n - k.free), k.weight, in_vc(id), c.leaf_count, piece,
                            closeness.distance(id), node_free(id), roots[r].new_binding ? 1 : 0,
                            state.tree_rank(id)};
        if (!best || key < *best) {
          best = key;
          best_root = static_cast<int>(r);
          best_cell = id;
        }
        continue;
      }
      for (auto it = c.children.rbegin(); it != c.children.rend(); ++it) stack.push_back({*it, piece});
    }
  }
  if (best) {
    leaf_pick pick;
    pick.root = best_root;
    take_usable(state, req, best_cell, n, pick.leaves);
    if (req.max_cost > 0) sort_tree_order(state, pick.leaves);
    pick.preempted = std::get<0>(*best);
    return pick;
  }

  // Relaxed: best fit over node-level cells (or roots below node level).
  using relaxed_key = std::tuple<int, int, int, int, int, int>;
  std::optional<relaxed_key> best_relaxed;
  cell_id best_node = no_cell;
  for (std::size_t r = 0; r < roots.size(); ++r) {
    std::vector<cell_id> stack{roots[r].cell};
    while (!stack.empty()) {
      const cell_id id = stack.back();
      stack.pop_back();
      const cell& c = t.at(id);
      const counts& k = s.at[id];
      if (k.usable < n) continue;
      const bool host = c.is_node_level || (id == roots[r].cell && state.node_cell_of(id) != no_cell);
      if (!host) {
        stack.insert(stack.end(), c.children.rbegin(), c.children.rend());
        continue;
      }
      const relaxed_key key{std::max(0, n - k.free), k.weight, in_vc(id), k.usable, closeness.distance(id),
                            state.tree_rank(id)};
      if (!best_relaxed || key < *best_relaxed) {
        best_relaxed = key;
        best_node = id;
        best_root = static_cast<int>(r);
      }
    }
  }
  if (!best_relaxed) return std::nullopt;
  std::vector<cell_id> pieces;
  maximal_whole(s, best_node, pieces);
  std::stable_sort(pieces.begin(), pieces.end(), [&](cell_id a, cell_id b) {
    const int la = t.at(a).leaf_count, lb = t.at(b).leaf_count;
    return la != lb ? la < lb : state.tree_rank(a) < state.tree_rank(b);
  });
  leaf_pick pick;
  pick.root = best_root;
  pick.relaxed = true;
  for (cell_id piece : pieces) {
    const int missing = n - static_cast<int>(pick.leaves.size());
    if (missing <= 0) break;
    take_usable(state, req, piece, missing, pick.leaves);
  }
  sort_tree_order(state, pick.leaves);
  pick.preempted = 0;
  for (cell_id leaf : pick.leaves) pick.preempted += req.cost(leaf) >= 1 ? 1 : 0;
  return pick;
}

} // namespace kozmo::scheduler
