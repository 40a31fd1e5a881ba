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
      for (cell_id up = leaf; up != no_cell && !marked_[up]; up = state.tree().parent(up)) {
        marked_[up] = 1;
        ancestors_.push_back(up);
      }
      const int node = state.tree().at(leaf).node_id;
      if (nodes_.empty() || nodes_.back() != node) nodes_.push_back(node);
    }
  }
  ~proximity() {
    for (cell_id id : ancestors_) marked_[id] = 0;
    ancestors_.clear();
    nodes_.clear();
  }
  proximity(const proximity&) = delete;
  proximity& operator=(const proximity&) = delete;

  // Whether a cell holds one of the gang's GPUs (or is one): only then can a cell inside it
  // be closer to them than the cell itself.
  bool holds_near(cell_id id) const { return !ancestors_.empty() && marked_[id]; }
  bool any() const { return !ancestors_.empty(); }

  int distance(cell_id candidate) const {
    if (ancestors_.empty()) return INT_MAX;
    const cell_tree& t = state_.tree();
    for (cell_id up = t.parent(candidate); up != no_cell; up = t.parent(up))
      if (marked_[up]) return t.at(up).leaf_count;
    const int node = t.at(candidate).node_id;
    for (const int n : nodes_)
      if (n == node) return INT_MAX - 1;
    return INT_MAX;
  }

private:
  const cluster_state& state_;
  // Marks on the gang's GPUs' ancestors, the cells marked and the gang's nodes: shared
  // scratch (one proximity at a time per thread), cleared again by the destructor.
  static thread_local std::vector<char> marked_;
  static thread_local std::vector<cell_id> ancestors_;
  static thread_local std::vector<int> nodes_;
};

thread_local std::vector<char> proximity::marked_;
thread_local std::vector<cell_id> proximity::ancestors_;
thread_local std::vector<int> proximity::nodes_;

// Usable leaves of a cell, free ones first, then tree order; at most `count`. Appends in
// tree order when every usable leaf costs the same (always so on a free-only pass).
void take_usable(const cluster_state& state, const pick_request& req, cell_id id, int count,
                 std::vector<cell_id>& out) {
  thread_local std::vector<cell_id> stack;
  thread_local std::vector<std::pair<int, cell_id>> leaves; // cost, leaf
  stack.assign(1, id);
  leaves.clear();
  out.reserve(out.size() + static_cast<std::size_t>(count));
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

// Rule 2's "fewest free GPUs on its node": the free GPUs of the node holding a cell (0 above
// node level).
int node_free_gpus(const cluster_state& state, cell_id id) {
  const cell_id node = state.node_cell_of(id);
  return node == no_cell ? 0 : state.tree().at(node).leaf_count - state.used_leaves(node);
}

// A cell the victim index's search may open, with the bounds it opens by.
struct open_cell {
  int preempt, weight; // lower bounds for any candidate inside
  int rank;            // tree rank: ties open in tree order
  cell_id cell;
  int root;
};

// The buddy choice (rule 2) through the victim index: the same candidates and keys as the
// survey below, but a subtree is entered only when its bounds could still beat the best cell
// found, and a candidate's key is worked out from its own leaves (the bounds only skip).
// The tie-breakers after the cell size (piece, closeness, ...) are worked out only on a tie.
class indexed_search {
public:
  indexed_search(const cluster_state& state, const std::vector<choice_root>& roots, const pick_request& req)
      : state_(state), t_(state.tree()), index_(state.victims()), roots_(roots), req_(req),
        n_(req.leaf_count), p_(req.unusable_from), cls_(index_.class_for(req.leaf_count)) {}

  // The best buddy cell and its root; nullopt when no candidate is usable. Best first: the
  // cell with the lowest bounds is opened next, and once the lowest bounds left cannot beat
  // the best candidate, neither can anything else. The root with the lowest bounds is searched
  // alone first: the candidate it yields usually rules out most other roots before any heap.
  std::optional<std::pair<cell_id, int>> run() {
    if (cls_ < 0) return std::nullopt;
    thread_local std::vector<open_cell> rest, heap;
    rest.clear();
    // Roots whose index position and rank, then bounds, are fetched while earlier ones are weighed.
    // The root with the lowest bounds is tracked on the way (`later` orders a max-heap whose
    // top is the lowest bound).
    constexpr std::size_t far = 16, near = 8;
    std::size_t lowest = 0;
    for (std::size_t r = 0; r < roots_.size(); ++r) {
      if (r + far < roots_.size()) {
        index_.prefetch_position(roots_[r + far].cell);
        state_.bindings.prefetch_rank(roots_[r + far].cell);
      }
      if (r + near < roots_.size()) index_.prefetch(roots_[r + near].cell, cls_);
      if (push(rest, roots_[r].cell, static_cast<int>(r)) && later(rest[lowest], rest.back())) lowest = rest.size() - 1;
    }
    if (rest.empty()) return std::nullopt;
    const auto first = rest.begin() + static_cast<std::ptrdiff_t>(lowest);
    heap.assign(1, *first);
    *first = rest.back();
    rest.pop_back();
    drain(heap);
    heap.clear();
    for (const open_cell& c : rest)
      if (!best_ || (promising(c.preempt, c.weight) && !cannot_win_tie(c))) heap.push_back(c);
    std::make_heap(heap.begin(), heap.end(), later);
    drain(heap);
    if (!best_) return std::nullopt;
    return std::make_pair(best_->cell, best_->root);
  }

  int preempted() const { return best_ ? best_->preempt : 0; }

private:
  void drain(std::vector<open_cell>& heap) {
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), later);
      const open_cell top = heap.back();
      heap.pop_back();
      if (best_ && !promising(top.preempt, top.weight)) break;
      if (best_ && cannot_win_tie(top)) continue;
      if (index_.candidate(top.cell, cls_)) {
        consider(top.cell, top.root);
        continue;
      }
      for (cell_id child : t_.at(top.cell).children)
        if (push(heap, child, top.root)) std::push_heap(heap.begin(), heap.end(), later);
    }
  }

  struct entry {
    cell_id cell = no_cell;
    int root = -1;
    int preempt = 0, weight = 0, in_vc = 0, size = 0;
    bool tail_known = false;
    // piece, closeness, node free, new binding, tree rank, root: prospects of two virtual cell
    // kinds can stand for overlapping physical cells, and then the earlier root wins.
    std::tuple<int, int, int, int, int, int> tail;
  };

  // A function object, not a function: the heap and max_element calls inline it.
  static constexpr struct {
    bool operator()(const open_cell& a, const open_cell& b) const {
      return std::tie(a.preempt, a.weight, a.rank) > std::tie(b.preempt, b.weight, b.rank);
    }
  } later{};

  // An open cell whose bounds tie with the best candidate's (preempt, weight) can still hold a
  // better one only through the tie-breakers; below each is its lowest value inside the cell:
  // the class's size for the piece, the cell's own closeness unless it holds one of the
  // gang's GPUs, its node's free GPUs at or below node level, and its tree rank (preorder).
  bool cannot_win_tie(const open_cell& c) {
    if (c.preempt != best_->preempt || c.weight != best_->weight) return false;
    if (best_->in_vc != 0 || best_->size != index_.size_of(cls_)) return false;
    fill_tail(*best_);
    const cell& x = t_.at(c.cell);
    int distance = INT_MAX;
    if (const proximity& near = closeness(); near.any()) {
      if (near.holds_near(c.cell)) distance = 0;
      else distance = x.node.empty() ? std::min(near.distance(c.cell), INT_MAX - 1) : near.distance(c.cell);
    }
    const std::tuple<int, int, int, int, int, int> lowest{
        index_.size_of(cls_), distance, node_free_gpus(state_, c.cell), roots_[static_cast<std::size_t>(c.root)].new_binding ? 1 : 0, c.rank,
        c.root};
    return best_->tail < lowest;
  }

  // Appends the cell unless no candidate inside could be usable or beat the best.
  bool push(std::vector<open_cell>& heap, cell_id id, int root) const {
    const auto b = index_.at(id, cls_);
    if (b.top >= p_) return false;
    const int preempt = std::max(0, n_ - b.free);
    if (best_ && !promising(preempt, b.weight)) return false;
    heap.push_back({preempt, b.weight, state_.tree_rank(id), id, root});
    return true;
  }

  bool promising(int preempt, int weight) const {
    return preempt < best_->preempt || (preempt == best_->preempt && weight <= best_->weight);
  }

  // The free GPUs and summed cost of a cell's leaves when every one is usable.
  std::optional<std::pair<int, int>> usable(cell_id id) const {
    thread_local std::vector<cell_id> stack;
    stack.assign(1, id);
    int free = 0, weight = 0;
    while (!stack.empty()) {
      const cell_id cur = stack.back();
      stack.pop_back();
      const auto& children = t_.at(cur).children;
      if (!children.empty()) {
        stack.insert(stack.end(), children.begin(), children.end());
        continue;
      }
      const int cost = req_.cost(cur);
      if (cost < 0) return std::nullopt;
      free += cost == 0 ? 1 : 0;
      weight += cost;
    }
    return std::pair{free, weight};
  }

  void consider(cell_id id, int root) {
    const auto counts = usable(id);
    if (!counts) return;
    const auto [free, weight] = *counts;
    entry e;
    e.cell = id;
    e.root = root;
    e.preempt = std::max(0, n_ - free);
    e.weight = weight;
    e.in_vc = req_.avoid_vc_cells && state_.bindings.free_leaves(id) < t_.at(id).leaf_count ? 1 : 0;
    e.size = t_.at(id).leaf_count;
    if (best_) {
      const auto mine = std::tie(e.preempt, e.weight, e.in_vc, e.size);
      const auto theirs = std::tie(best_->preempt, best_->weight, best_->in_vc, best_->size);
      if (theirs < mine) return;
      if (!(mine < theirs)) {
        fill_tail(*best_);
        fill_tail(e);
        if (!(e.tail < best_->tail)) return;
      }
    }
    best_ = e;
  }

  void fill_tail(entry& e) {
    if (e.tail_known) return;
    e.tail_known = true;
    e.tail = {piece(e.cell, roots_[static_cast<std::size_t>(e.root)].cell), closeness().distance(e.cell),
              node_free_gpus(state_, e.cell),
              roots_[static_cast<std::size_t>(e.root)].new_binding ? 1 : 0, state_.tree_rank(e.cell), e.root};
  }

  // Rule 2's "largest all-usable cell around it inside its root": the highest ancestor up to
  // the root whose every leaf is usable (the candidate itself is).
  int piece(cell_id id, cell_id root) {
    int size = t_.at(id).leaf_count;
    for (cell_id up = id; up != root;) {
      up = t_.parent(up);
      if (up == no_cell || !whole(up)) break;
      size = t_.at(up).leaf_count;
    }
    return size;
  }

  bool whole(cell_id id) {
    if (known_.size() < t_.size()) known_.resize(t_.size(), 0);
    if (known_[id]) return known_[id] == 1;
    const bool answer = index_.own(id).top < p_ && usable(id);
    known_[id] = answer ? 1 : 2;
    wholes_.push_back(id);
    return answer;
  }

  const cluster_state& state_;
  const cell_tree& t_;
  const victim_index& index_;
  const std::vector<choice_root>& roots_;
  const pick_request& req_;
  // Marks the gang's GPUs' ancestors: built on the first tie, most searches have none.
  const proximity& closeness() {
    if (!closeness_) closeness_.emplace(state_, req_.near);
    return *closeness_;
  }
  std::optional<proximity> closeness_;
  const int n_, p_, cls_;
  std::optional<entry> best_;
  // Whole or not, per cell asked (1 / 2; 0 unknown): shared scratch, cleared by the destructor.
  static thread_local std::vector<char> known_;
  std::vector<cell_id> wholes_;

public:
  ~indexed_search() {
    for (cell_id id : wholes_) known_[id] = 0;
  }
  indexed_search(const indexed_search&) = delete;
  indexed_search& operator=(const indexed_search&) = delete;
};

thread_local std::vector<char> indexed_search::known_;

} // namespace

thread_local std::vector<char> survey_memo::valid_;

void survey_memo::mark(cell_id root) {
  if (valid_.size() < tree_.size()) valid_.resize(tree_.size(), 0);
  if (!valid_[root]) {
    if (marked_.capacity() == 0) marked_.reserve(64);
    marked_.push_back(root);
  }
  valid_[root] = 1;
}

void survey_memo::changed(cell_id leaf) {
  if (marked_.empty()) return;
  for (cell_id up = leaf; up != no_cell; up = tree_.parent(up)) valid_[up] = 0;
}

void survey_memo::clear() {
  for (cell_id id : marked_) valid_[id] = 0;
  marked_.clear();
}

std::optional<leaf_pick> pick_leaves(const cluster_state& state, const std::vector<choice_root>& roots,
                                     const pick_request& req) {
  const cell_tree& t = state.tree();
  const int n = req.leaf_count;
  if (req.victim_bounds && req.max_cost > 0 && req.unusable_from != INT_MAX) {
    indexed_search search(state, roots, req);
    if (auto found = search.run()) {
      leaf_pick pick;
      pick.root = found->second;
      take_usable(state, req, found->first, n, pick.leaves);
      sort_tree_order(state, pick.leaves);
      pick.preempted = search.preempted();
      return pick;
    }
    // No buddy cell: the relaxed rule needs the survey's counts, unless no node under the
    // roots has enough GPUs the group may use, however scattered.
    if (std::none_of(roots.begin(), roots.end(), [&](const choice_root& r) {
          return state.victims().may_host(r.cell, n, req.unusable_from);
        }))
      return std::nullopt;
  }
  thread_local std::vector<counts> scratch;
  if (scratch.size() < state.tree().size()) scratch.resize(state.tree().size());
  survey s{state, req, scratch};
  for (const auto& r : roots) {
    if (req.memo && req.memo->valid(r.cell)) continue;
    s.walk(r.cell);
    if (req.memo) req.memo->mark(r.cell);
  }
  // Closeness is the sixth key: the gang's GPUs are marked only when a tie reaches it.
  std::optional<proximity> closeness;
  auto distance = [&](cell_id id) {
    if (!closeness) closeness.emplace(state, req.near);
    return closeness->distance(id);
  };
  auto in_vc = [&](cell_id id) {
    return req.avoid_vc_cells && state.bindings.free_leaves(id) < t.at(id).leaf_count ? 1 : 0;
  };

  // The buddy key in two parts: the tail (closeness, node free, new binding, tree rank) is
  // worked out only when the head ties with the best so far.
  using buddy_head = std::tuple<int, int, int, int, int>;
  using buddy_tail = std::tuple<int, int, int, int>;
  auto tail_of = [&](cell_id id, std::size_t r) {
    return buddy_tail{distance(id), node_free_gpus(state, id), roots[r].new_binding ? 1 : 0, state.tree_rank(id)};
  };
  std::optional<buddy_head> best;
  std::optional<buddy_tail> best_tail;
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
        const buddy_head head{std::max(0, n - k.free), k.weight, in_vc(id), c.leaf_count, piece};
        if (best && *best < head) continue;
        if (best && head == *best) {
          if (!best_tail) best_tail = tail_of(best_cell, static_cast<std::size_t>(best_root));
          const buddy_tail tail = tail_of(id, r);
          if (!(tail < *best_tail)) continue;
          best_tail = tail;
        } else {
          best_tail.reset();
        }
        best = head;
        best_root = static_cast<int>(r);
        best_cell = id;
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
  thread_local std::vector<cell_id> relaxed_stack;
  for (std::size_t r = 0; r < roots.size(); ++r) {
    auto& stack = relaxed_stack;
    stack.assign(1, roots[r].cell);
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
      const relaxed_key key{std::max(0, n - k.free), k.weight, in_vc(id), k.usable, distance(id),
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
