// Bounds over buddy candidates for the preemption search; the rules are in victim_index.hpp.
#include "actors/scheduler/victim_index.hpp"

#include <algorithm>

namespace kozmo::scheduler {

namespace {

bool at_or_below_node(const cell& c) { return c.is_node_level || !c.node.empty(); }

void merge(victim_index::bounds& into, const victim_index::bounds& b) {
  into.top = std::min(into.top, b.top);
  into.free = std::max(into.free, b.free);
  into.weight = std::min(into.weight, b.weight);
}

} // namespace

victim_index::victim_index(const cell_tree& tree)
    : tree_(tree), lo_(tree.size(), 1), hi_(tree.size(), 0), own_(tree.size()), inner_(tree.size(), -1),
      noted_(tree.size(), 0) {
  for (cell_id id = 0; id < tree.size(); ++id)
    if (at_or_below_node(tree.at(id))) sizes_.push_back(tree.at(id).leaf_count);
  std::sort(sizes_.begin(), sizes_.end());
  sizes_.erase(std::unique(sizes_.begin(), sizes_.end()), sizes_.end());
  std::size_t inner = 0;
  for (cell_id id = 0; id < tree.size(); ++id) {
    const cell& c = tree.at(id);
    own_[id].free = c.leaf_count;
    if (!c.children.empty()) inner_[id] = static_cast<int>(inner++);
    if (!at_or_below_node(c)) continue;
    int biggest_child = 0;
    for (cell_id child : c.children) biggest_child = std::max(biggest_child, tree.at(child).leaf_count);
    const auto lo = std::upper_bound(sizes_.begin(), sizes_.end(), biggest_child) - sizes_.begin();
    const auto hi = std::upper_bound(sizes_.begin(), sizes_.end(), c.leaf_count) - sizes_.begin() - 1;
    lo_[id] = static_cast<signed char>(lo);
    hi_[id] = static_cast<signed char>(hi);
  }
  agg_.assign(inner * sizes_.size(), bounds{});
  std::size_t upper = 0;
  upper_.assign(tree.size(), -1);
  for (cell_id id = 0; id < tree.size(); ++id) {
    const cell& c = tree.at(id);
    if (c.is_node_level) host_size_ = std::max(host_size_, c.leaf_count);
    if (c.is_node_level || c.node.empty()) upper_[id] = static_cast<int>(upper++);
  }
  kth_.assign(upper * static_cast<std::size_t>(host_size_), -2);
  // The leaves of each node-level cell, by its position in kth_ (other positions: none;
  // positions follow cell ids, so the starts only grow).
  node_leaf_start_.assign(upper + 1, 0);
  for (cell_id id = 0; id < tree.size(); ++id) {
    const int pos = upper_[id];
    if (pos < 0) continue;
    node_leaf_start_[static_cast<std::size_t>(pos)] = static_cast<int>(node_leaves_.size());
    if (tree.at(id).is_node_level) tree.append_leaves(id, node_leaves_);
  }
  node_leaf_start_[upper] = static_cast<int>(node_leaves_.size());
  int deepest = 0;
  for (cell_id id = 0; id < tree.size(); ++id) deepest = std::max(deepest, tree.at(id).level);
  dirty_.resize(static_cast<std::size_t>(deepest) + 1);
  // Children before parents: deepest levels first.
  std::vector<cell_id> order;
  order.reserve(tree.size());
  for (cell_id id = 0; id < tree.size(); ++id)
    if (!tree.at(id).children.empty()) order.push_back(id);
  std::sort(order.begin(), order.end(), [&](cell_id a, cell_id b) { return tree.at(a).level < tree.at(b).level; });
  for (cell_id id = 0; id < tree.size(); ++id)
    if (tree.at(id).children.empty()) refresh_kth(id);
  for (cell_id id : order) recompute(id);
}

int victim_index::class_for(int n) const {
  const auto it = std::lower_bound(sizes_.begin(), sizes_.end(), n);
  return it == sizes_.end() ? -1 : static_cast<int>(it - sizes_.begin());
}

bool victim_index::recompute(cell_id id) {
  const cell& c = tree_.at(id);
  values v{INT_MIN, 0, 0};
  for (cell_id child : c.children) {
    v.top = std::max(v.top, own_[child].top);
    v.free += own_[child].free;
    v.weight += own_[child].weight;
  }
  bool changed = !(own_[id] == v);
  own_[id] = v;
  bounds* row = &agg_[static_cast<std::size_t>(inner_[id]) * sizes_.size()];
  for (int cls = 0; cls < classes(); ++cls) {
    bounds b;
    for (cell_id child : c.children) merge(b, at(child, cls));
    if (candidate(id, cls)) merge(b, {v.top, v.free, v.weight});
    changed = changed || !(row[cls] == b);
    row[cls] = b;
  }
  return refresh_kth(id) || changed;
}

bool victim_index::refresh_kth(cell_id id) {
  const cell& c = tree_.at(id);
  bool changed = false;
  if (const int pos = upper_[id]; pos >= 0 && host_size_ > 0) {
    int* kth = &kth_[static_cast<std::size_t>(pos) * static_cast<std::size_t>(host_size_)];
    std::vector<int>& keys = keys_;
    keys.assign(static_cast<std::size_t>(host_size_), INT_MAX);
    if (c.is_node_level) {
      const auto first = node_leaves_.begin() + node_leaf_start_[static_cast<std::size_t>(pos)];
      const auto last = node_leaves_.begin() + node_leaf_start_[static_cast<std::size_t>(pos) + 1];
      auto out = keys.begin();
      for (auto leaf = first; leaf != last; ++leaf, ++out) *out = own_[*leaf].top;
      std::sort(keys.begin(), out);
    } else {
      for (cell_id child : c.children) {
        const int cpos = upper_[child];
        if (cpos < 0) continue;
        const int* ck = &kth_[static_cast<std::size_t>(cpos) * static_cast<std::size_t>(host_size_)];
        for (int k = 0; k < host_size_; ++k) keys[static_cast<std::size_t>(k)] = std::min(keys[static_cast<std::size_t>(k)], ck[k]);
      }
    }
    if (!std::equal(keys.begin(), keys.end(), kth)) {
      std::copy(keys.begin(), keys.end(), kth);
      changed = true;
    }
  }
  return changed;
}

void victim_index::note(cell_id id) {
  if (id == no_cell || noted_[id]) return;
  noted_[id] = 1;
  dirty_[static_cast<std::size_t>(tree_.at(id).level)].push_back(id); // sized in the constructor
  ++dirty_count_;
}

void victim_index::update(cell_id leaf, int key, bool available, bool bad) {
  const values v{bad ? INT_MAX : key, available ? 1 : 0, !bad && key >= -1 ? key + 2 : 0};
  if (own_[leaf] == v) return;
  own_[leaf] = v;
  refresh_kth(leaf); // a node of one GPU
  note(tree_.parent(leaf));
  // Unread for long (a cluster with room never preempts): catch up before the list grows.
  if (dirty_count_ > 64) flush();
}

void victim_index::flush() {
  if (dirty_count_ == 0) return;
  // Deepest first: a cell's children are final before it is recomputed.
  for (std::size_t level = 0; level < dirty_.size(); ++level) {
    auto& cells = dirty_[level];
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const cell_id id = cells[i];
      noted_[id] = 0;
      // Up to node level always: a node-level cell's k-th keys follow its leaves' keys even
      // where the bounds of the cells between did not move.
      const cell& c = tree_.at(id);
      if (recompute(id) || (!c.is_node_level && !c.node.empty())) note(c.parent);
    }
    dirty_count_ -= cells.size();
    cells.clear();
  }
}

} // namespace kozmo::scheduler
