// GPU ownership, health and virtual-cell bindings; the rules are in cluster_state.hpp.
#include "actors/scheduler/cluster_state.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <tuple>

namespace kozmo::scheduler {
namespace {

void cells_at_level(const cell_tree& tree, cell_id id, int level, std::vector<cell_id>& out) {
  const cell& c = tree.at(id);
  if (c.level == level) {
    out.push_back(id);
    return;
  }
  if (c.level < level) return;
  for (cell_id child : c.children) cells_at_level(tree, child, level, out);
}

std::string binding_name(int index) { return "vc/" + std::to_string(index); }

// The chain's types by level: types[level] for level 1..top.
std::vector<cell_type_info> chain_types(const cell_tree& tree, const std::string& chain) {
  std::vector<cell_type_info> out;
  auto info = tree.type_info(chain);
  if (!info) return out;
  out.resize(info->level + 1);
  while (info) {
    out[info->level] = *info;
    if (info->is_leaf) break;
    info = tree.type_info(info->child_type);
  }
  return out;
}

// Top-down carving (virtual_clusters.hpp note 3): can `demand[level]` cells be cut from
// `counts[level]` free cells per level, splitting bigger cells as needed?
bool carve(const std::vector<cell_type_info>& types, const std::vector<int>& counts,
           const std::vector<int>& demand) {
  std::int64_t avail = 0;
  for (int level = static_cast<int>(types.size()) - 1; level >= 1; --level) {
    avail += counts[level];
    if (demand[level] > avail) return false;
    avail -= demand[level];
    if (level > 1) avail = std::min<std::int64_t>(avail * types[level].child_number, INT32_MAX);
  }
  return true;
}

} // namespace

cluster_state::cluster_state(const cluster_model& model)
    : owner(model.tree.size(), -1), reserver(model.tree.size(), -1), bindings(model.tree),
      model_(&model), used_(model.tree.size(), 0), bad_(model.tree.size(), 0), foreign_(model.tree.size(), 0),
      bound_at_(model.tree.size(), -1), avail_(model.tree.size(), 0), barrier_(model.tree.size(), -2),
      victims_(model.tree),
      fit_vc_(model.tree.size(), 0), fit_top_(model.tree.size(), 0) {
  const cell_tree& tree = model.tree;
  stamps_.vc.assign(model.vcs.size(), 0);
  unbound_count_.assign(model.vcs.size(), 0);
  lent_used_.assign(model.vcs.size(), 0);
  borrowed_used_.assign(model.vcs.size(), 0);
  loans_of_.assign(model.vcs.size(), {});
  lent_cells_.resize(model.vcs.size());
  borrowed_cells_.resize(model.vcs.size());
  kinds_of_type_.resize(model.vcs.size());
  for (cell_id id = 0; id < tree.size(); ++id) {
    avail_[id] = tree.at(id).leaf_count;
    if (tree.at(id).children.empty()) ++total_avail_;
    if (tree.at(id).is_node_level) nodes_with_avail_[tree.at(id).leaf_type].insert(id);
  }
  // Every cell inside a node starts whole; kinds and positions in tree order.
  std::vector<cell_id> by_rank(tree.size());
  for (cell_id id = 0; id < tree.size(); ++id) by_rank[static_cast<std::size_t>(bindings.tree_rank(id))] = id;
  whole_kind_of_.assign(tree.size(), -1);
  whole_pos_.assign(tree.size(), 0);
  std::map<std::pair<std::string, int>, int> kinds;
  for (cell_id id : by_rank) {
    const cell& c = tree.at(id);
    if (!c.is_node_level && c.node.empty()) continue;
    auto [it, fresh] = kinds.try_emplace({c.leaf_type, c.leaf_count}, static_cast<int>(whole_.size()));
    if (fresh) whole_.push_back({c.leaf_type, c.leaf_count, {}, {}, 0});
    whole_kind& k = whole_[static_cast<std::size_t>(it->second)];
    whole_kind_of_[id] = it->second;
    whole_pos_[id] = static_cast<int>(k.cells.size());
    k.cells.push_back(id);
  }
  for (auto& k : whole_) {
    k.bits.assign((k.cells.size() + 63) / 64, 0);
    for (std::size_t i = 0; i < k.cells.size(); ++i) k.bits[i / 64] |= std::uint64_t{1} << (i % 64);
    k.count = static_cast<int>(k.cells.size());
  }
  for (cell_id top : tree.top_cells()) {
    fit_top_[top] = fit_measure(top);
    top_index_[tree.at(top).leaf_type].insert({fit_top_[top], bindings.tree_rank(top), top});
  }
  for (const auto& chain : tree.chains()) {
    chain_types_[chain] = chain_types(tree, chain);
    demand_[chain].assign(chain_types_[chain].size(), 0);
  }
  vc_cells_of.resize(model.vcs.size());
  vc_index_.resize(model.vcs.size());
  std::vector<cell_id> pinned_used;
  for (std::size_t v = 0; v < model.vcs.size(); ++v) {
    const auto& vc = model.vcs[v];
    for (const auto& q : vc.cells) {
      auto info = tree.type_info(q.cell_type);
      int leaves = 1;
      for (auto t = info; t && !t->is_leaf; t = tree.type_info(t->child_type)) leaves *= t->child_number;
      for (int i = 0; i < q.count; ++i) {
        vc_cell c;
        c.vc = static_cast<int>(v);
        c.qualified_type = q.qualified_type;
        c.chain = q.chain;
        c.type = q.cell_type;
        c.level = q.level;
        c.leaf_count = leaves;
        c.leaf_type = info ? info->leaf_type : std::string();
        vc_cells_of[v].push_back(static_cast<int>(vc_cells.size()));
        ++demand_[c.chain][c.level];
        unbound_[{c.vc, c.chain, c.level}].insert(static_cast<int>(vc_cells.size()));
        auto& kinds = kinds_of_type_[static_cast<std::size_t>(c.vc)][c.type];
        if (std::find(kinds.begin(), kinds.end(), std::make_pair(c.chain, c.level)) == kinds.end())
          kinds.emplace_back(c.chain, c.level);
        ++unbound_count_[static_cast<std::size_t>(c.vc)];
        vc_cells.push_back(std::move(c));
      }
    }
    for (std::size_t i = 0; i < vc.pinned_cells.size(); ++i) {
      const cell& p = tree.at(vc.pinned_cells[i]);
      vc_cell c;
      c.vc = static_cast<int>(v);
      c.qualified_type = vc.pinned_ids[i];
      c.chain = p.chain;
      c.type = p.type;
      c.level = p.level;
      c.leaf_count = p.leaf_count;
      c.leaf_type = p.leaf_type;
      c.pinned = true;
      const int index = static_cast<int>(vc_cells.size());
      vc_cells_of[v].push_back(index);
      ++demand_[c.chain][c.level];
      vc_cells.push_back(std::move(c));
      bind(index, vc.pinned_cells[i]);
      pinned_used.push_back(vc.pinned_cells[i]);
    }
  }
  vc_unused_.resize(model.vcs.size());
  for (const auto& c : vc_cells)
    if (!c.pinned) {
      vc_unused_[static_cast<std::size_t>(c.vc)][c.leaf_type] += c.leaf_count;
      vc_unused_[static_cast<std::size_t>(c.vc)][""] += c.leaf_count;
    }
  vc_quota_ = vc_unused_;
  // A pinned cell no VC names is still off limits for virtual cells (the configuration check
  // counted it out); opportunistic pods may use its GPUs.
  for (cell_id id = 0; id < tree.size(); ++id) {
    if (tree.at(id).pinned_id.empty()) continue;
    if (std::find(pinned_used.begin(), pinned_used.end(), id) != pinned_used.end()) continue;
    std::vector<cell_id> leaves;
    tree.append_leaves(id, leaves);
    (void)bindings.take(leaves, "pinned/" + tree.at(id).pinned_id);
  }
}

void cluster_state::changed(cell_id leaf) {
  ++stamps_.changes;
  const int index = vc_cell_containing(leaf);
  if (index >= 0)
    ++stamps_.vc[static_cast<std::size_t>(vc_cells[index].vc)];
  else
    ++stamps_.outside;
}

void cluster_state::vc_changed(int vc) {
  ++stamps_.changes;
  if (vc >= 0) ++stamps_.vc[static_cast<std::size_t>(vc)];
}

void cluster_state::set_owner(cell_id leaf, int group) {
  if (owner[leaf] != group) changed(leaf);
  const bool was = leaf_avail(leaf);
  const int delta = (group >= 0 ? 1 : 0) - (owner[leaf] >= 0 ? 1 : 0);
  owner[leaf] = group;
  if (delta != 0) {
    for (cell_id up = leaf; up != no_cell; up = tree().parent(up)) used_[up] += delta;
    bindings.set_spare_path(leaf, [this](cell_id id) { return spare(id); });
  }
  leaf_changed(leaf, was);
  refresh_barrier(leaf);
  // GPUs held elsewhere are counted on free leaves first: a mark on a leaf our pod now takes
  // moves to a free one, and a leaf freed on an over-committed node takes a mark from a leaf
  // our pods still hold (else that node would look as if it had room).
  if (!foreign_gpus_.empty() && (group < 0 || foreign_[leaf] > 0)) {
    const std::string& node = tree().at(leaf).node;
    if (foreign_gpus_.count(node)) refresh_node(node);
  }
}

void cluster_state::set_reserver(cell_id leaf, int group) {
  if (reserver[leaf] != group) changed(leaf);
  const bool was = leaf_avail(leaf);
  reserver[leaf] = group;
  leaf_changed(leaf, was);
  refresh_barrier(leaf);
}

void cluster_state::refresh_barrier(cell_id leaf) {
  int value = -2;
  if (priority_of) {
    if (owner[leaf] >= 0) value = std::max(value, priority_of(owner[leaf]));
    if (reserver[leaf] >= 0) value = std::max(value, priority_of(reserver[leaf]));
  }
  const cell_tree& t = tree();
  barrier_[leaf] = value;
  victims_.update(leaf, value, leaf_avail(leaf), bad_[leaf] > 0);
  for (cell_id up = t.parent(leaf); up != no_cell; up = t.parent(up)) {
    int lowest = INT_MAX;
    for (cell_id child : t.at(up).children) lowest = std::min(lowest, barrier_[child]);
    if (barrier_[up] == lowest) break; // the cells above are unchanged too
    barrier_[up] = lowest;
  }
}

// Keeps avail_ and the best-fit indexes in step with one leaf's availability.
void cluster_state::leaf_changed(cell_id leaf, bool was_avail) {
  const int delta = (leaf_avail(leaf) ? 1 : 0) - (was_avail ? 1 : 0);
  if (delta == 0) return;
  ++avail_version_;
  const cell_tree& t = tree();
  for (cell_id up = leaf; up != no_cell; up = t.parent(up)) {
    if (const int kind = whole_kind_of_[up]; kind >= 0) {
      // Whole before or after this change (never both: one leaf changed).
      const int size = t.at(up).leaf_count;
      if (avail_[up] == size || avail_[up] + delta == size) {
        whole_kind& k = whole_[static_cast<std::size_t>(kind)];
        const auto pos = static_cast<std::size_t>(whole_pos_[up]);
        k.bits[pos / 64] ^= std::uint64_t{1} << (pos % 64);
        k.count += delta;
      }
    }
    avail_[up] += delta;
    if (up == leaf) total_avail_ += delta;
    if (t.at(up).is_node_level && avail_[up] == (delta > 0 ? 1 : 0)) {
      auto& cells = nodes_with_avail_[t.at(up).leaf_type];
      if (delta > 0) cells.insert(up);
      else cells.erase(up);
    }
    if ((bound_at_[up] >= 0 || t.parent(up) == no_cell) && (dirty_.empty() || dirty_.back() != up))
      dirty_.push_back(up);
  }
}

void cluster_state::flush_index() const {
  if (dirty_.empty()) return;
  const cell_tree& t = tree();
  std::sort(dirty_.begin(), dirty_.end());
  dirty_.erase(std::unique(dirty_.begin(), dirty_.end()), dirty_.end());
  for (cell_id up : dirty_) {
    if (const int b = bound_at_[up]; b >= 0 && !vc_cells[b].pinned) reindex(vc_index_[vc_cells[b].vc], fit_vc_, up);
    if (t.parent(up) == no_cell) reindex(top_index_[t.at(up).leaf_type], fit_top_, up);
  }
  dirty_.clear();
}

cell_id cluster_state::smallest_whole(const std::string& leaf_type, int need, int below) const {
  cell_id best = no_cell;
  int best_size = below, best_rank = 0;
  for (const auto& k : whole_) {
    if (k.count == 0 || k.size < need || k.size > best_size || (!leaf_type.empty() && k.leaf_type != leaf_type))
      continue;
    std::size_t word = 0;
    while (k.bits[word] == 0) ++word; // count > 0: some bit is set
    const cell_id id = k.cells[word * 64 + static_cast<std::size_t>(__builtin_ctzll(k.bits[word]))];
    const int rank = bindings.tree_rank(id);
    if (k.size < best_size || (best != no_cell && rank < best_rank)) {
      best = id;
      best_size = k.size;
      best_rank = rank;
    }
  }
  return best;
}

int cluster_state::fit_measure(cell_id id) const {
  const cell& c = tree().at(id);
  if (c.is_node_level || !c.node.empty()) return avail_[id];
  int best = 0;
  for (cell_id child : c.children) best = std::max(best, fit_measure(child));
  return best;
}

void cluster_state::reindex(std::set<fit_key>& index, std::vector<int>& keys, cell_id id) const {
  const int rank = bindings.tree_rank(id);
  const int now = fit_measure(id);
  if (now == keys[id]) return;
  // The same node under its new key: no allocation on a path every placement takes.
  auto node = index.extract({keys[id], rank, id});
  keys[id] = now;
  if (node.empty()) {
    index.insert({now, rank, id});
    return;
  }
  node.value() = {now, rank, id};
  index.insert(std::move(node));
}

cell_id cluster_state::node_cell_of(cell_id id) const {
  for (cell_id up = id; up != no_cell; up = tree().parent(up))
    if (tree().at(up).is_node_level) return up;
  return no_cell;
}

bool cluster_state::node_healthy(const std::string& node) const {
  return !health_reported_ || healthy_nodes_.count(node) > 0;
}

bool cluster_state::apply_bad(cell_id leaf, bool bad) {
  if ((bad_[leaf] > 0) == bad) return false;
  changed(leaf);
  const bool was = leaf_avail(leaf);
  const int delta = bad ? 1 : -1;
  bad_total_ += delta;
  for (cell_id up = leaf; up != no_cell; up = tree().parent(up)) bad_[up] += delta;
  bindings.set_spare_path(leaf, [this](cell_id id) { return spare(id); });
  leaf_changed(leaf, was);
  victims_.update(leaf, barrier_[leaf], leaf_avail(leaf), bad);
  return true;
}

bool cluster_state::refresh_node(const std::string& node) {
  const cell_tree& t = tree();
  const std::vector<cell_id> leaves = t.leaf_cells_of(node);
  if (leaves.empty()) return false;
  const bool healthy = node_healthy(node);
  int want = 0;
  if (auto it = foreign_gpus_.find(node); healthy && it != foreign_gpus_.end())
    want = std::min(it->second, static_cast<int>(leaves.size()));
  std::vector<char> marked(leaves.size(), 0);
  auto take = [&](auto&& eligible) {
    for (std::size_t i = leaves.size(); i-- > 0 && want > 0;)
      if (!marked[i] && eligible(leaves[i])) {
        marked[i] = 1;
        --want;
      }
  };
  take([&](cell_id l) { return foreign_[l] > 0 && owner[l] < 0; }); // marks stay where they are
  take([&](cell_id l) { return owner[l] < 0 && reserver[l] < 0; });
  take([&](cell_id l) { return owner[l] < 0; });
  take([](cell_id) { return true; });
  bool changed = false;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const cell_id leaf = leaves[i];
    if (const int delta = (marked[i] ? 1 : 0) - foreign_[leaf]; delta != 0)
      for (cell_id up = leaf; up != no_cell; up = t.parent(up)) foreign_[up] += delta;
    changed |= apply_bad(leaf, !healthy || marked[i]);
  }
  return changed;
}

bool cluster_state::set_health(const std::string& node, bool healthy) {
  bool changed = false;
  if (!health_reported_) {
    // First report: every node not reported yet stops counting as healthy.
    health_reported_ = true;
    for (const auto& n : tree().nodes())
      if (n.node != node) changed |= refresh_node(n.node);
  }
  if (healthy)
    healthy_nodes_.insert(node);
  else
    healthy_nodes_.erase(node);
  changed |= refresh_node(node);
  // A report that changes nothing (a node's status heartbeat) leaves the doomed cells as
  // they are; a change has them recomputed once the burst of reports is over (note 3).
  if (changed)
    doom_stale_ = true;
  return changed;
}

bool cluster_state::set_foreign(const std::string& node, int gpus) {
  gpus = std::max(0, gpus);
  auto it = foreign_gpus_.find(node);
  if ((it == foreign_gpus_.end() ? 0 : it->second) == gpus) return false;
  if (gpus == 0)
    foreign_gpus_.erase(it);
  else
    foreign_gpus_[node] = gpus;
  const bool changed = refresh_node(node);
  if (changed)
    doom_stale_ = true;
  return changed;
}

int cluster_state::vc_cell_containing(cell_id id) const {
  for (cell_id up = id; up != no_cell; up = tree().parent(up))
    if (bound_at_[up] >= 0) return bound_at_[up];
  return -1;
}

const std::vector<int>& cluster_state::unbound_demand(const std::string& chain) const {
  static const std::vector<int> none;
  auto it = demand_.find(chain);
  return it == demand_.end() ? none : it->second;
}

bool cluster_state::feasible_after(const vc_cell& c, int free_level) const {
  auto types_it = chain_types_.find(c.chain);
  if (types_it == chain_types_.end() || types_it->second.empty()) return false;
  const auto& types = types_it->second;
  auto demand = unbound_demand(c.chain);
  if (c.bound == no_cell) --demand[c.level];
  std::vector<int> counts(types.size(), 0);
  for (int level = 1; level < static_cast<int>(types.size()); ++level)
    counts[level] = bindings.free_count(c.chain, level);
  --counts[free_level];
  for (int level = c.level; level < free_level; ++level) counts[level] += types[level + 1].child_number - 1;
  return carve(types, counts, demand);
}

std::optional<cell_id> cluster_state::prospect(const vc_cell& c, bool for_doom) const {
  const cell_tree& t = tree();
  auto types = chain_types_.find(c.chain);
  if (types == chain_types_.end()) return std::nullopt;
  const int top_level = static_cast<int>(types->second.size()) - 1;
  // Fast path: the best possible candidate (see the key below) is healthy and unused, inside
  // a free cell of the smallest feasible level, first in tree order. Only when no level has
  // one does the bounded search below weigh used and bad cells.
  if (!for_doom)
    for (int level = c.level; level <= top_level; ++level) {
      const cell_id holder = bindings.first_free_holding_spare(c.chain, level, c.level);
      if (holder == no_cell || !feasible_after(c, level)) continue;
      return bindings.first_spare_under(holder, c.level);
    }
  std::optional<std::tuple<bool, bool, int, int, int>> best_key;
  cell_id best = no_cell;
  std::vector<cell_id> inside;
  bool done = false;
  for (int level = c.level; level <= top_level && !done; ++level) {
    // Feasibility depends only on the level split, so one check serves the whole level.
    if (!feasible_after(c, level)) continue;
    int looked_after_found = 0;
    bindings.visit_free(c.chain, level, [&](cell_id free_cell) {
      // Bounded search: once a candidate exists, look at a few more free cells, not all.
      if (best_key && ++looked_after_found > 256) return false;
      inside.clear();
      cells_at_level(t, free_cell, c.level, inside);
      for (cell_id d : inside) {
        if (for_doom && bad_[d] == 0) continue;
        const auto key = std::make_tuple(for_doom ? false : bad_[d] > 0, used_[d] > 0, level,
                                         for_doom ? -bad_[d] : used_[d], tree_rank(d));
        if (best_key && *best_key <= key) continue;
        best_key = key;
        best = d;
        // Healthy and unused at the smallest level, first in tree order: nothing beats it.
        if (!for_doom && !std::get<0>(key) && !std::get<1>(key)) {
          done = true;
          return false;
        }
      }
      return true;
    });
  }
  if (best == no_cell) return std::nullopt;
  return best;
}

void cluster_state::bind(int index, cell_id physical) {
  vc_cell& c = vc_cells[index];
  std::vector<cell_id>& leaves = leaves_scratch_;
  leaves.clear();
  tree().append_leaves(physical, leaves);
  (void)bindings.take(leaves, binding_name(index));
  vc_changed(c.vc);
  ++stamps_.outside;
  ++stamps_.bindings;
  ++binding_version_;
  c.bound = physical;
  bound_at_[physical] = index;
  --demand_[c.chain][c.level];
  if (c.pinned) return;
  flush_index();
  fit_vc_[physical] = fit_measure(physical);
  vc_index_[c.vc].insert({fit_vc_[physical], tree_rank(physical), physical});
  unbound_count_[static_cast<std::size_t>(c.vc)] -= unbound_[{c.vc, c.chain, c.level}].erase(index);
}

void cluster_state::unbind(int index) {
  vc_cell& c = vc_cells[index];
  if (c.pinned || c.bound == no_cell) return;
  bindings.release(binding_name(index));
  vc_changed(c.vc);
  ++stamps_.outside;
  ++stamps_.bindings;
  ++binding_version_;
  flush_index();
  vc_index_[c.vc].erase({fit_vc_[c.bound], tree_rank(c.bound), c.bound});
  ++demand_[c.chain][c.level];
  unbound_count_[static_cast<std::size_t>(c.vc)] += unbound_[{c.vc, c.chain, c.level}].insert(index).second ? 1 : 0;
  bound_at_[c.bound] = -1;
  c.bound = no_cell;
  c.doomed = false;
  if (c.borrower >= 0) borrowed_used_[static_cast<std::size_t>(c.borrower)] -= c.borrowed_used;
  end_loan(c);
  c.borrowed_used = 0;
}

void cluster_state::lend(int index, int borrower) {
  vc_cell& c = vc_cells[index];
  c.borrower = borrower;
  ++stamps_.bindings;
  ++binding_version_;
  ++lent_cells_[static_cast<std::size_t>(c.vc)][c.type];
  ++borrowed_cells_[static_cast<std::size_t>(borrower)][c.type];
  ++loans_of_[static_cast<std::size_t>(c.vc)][borrower];
  vc_changed(borrower);
}

void cluster_state::end_loan(vc_cell& c) {
  if (c.borrower < 0) return;
  ++stamps_.bindings;
  ++binding_version_;
  --lent_cells_[static_cast<std::size_t>(c.vc)][c.type];
  --borrowed_cells_[static_cast<std::size_t>(c.borrower)][c.type];
  auto& loans = loans_of_[static_cast<std::size_t>(c.vc)];
  if (auto it = loans.find(c.borrower); it != loans.end() && --it->second == 0) loans.erase(it);
  vc_changed(c.borrower);
  c.borrower = -1;
}

int cluster_state::unbound_of_type(int vc, const std::string& type) const {
  const auto& by_type = kinds_of_type_[static_cast<std::size_t>(vc)];
  auto it = by_type.find(type);
  if (it == by_type.end()) return 0;
  int n = 0;
  for (const auto& [chain, level] : it->second)
    if (auto u = unbound_.find({vc, chain, level}); u != unbound_.end()) n += static_cast<int>(u->second.size());
  return n;
}

void cluster_state::add_use(int index, int leaves, bool borrowed) {
  vc_cell& c = vc_cells[index];
  vc_changed(c.vc);
  c.used += leaves;
  if (borrowed) {
    c.borrowed_used += leaves;
    lent_used_[static_cast<std::size_t>(c.vc)] += leaves;
    borrowed_used_[static_cast<std::size_t>(c.borrower)] += leaves;
    vc_changed(c.borrower);
  }
  if (!c.pinned) {
    vc_unused_[static_cast<std::size_t>(c.vc)][c.leaf_type] -= leaves;
    vc_unused_[static_cast<std::size_t>(c.vc)][""] -= leaves;
  }
}

int cluster_state::vc_quota(int vc, const std::string& leaf_type) const {
  const auto& by_type = vc_quota_[static_cast<std::size_t>(vc)];
  auto it = by_type.find(leaf_type);
  return it == by_type.end() ? 0 : it->second;
}

int cluster_state::vc_unused(int vc, const std::string& leaf_type) const {
  const auto& by_type = vc_unused_[static_cast<std::size_t>(vc)];
  auto it = by_type.find(leaf_type);
  return it == by_type.end() ? 0 : it->second;
}

void cluster_state::release_use(int index, int leaves, bool borrowed) {
  vc_cell& c = vc_cells[index];
  vc_changed(c.vc);
  c.used -= leaves;
  if (borrowed) {
    c.borrowed_used -= leaves;
    lent_used_[static_cast<std::size_t>(c.vc)] -= leaves;
    borrowed_used_[static_cast<std::size_t>(c.borrower)] -= leaves;
    if (c.borrowed_used == 0) end_loan(c);
  }
  if (!c.pinned) {
    vc_unused_[static_cast<std::size_t>(c.vc)][c.leaf_type] += leaves;
    vc_unused_[static_cast<std::size_t>(c.vc)][""] += leaves;
  }
  if (c.used > 0 || c.pinned || c.doomed) return;
  unbind(index);
  // Healthy capacity came back while GPUs are bad: re-doom, once for a burst of releases.
  if (bad_total_ > 0) doom_stale_ = true;
}

void cluster_state::refresh_doomed() {
  for (std::size_t i = 0; i < vc_cells.size(); ++i)
    if (vc_cells[i].doomed && vc_cells[i].used == 0) unbind(static_cast<int>(i));
  if (bad_total_ == 0) return;
  const cell_tree& t = tree();
  std::vector<std::string> chains;
  for (const auto& c : vc_cells)
    if (std::find(chains.begin(), chains.end(), c.chain) == chains.end()) chains.push_back(c.chain);
  for (const auto& chain : chains) {
    const auto types = chain_types(t, chain);
    std::vector<int> counts;
    bool counts_valid = false;
    for (;;) {
      // Maximal unbound healthy cells per level.
      if (!counts_valid) {
        counts.assign(types.size(), 0);
        auto whole = [&](cell_id id) { return bindings.is_free(id) && bad_[id] == 0; };
        for (cell_id id = 0; id < t.size(); ++id) {
          const cell& c = t.at(id);
          if (c.chain != chain || !whole(id)) continue;
          if (c.parent == no_cell || !whole(c.parent)) ++counts[c.level];
        }
        counts_valid = true;
      }
      const auto demand = unbound_demand(chain);
      int short_level = 0;
      std::int64_t avail = 0;
      for (int level = static_cast<int>(types.size()) - 1; level >= 1 && !short_level; --level) {
        avail += counts[level];
        if (demand[level] > avail) short_level = level;
        avail -= demand[level];
        if (level > 1) avail = std::min<std::int64_t>(avail * types[level].child_number, INT32_MAX);
      }
      if (!short_level) break;
      // Doom an unbound cell of the short level: of the VC with the most unbound cells there
      // (ties: the VC whose first such cell comes first), its first one.
      int pick = -1;
      std::size_t pick_unbound = 0;
      for (std::size_t v = 0; v < vc_cells_of.size(); ++v) {
        auto it = unbound_.find({static_cast<int>(v), chain, short_level});
        if (it == unbound_.end() || it->second.empty()) continue;
        const int first = *it->second.begin();
        if (it->second.size() > pick_unbound || (it->second.size() == pick_unbound && first < pick)) {
          pick = first;
          pick_unbound = it->second.size();
        }
      }
      if (pick < 0) break;
      auto target = prospect(vc_cells[pick], true);
      if (!target) break;
      // The counts lose the maximal healthy cells under the target, which the binding takes
      // (its ancestors hold its bad GPUs, so none of them counted; a whole bad node had none).
      // Counted here rather than over the whole chain again: on a cluster where every node has
      // a GPU held elsewhere each of thousands of node cells is doomed in turn.
      if (bad_[*target] == 0) {
        counts_valid = false; // a healthy target (no bad one left): count the chain again
      } else if (bad_[*target] < t.at(*target).leaf_count) {
        std::vector<cell_id> below{*target};
        while (!below.empty()) {
          const cell_id id = below.back();
          below.pop_back();
          if (bindings.is_free(id) && bad_[id] == 0) {
            --counts[t.at(id).level]; // maximal: its parent (the target or above) is not whole
            continue;
          }
          for (cell_id child : t.at(id).children) below.push_back(child);
        }
      }
      bind(pick, *target);
      vc_cells[pick].doomed = true;
    }
  }
}

} // namespace kozmo::scheduler
