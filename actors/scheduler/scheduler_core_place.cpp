// Whole-group placement behind the facade: VC quota through virtual cells, borrowing,
// preemption (plain, lazy, stateful) and head-of-line reservation. The rules are stated in
// scheduler_core.hpp; wait reasons are in scheduler_core_reason.cpp.
#include "actors/scheduler/leaf_chooser.hpp"
#include "actors/scheduler/scheduler_core_impl.hpp"

#include <algorithm>
#include <climits>
#include <numeric>

namespace kozmo::scheduler::detail {

namespace {

// The smallest cell holding every one of `leaves` (tree order: the first and the last decide).
cell_id common_ancestor(const cell_tree& tree, const std::vector<cell_id>& leaves) {
  for (cell_id up = leaves.front(); up != no_cell; up = tree.parent(up)) {
    cell_id x = leaves.back();
    while (x != no_cell && x != up) x = tree.parent(x);
    if (x == up) return up;
  }
  return leaves.front();
}

int limit_of(const std::map<std::string, int>& limits, const std::string& type) {
  auto it = limits.find(type);
  return it == limits.end() ? 0 : it->second;
}

} // namespace

enum class place_mode { free_only, preempt, reserve, borrow };

std::optional<attempt> core_impl::try_place(group_entry& g, int max_cost,
                                            const std::set<std::string>* nodes) {
  // Gang topology: one placement per candidate cell, each back here with topo_within set.
  if (g.topo && !topo_within) return try_place_topology(g, max_cost, nodes);
  cell_id within = no_cell; // the cell the current member's pods must lie in (topo_within)
  const place_mode mode = max_cost == 0 ? place_mode::free_only
                          : max_cost == 1 ? place_mode::preempt
                          : max_cost == 2 ? place_mode::reserve : place_mode::borrow;
  // Borrowing is a free-only pass that may also bind other VCs' idle cells.
  const bool free_pass = mode == place_mode::free_only || mode == place_mode::borrow;
  const cell_tree& tree = model.tree;
  const int prio = g.priority();
  const bool opportunistic = prio < 0;
  const bool use_vc = !opportunistic && !physical_mode() && g.vc >= 0;

  // A borrower of this group's VC holds only lent cells here (the only cells of others its
  // passes see): it gives them back whatever its priority, as an opportunistic group would.
  auto lent_to = [&](const group_entry* other) { return use_vc && other->lenders.count(g.vc) > 0; };
  auto preemptible = [&](int q) {
    const group_entry* other = group(q);
    if (!other || other == &g) return false;
    if (lent_to(other)) return !drf_spared.count(other->vc);
    if (other->priority() < 0) return true;
    return other->vc == g.vc && other->priority() < prio;
  };
  // A preemption pass asks the cost of every GPU of the VC; GPUs of one pod share their owner,
  // so the answer for the last (owner, reserver) pair is kept.
  int memo_owner = -2, memo_reserver = -2, memo_cost = 0;
  auto cost = [&](cell_id leaf) -> int {
    if (scratch[leaf] || state.is_bad_leaf(leaf)) return -1;
    if (nodes && !nodes->count(tree.at(leaf).node)) return -1;
    if (within != no_cell && !cell_inside(tree, leaf, within)) return -1;
    const int o = state.owner[leaf], r = state.reserver[leaf];
    if (o < 0 && r < 0) return 0;
    if (mode == place_mode::reserve) return (r >= 0 && r != g.id) ? -1 : 1;
    if (free_pass || opportunistic) return -1;
    if (o == memo_owner && r == memo_reserver) return memo_cost;
    memo_owner = o;
    memo_reserver = r;
    if ((o >= 0 && !preemptible(o)) || (r >= 0 && !preemptible(r))) return memo_cost = -1;
    // Preemptible: cheaper the lower the victim's priority (opportunistic = 1).
    int victim = -1;
    if (o >= 0 && !lent_to(group(o))) victim = std::max(victim, group(o)->priority());
    if (r >= 0 && !lent_to(group(r))) victim = std::max(victim, group(r)->priority());
    return memo_cost = victim + 2;
  };

  // Candidate cells for one pod, in three widening tiers: 0 = the few best-fitting cells from
  // the indexes (the hot path on big clusters; prospects only when none fits), 1 = the same
  // plus prospects, 2 = every cell (only when tier 1 was cut short). Cells the gang already
  // took GPUs from in this attempt do not count toward the few: the indexes do not see them.
  constexpr std::size_t fit_candidates = 4;
  std::vector<cell_id>& touched = touched_scratch;
  touched.clear();
  bool truncated = false;
  auto fitting = [&](cell_id cell, std::vector<choice_root>& roots, std::size_t& fresh) {
    roots.push_back({cell, false});
    if (std::find(touched.begin(), touched.end(), cell) == touched.end()) ++fresh;
    if (fresh < fit_candidates) return true;
    truncated = true;
    return false;
  };
  auto roots_for = [&](int tier, int need, std::vector<choice_root>& roots) {
    roots.clear();
    std::size_t fresh = 0;
    truncated = false;
    if (!use_vc) {
      if (!g.spec.pinned_cell_id.empty()) {
        if (auto pinned = tree.find_pinned(g.spec.pinned_cell_id)) roots.push_back({*pinned, false});
        return;
      }
      if (tier < 2) {
        state.visit_tops_fitting(g.spec.leaf_cell_type, need,
                                 [&](cell_id top) { return fitting(top, roots, fresh); });
        return;
      }
      for (cell_id top : tree.top_cells())
        if (type_matches(g.spec.leaf_cell_type, tree.at(top).leaf_type)) roots.push_back({top, false});
      return;
    }
    if (!g.spec.pinned_cell_id.empty()) {
      for (int index : state.vc_cells_of[g.vc]) {
        const vc_cell& c = state.vc_cells[index];
        if (c.pinned && c.qualified_type == g.spec.pinned_cell_id) roots.push_back({c.bound, false});
      }
      return;
    }
    if (tier < 2) {
      state.visit_bound_fitting(g.vc, need, [&](cell_id cell) {
        const vc_cell& c = state.vc_cells[state.vc_cell_at(cell)];
        if (!type_matches(g.spec.leaf_cell_type, c.leaf_type)) return true;
        return fitting(cell, roots, fresh);
      });
    } else {
      const auto& bound = bound_roots_of(g.vc, g.spec.leaf_cell_type);
      roots.assign(bound.begin(), bound.end());
    }
    // A bound cell that fits beats binding a new one anyway (buddy rule: the smaller free
    // piece first), so on the hot path prospects are only worked out when none fits.
    if (tier == 0 && !roots.empty()) return;
    state.visit_unbound_kinds(g.vc, [&](int index) {
      const vc_cell& c = state.vc_cells[index];
      if (!type_matches(g.spec.leaf_cell_type, c.leaf_type) || c.leaf_count < need) return;
      if (auto p = state.prospect(c)) roots.push_back({*p, true});
    });
  };

  // Borrowing: other VCs' idle (unbound) cells within their lendingLimit and this VC's
  // borrowingLimit, whole, counting the cells this attempt borrowed already; and those cells
  // again while they have room. Only after the group's own cells gave nothing for a pod.
  std::vector<std::pair<cell_id, int>> borrowed_now; // (physical cell, lender VC)
  // A preemption pass may borrow too, taking opportunistic pods' GPUs in the borrowed cells.
  const bool borrow_too = mode == place_mode::preempt && use_vc && can_borrow(g.vc) &&
                          g.spec.pinned_cell_id.empty() && borrowable(g.vc, g.spec.leaf_cell_type) > 0;
  auto borrow_roots = [&](int need, std::vector<choice_root>& out) {
    out.clear();
    for (const auto& [cell, lender] : borrowed_now)
      if (state.avail_leaves(cell) >= need) out.push_back({cell, false, lender});
    const auto& mine = model.vcs[static_cast<std::size_t>(g.vc)];
    for (std::size_t lender = 0; lender < model.vcs.size(); ++lender) {
      const int l = static_cast<int>(lender);
      if (l == g.vc || model.vcs[lender].lending_limit.empty()) continue;
      state.visit_unbound_kinds(l, [&](int index) {
        const vc_cell& c = state.vc_cells[index];
        if (!type_matches(g.spec.leaf_cell_type, c.leaf_type) || c.leaf_count < need) return;
        if (state.lent_cells(l, c.type) >= limit_of(model.vcs[lender].lending_limit, c.type)) return;
        if (state.borrowed_cells(g.vc, c.type) >= limit_of(mine.borrowing_limit, c.type)) return;
        if (auto p = state.prospect(c)) out.push_back({*p, true, l});
      });
    }
  };

  attempt a;
  a.before = state.stamp();
  const auto& members = g.placing.empty() ? g.spec.members : g.placing;
  std::size_t pods_in_gang = 0;
  for (const auto& member : members) pods_in_gang += static_cast<std::size_t>(member.pod_number);
  a.slots.reserve(pods_in_gang);
  std::vector<std::size_t> order(members.size());
  std::iota(order.begin(), order.end(), 0);
  if (order.size() > 1)
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      return members[x].leaf_cell_number > members[y].leaf_cell_number;
    });
  std::vector<cell_id>& near = near_scratch;
  near.clear();
  std::vector<choice_root>& roots = roots_scratch;
  survey_memo memo(tree);
  bool failed = false;
  for (std::size_t m : order) {
    const auto& member = members[m];
    if (topo_within && m < topo_within->size() && (*topo_within)[m] != within) {
      within = (*topo_within)[m];
      memo.clear(); // the counts under each root were taken with another restriction
    }
    for (int k = 0; k < member.pod_number && !failed; ++k) {
      pick_request req;
      req.leaf_count = member.leaf_cell_number;
      req.max_cost = free_pass ? 0 : 1;
      req.avoid_vc_cells = opportunistic && !physical_mode();
      req.cost = cost;
      req.cost_implies_avail = true;
      // Only free GPUs serve a free-only pass or an opportunistic group, and a preemption pass
      // only those free or held below the group's priority: cells of others are skipped whole.
      if (options.shortcuts && mode != place_mode::reserve)
        req.unusable_from = free_pass || opportunistic ? -1 : prio;
      // The cost below charges a victim its priority + 2 >= its barrier + 2 (victim_index.hpp).
      req.victim_bounds = options.shortcuts && mode == place_mode::preempt;
      req.near = &near;
      req.memo = &memo;
      std::optional<leaf_pick> pick;
      for (int tier = free_pass ? 0 : 2; tier <= 2 && !pick; ++tier) {
        if (tier == 2 && free_pass && !truncated) break;
        roots_for(tier, member.leaf_cell_number, roots);
        if (!roots.empty()) pick = pick_leaves(state, roots, req);
      }
      if (!pick && (mode == place_mode::borrow || (mode == place_mode::preempt && borrow_too))) {
        borrow_roots(member.leaf_cell_number, roots);
        if (!roots.empty()) pick = pick_leaves(state, roots, req);
      }
      // In physical mode the buddy rule holds over the whole cluster (leaf_chooser.hpp rule 2):
      // the few best-fitting cells may miss a smaller free cell elsewhere, or leave only a
      // relaxed choice while a free cell exists. The index of free cells knows; that cell's top
      // joins the candidates and the choice is made again. (With VCs an opportunistic pod also
      // keeps out of the VCs' cells, which this index does not see: it keeps the few.)
      if (pick && physical_mode() && mode == place_mode::free_only && g.spec.pinned_cell_id.empty()) {
        const int size = pick->relaxed ? INT_MAX : tree.at(common_ancestor(tree, pick->leaves)).leaf_count;
        if (cell_id smaller = state.smallest_whole(g.spec.leaf_cell_type, member.leaf_cell_number, size);
            smaller != no_cell) {
          cell_id top = smaller;
          while (tree.parent(top) != no_cell) top = tree.parent(top);
          if (std::none_of(roots.begin(), roots.end(), [&](const choice_root& r) { return r.cell == top; })) {
            roots.push_back({top, false});
            pick = pick_leaves(state, roots, req);
          }
        }
      }
      if (!pick) {
        failed = true;
        break;
      }
      const choice_root& root = roots[pick->root];
      touched.push_back(root.cell);
      int vc_index = -1;
      const bool borrowed = root.lender >= 0;
      if (borrowed) {
        const cell& rc = tree.at(root.cell);
        if (root.new_binding) {
          vc_index = state.first_unbound(root.lender, rc.chain, rc.level);
          state.bind(vc_index, root.cell);
          state.lend(vc_index, g.vc);
          a.new_bindings.push_back(vc_index);
          borrowed_now.emplace_back(root.cell, root.lender);
        } else {
          vc_index = state.vc_cell_at(root.cell);
        }
      } else if (use_vc) {
        if (root.new_binding) {
          const cell& rc = tree.at(root.cell);
          vc_index = state.first_unbound(g.vc, rc.chain, rc.level);
          state.bind(vc_index, root.cell);
          a.new_bindings.push_back(vc_index);
        } else {
          vc_index = state.vc_cell_containing(root.cell);
        }
      }
      slot s;
      s.member = static_cast<int>(m);
      s.vc_cell = vc_index;
      s.borrowed = borrowed;
      s.place.node = tree.at(pick->leaves.front()).node;
      s.place.leaf_type = tree.at(pick->leaves.front()).leaf_type;
      s.place.relaxed = pick->relaxed;
      s.place.leaves = std::move(pick->leaves);
      s.place.leaf_indices.reserve(s.place.leaves.size());
      for (cell_id leaf : s.place.leaves) {
        s.place.leaf_indices.push_back(tree.at(leaf).leaf_indices.at(0));
        if (mode == place_mode::preempt && cost(leaf) >= 1) {
          if (state.owner[leaf] >= 0) a.victims.insert(state.owner[leaf]);
          if (state.reserver[leaf] >= 0) a.victims.insert(state.reserver[leaf]);
        }
        scratch[leaf] = 1;
        memo.changed(leaf);
        near.push_back(leaf);
      }
      a.preempted += pick->preempted;
      a.slots.push_back(std::move(s));
    }
    if (failed) break;
  }
  for (cell_id leaf : near) scratch[leaf] = 0;
  if (failed) {
    undo(a);
    return std::nullopt;
  }
  auto by_member = [](const slot& x, const slot& y) { return x.member < y.member; };
  if (!std::is_sorted(a.slots.begin(), a.slots.end(), by_member)) // one member: sorted, no buffer
    std::stable_sort(a.slots.begin(), a.slots.end(), by_member);
  return a;
}

const std::vector<choice_root>& core_impl::bound_roots_of(int vc, const std::string& leaf_type) {
  bound_roots& entry = bound_roots_cache[{vc, leaf_type}];
  if (entry.version == state.binding_version()) return entry.roots;
  entry.version = state.binding_version();
  entry.roots.clear();
  for (int index : state.vc_cells_of[vc]) {
    const vc_cell& c = state.vc_cells[index];
    if (!c.pinned && c.bound != no_cell && type_matches(leaf_type, c.leaf_type)) entry.roots.push_back({c.bound, false});
  }
  return entry.roots;
}

void core_impl::undo(attempt& a) {
  for (auto it = a.new_bindings.rbegin(); it != a.new_bindings.rend(); ++it) state.unbind(*it);
  a.new_bindings.clear();
  state.restore_stamp(a.before);
}

int core_impl::take_gpus(group_entry& g, const std::vector<slot>& slots) {
  // Lenders first: a borrower's GPUs weigh as opportunistic from the moment it owns them.
  for (const auto& s : slots)
    if (s.borrowed) g.lenders.insert(state.vc_cells[s.vc_cell].vc);
  int quota = 0;
  for (const auto& s : slots) {
    for (cell_id leaf : s.place.leaves) state.set_owner(leaf, g.id);
    if (s.vc_cell < 0) continue;
    state.add_use(s.vc_cell, static_cast<int>(s.place.leaves.size()), s.borrowed);
    if (!s.borrowed) quota += static_cast<int>(s.place.leaves.size());
  }
  return quota;
}

void core_impl::commit_allocated(group_entry& g, attempt& a) {
  take_gpus(g, a.slots);
  g.slots = std::move(a.slots);
  set_state(g, group_state::allocated);
  g.reserving = false;
  g.victims.clear();
  count_quota(g, vc_leaves(g));
}

void core_impl::commit_preempting(group_entry& g, attempt& a) {
  for (const auto& s : a.slots)
    if (s.borrowed) g.lenders.insert(state.vc_cells[s.vc_cell].vc);
  for (auto& s : a.slots) {
    for (cell_id leaf : s.place.leaves) state.set_reserver(leaf, g.id);
    if (s.vc_cell >= 0) state.add_use(s.vc_cell, static_cast<int>(s.place.leaves.size()), s.borrowed);
  }
  g.slots = std::move(a.slots);
  set_state(g, group_state::preempting);
  g.victims = a.victims;
  count_quota(g, vc_leaves(g));
}

int core_impl::vc_leaves(const group_entry& g) {
  int n = 0;
  for (const auto& s : g.slots)
    if (s.vc_cell >= 0 && !s.borrowed) n += static_cast<int>(s.place.leaves.size());
  return n;
}

void core_impl::count_quota(const group_entry& g, int leaves) {
  if (g.vc < 0 || leaves == 0) return;
  auto& held = vc_held[static_cast<std::size_t>(g.vc)];
  if ((held[g.priority()] += leaves) == 0) held.erase(g.priority());
  if (g.state == group_state::preempting) vc_in_flight[static_cast<std::size_t>(g.vc)] += leaves;
}

bool core_impl::finish_preemption(group_entry& g) {
  for (const auto& s : g.slots)
    for (cell_id leaf : s.place.leaves)
      if (state.owner[leaf] >= 0 && state.owner[leaf] != g.id) return false;
  for (const auto& s : g.slots)
    for (cell_id leaf : s.place.leaves) {
      state.set_owner(leaf, g.id);
      state.set_reserver(leaf, -1);
    }
  if (g.vc >= 0) {
    vc_in_flight[static_cast<std::size_t>(g.vc)] -= vc_leaves(g);
    state.vc_changed(g.vc);
  }
  set_state(g, group_state::allocated);
  g.reserving = false;
  g.victims.clear();
  g.shrinking.clear();
  return true;
}

void core_impl::release_group(group_entry& g) {
  for (auto& s : g.leaving) free_slot_gpus(g, s);
  g.leaving.clear();
  g.shrinking.clear();
  count_quota(g, -vc_leaves(g));
  for (auto& s : g.slots) {
    for (cell_id leaf : s.place.leaves) {
      if (state.owner[leaf] == g.id) state.set_owner(leaf, -1);
      if (state.reserver[leaf] == g.id) state.set_reserver(leaf, -1);
    }
    if (s.vc_cell >= 0) state.release_use(s.vc_cell, static_cast<int>(s.place.leaves.size()), s.borrowed);
    s.vc_cell = -1;
  }
  g.slots.clear();
  g.victims.clear();
  g.reserving = false;
  g.lenders.clear();
  g.reclaim_due_ms = -1;
  set_state(g, group_state::pending);
}

void core_impl::cancel_preemption(group_entry& g, const std::string& by) {
  const bool was_reserving = g.reserving;
  release_group(g);
  for (const auto& uid : g.pods)
    if (auto p = pods.find(uid); p != pods.end()) p->second.last_reason.clear();
  notices.push_back({notice_kind::preemption_cancelled, g.name,
                     std::string(was_reserving ? "reservation" : "preemption") + " cancelled: higher-priority group '" +
                         by + "' took the cells",
                     {}});
}

void core_impl::downgrade(group_entry& g, const std::string& reason, const std::string& by,
                          std::int64_t now_ms) {
  count_quota(g, -vc_leaves(g));
  for (auto& s : g.slots) {
    if (s.vc_cell >= 0) state.release_use(s.vc_cell, static_cast<int>(s.place.leaves.size()), s.borrowed);
    s.vc_cell = -1;
    s.borrowed = false;
  }
  g.lenders.clear();
  g.lazy_preempted = true;
  if (g.turn) queue(g);  // its turn follows its priority
  for (const auto& s : g.slots)  // its GPUs turned preemptible for everyone
    for (cell_id leaf : s.place.leaves) {
      state.changed(leaf);
      state.refresh_barrier(leaf);
    }
  g.lazy_reason = reason;
  g.preemptor = by;
  g.preempted_ms = now_ms;
  notices.push_back({by.empty() ? notice_kind::downgraded : notice_kind::lazy_preempted, g.name,
                     (by.empty() ? "downgraded to opportunistic: " : "lazily preempted: ") + reason +
                         "; its pods keep running as opportunistic and are deleted only if their GPUs are needed",
                     {}});
}

bool core_impl::cannot_fit(const group_entry& g, const std::set<std::string>* nodes, std::int64_t now_ms) {
  if (!options.shortcuts || nodes || !g.spec.pinned_cell_id.empty()) return false;
  if (options.reserve_after_ms > 0 && g.waiting_since_ms >= 0 && now_ms - g.waiting_since_ms >= options.reserve_after_ms)
    return false;
  int need = 0;
  for (const auto& m : g.spec.members) need += m.pod_number * m.leaf_cell_number;
  if (g.elastic()) need = g.spec.min_members * g.spec.members.front().leaf_cell_number;
  if (!g.guaranteed()) {
    // Only free GPUs serve it: more than there are, or a pod larger than any node's free GPUs.
    if (need > state.total_avail()) return true;
    int largest = 0;
    for (const auto& m : g.spec.members) largest = std::max(largest, m.leaf_cell_number);
    bool some_node = false;
    state.visit_tops_fitting(g.spec.leaf_cell_type, largest, [&](cell_id) { return !(some_node = true); });
    return !some_node;
  }
  if (physical_mode() || g.vc < 0) return false;
  const int unused = state.vc_unused(g.vc, g.spec.leaf_cell_type);
  if (need <= unused) return false;
  // What it could borrow now (note 9), whole cells counted whole: a bound, as the rest.
  const int borrowed_room = can_borrow(g.vc) ? borrowable(g.vc, g.spec.leaf_cell_type) : 0;
  // Quota held below this group's priority, and a preempting group's quota, which is counted
  // while its victims still hold theirs on the same GPUs: added back. So is quota lent out
  // (any type: a bound on what a reclaim frees).
  int preemptible = vc_in_flight[static_cast<std::size_t>(g.vc)] + state.lent_used(g.vc);
  for (const auto& [prio, leaves] : vc_held[static_cast<std::size_t>(g.vc)]) {
    if (prio >= g.priority()) break;
    preemptible += leaves;
  }
  return need > unused + preemptible + borrowed_room;
}

int core_impl::borrowable(int vc, const std::string& leaf_type) const {
  auto& cached = borrowable_cache[static_cast<std::size_t>(vc)];
  if (leaf_type.empty() && cached.first == state.binding_version() + 1) return cached.second;
  int gpus = 0;
  for (const auto& t : borrow_terms[static_cast<std::size_t>(vc)]) {
    if (!type_matches(leaf_type, t.leaf_type)) continue;
    const int room = t.limit - state.borrowed_cells(vc, t.type);
    if (room <= 0) continue;
    int lendable = 0;
    for (std::size_t l = 0; l < model.vcs.size(); ++l) {
      const int lender = static_cast<int>(l);
      if (lender == vc) continue;
      const int may = t.lend_limit[l] - state.lent_cells(lender, t.type);
      if (may > 0) lendable += std::min(may, state.unbound_of_type(lender, t.type));
    }
    if (lendable > 0) gpus += std::min(room, lendable) * t.leaves;
  }
  if (leaf_type.empty()) cached = {state.binding_version() + 1, gpus};
  return gpus;
}

void core_impl::plan_borrowing() {
  borrow_terms.assign(model.vcs.size(), {});
  for (std::size_t v = 0; v < model.vcs.size(); ++v)
    for (const auto& [type, limit] : model.vcs[v].borrowing_limit) {
      const auto info = model.tree.type_info(type);
      if (!info) continue;
      borrow_term t;
      t.type = type;
      t.leaf_type = info->leaf_type;
      t.limit = limit;
      for (auto u = info; u && !u->is_leaf; u = model.tree.type_info(u->child_type)) t.leaves *= u->child_number;
      for (const auto& lender : model.vcs) t.lend_limit.push_back(limit_of(lender.lending_limit, type));
      borrow_terms[v].push_back(std::move(t));
    }
}

int core_impl::scope_watch(int vc, const std::string& leaf_type) const {
  // A borrower's placement also depends on the space outside bound cells while it could
  // borrow there, and on loans and bindings anywhere while it could not (note 9).
  if (state.has_unbound(vc) || (can_borrow(vc) && borrowable(vc, leaf_type) > 0)) return 1;
  return can_borrow(vc) ? 2 : 0;
}

std::string core_impl::place_group(group_entry& g, const std::set<std::string>* nodes, std::int64_t now_ms) {
  if (g.topo) return place_topology_group(g, nodes, now_ms);
  if (!options.shortcuts || nodes) {
    g.told = false;
    g.hint.reset();
    return search_group(g, nodes, now_ms);
  }
  const bool old = old_enough(g, now_ms);
  const scope_stamp at = scope_of(g);
  if (g.hint && g.hint->at == at && g.hint->old == old) return g.hint->reason;
  // Fails like its class. Pods already told something keep it until schedule() refreshes the
  // reason within its budget (the counts in it are what changed).
  if (told_fails_like_class(g, at, old)) return g.hint->reason;
  if (class_fails(g, at, old)) {
    g.told = false;
    g.hint = placement_hint{at, old, false, wait_reason(g)};
    return g.hint->reason;
  }
  g.told = false;
  const std::uint64_t changes = state.stamp().changes;
  std::string reason = search_group(g, nodes, now_ms);
  // Placed, or it changed the state on its way (downgrades, cancellations): no hint.
  if (g.state != group_state::pending || state.stamp().changes != changes) {
    g.hint.reset();
    return reason;
  }
  if (failed_classes.size() > 4096) {
    failed_classes.clear();
    ++failed_generation;
  }
  auto [entry, added] = failed_classes.insert_or_assign(*g.klass, at);
  g.class_failed = &entry->second;
  g.class_generation = failed_generation;
  g.hint = placement_hint{at, old, false, reason};
  return reason;
}

bool core_impl::class_fails(group_entry& g, const scope_stamp& at, bool old) {
  if (!g.klass) {
    std::vector<std::pair<int, int>> members;
    for (const auto& m : g.spec.members) members.emplace_back(m.pod_number, m.leaf_cell_number);
    if (g.elastic()) members.emplace_back(-1, g.spec.min_members); // places apart from a whole gang
    g.klass.emplace(g.vc, g.priority(), g.spec.leaf_cell_type, g.spec.pinned_cell_id, std::move(members), old);
  }
  if (std::get<1>(*g.klass) != g.priority() || std::get<5>(*g.klass) != old || g.class_generation != failed_generation) {
    std::get<1>(*g.klass) = g.priority();
    std::get<5>(*g.klass) = old;
    auto it = failed_classes.find(*g.klass);
    g.class_failed = it == failed_classes.end() ? nullptr : &it->second;
    g.class_generation = failed_generation;
  }
  return g.class_failed && *g.class_failed == at;
}

bool core_impl::told_fails_like_class(group_entry& g, const scope_stamp& at, bool old) {
  if (!options.shortcuts || g.state != group_state::pending || !g.told || !g.hint) return false;
  if ((g.hint->at == at && g.hint->old == old) || !class_fails(g, at, old)) return false;
  g.hint->at = at;
  g.hint->old = old;
  g.hint->stale = true;
  return true;
}

std::string core_impl::search_group(group_entry& g, const std::set<std::string>* nodes, std::int64_t now_ms) {
  if (cannot_fit(g, nodes, now_ms)) return wait_reason(g);
  if (auto a = try_sizes(g, 0, nodes)) {
    commit_allocated(g, *a);
    return {};
  }
  // Others' idle cells before preempting its own VC's work (note 9).
  const bool may_borrow_now = g.guaranteed() && can_borrow(g.vc) && g.spec.pinned_cell_id.empty() &&
                              borrowable(g.vc, g.spec.leaf_cell_type) > 0;
  if (may_borrow_now) {
    if (auto a = try_sizes(g, 3, nodes)) {
      commit_allocated(g, *a);
      note_borrowed(g);
      return {};
    }
  }
  for (int round = 0; g.guaranteed() && round < 4; ++round) {
    // A reclaim first asks the borrower with the largest fair share to give cells back.
    std::optional<attempt> a;
    if (round == 0 && !(drf_spared = drf_spare_for(g)).empty()) {
      a = try_sizes(g, 1, nodes);
      drf_spared.clear();
    }
    if (!a) a = try_sizes(g, 1, nodes);
    if (!a) break;
    std::vector<group_entry*> lazy, cancel;
    // Elastic victims above their minimum give up pods instead of being deleted whole.
    std::set<int> whole;
    const bool shrinks = shrink_victims(g, *a, whole, false);
    for (int v : a->victims) {
      group_entry* q = group(v);
      if (!q || !whole.count(v)) continue;
      if (q->state == group_state::preempting) cancel.push_back(q);
      else if (q->spec.lazy_preemption_enable && q->guaranteed() && !q->lenders.count(g.vc)) lazy.push_back(q);
    }
    if (lazy.empty() && cancel.empty()) {
      if (shrinks) shrink_victims(g, *a, whole, true);
      commit_preempting(g, *a);
      note_reclaim(g, now_ms);
      if (!g.lenders.empty()) note_borrowed(g);
      return {};
    }
    undo(*a);
    g.shrinking.clear();
    for (auto* q : lazy)
      downgrade(*q, "group '" + g.name + "' (priority " + std::to_string(g.priority()) +
                        ") needed its virtual cells", g.name, now_ms);
    for (auto* q : cancel) cancel_preemption(*q, g.name);
    if (auto b = try_place(g, 0, nodes)) {
      commit_allocated(g, *b);
      return {};
    }
  }
  // Head of line: the oldest long-waiting group of its scope reserves cells (note 5).
  if (options.reserve_after_ms > 0 && g.waiting_since_ms >= 0 &&
      now_ms - g.waiting_since_ms >= options.reserve_after_ms) {
    const int scope = g.guaranteed() && !physical_mode() ? g.vc : -1;
    bool taken = false;
    for (const auto& [id, other] : by_id)
      if (other != &g && other->reserving &&
          (other->guaranteed() && !physical_mode() ? other->vc : -1) == scope)
        taken = true;
    if (!taken) {
      if (auto a = try_sizes(g, 2, nodes)) {
        commit_preempting(g, *a);
        g.victims.clear();
        g.reserving = true;
        if (finish_preemption(g)) return {};
        return {};
      }
    }
  }
  return wait_reason(g);
}

} // namespace kozmo::scheduler::detail
