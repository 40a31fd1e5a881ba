// The inspect JSON of the core's state: a group, a VC's cells, the physical nodes (HiveD's
// inspect views; inspect_api.cpp maps the paths onto them).
#include "actors/scheduler/scheduler_core_impl.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace kozmo::scheduler::detail {

json::value core_impl::group_json(const group_entry& g) const {
  json::object o;
  o.set("name", g.name);
  o.set("vc", g.spec.virtual_cluster);
  o.set("priority", g.spec.priority);
  bool victim = false;
  for (const auto& [id, other] : by_id)
    victim = victim || (other->state == group_state::preempting && other->victims.count(g.id));
  const char* st = g.state == group_state::pending      ? "Pending"
                   : g.state == group_state::preempting ? "Preempting"
                   : victim                             ? "BeingPreempted"
                                                        : "Allocated";
  o.set("state", st);
  if (g.topo) o.set("topology", topology_json(g));
  json::object physical, virt;
  for (const auto& s : g.slots) {
    json::array idx;
    if (auto* prior = physical.find(s.place.node)) idx = prior->as_array();
    for (int i : s.place.leaf_indices) idx.push_back(i);
    physical.set(s.place.node, std::move(idx));
    if (s.vc_cell < 0) continue;
    const vc_cell& c = state.vc_cells[s.vc_cell];
    const std::string key = c.qualified_type + "@" + model.tree.at(c.bound).address;
    json::array vidx;
    if (auto* prior = virt.find(key)) vidx = prior->as_array();
    for (int i : s.place.leaf_indices) vidx.push_back(i);
    virt.set(key, std::move(vidx));
  }
  o.set("physicalPlacement", std::move(physical));
  o.set("virtualPlacement", std::move(virt));
  if (!g.lenders.empty()) {
    json::array from;
    for (int v : g.lenders) from.push_back(model.vcs[static_cast<std::size_t>(v)].name);
    o.set("borrowedFrom", std::move(from));
  }
  if (g.reclaim_due_ms >= 0) o.set("reclaimDueMs", static_cast<long long>(g.reclaim_due_ms));
  json::array allocated, preempting;
  for (const auto& uid : g.pods) (g.state == group_state::preempting ? preempting : allocated).push_back(uid);
  o.set("allocatedPods", std::move(allocated));
  o.set("preemptingPods", std::move(preempting));
  if (g.lazy_preempted) {
    json::object lazy;
    lazy.set("preemptor", g.preemptor);
    lazy.set("preemptionTime", g.preempted_ms);
    lazy.set("reason", g.lazy_reason);
    o.set("lazyPreemptionStatus", std::move(lazy));
  }
  if (g.reserving) o.set("reserving", true);
  return o;
}

json::value core_impl::vc_json(int vc) const {
  std::vector<std::pair<std::string, json::value>> cells;
  for (int index : state.vc_cells_of[vc]) {
    const vc_cell& c = state.vc_cells[index];
    json::object o;
    o.set("cellType", c.qualified_type);
    o.set("leafCellType", c.leaf_type);
    o.set("cellAddress", c.bound == no_cell ? std::string() : model.tree.at(c.bound).address);
    o.set("cellState", c.used > 0 ? "Used" : "Free");
    const bool bad =
        c.doomed || (c.bound != no_cell && state.bad_leaves(c.bound) > state.foreign_leaves(c.bound));
    o.set("cellHealthiness", bad ? "Bad" : "Healthy");
    o.set("doomed", c.doomed);
    o.set("pinned", c.pinned);
    o.set("usedLeafCells", c.used);
    o.set("totalLeafCells", c.leaf_count);
    if (c.borrower >= 0) {
      o.set("lent", model.vcs[static_cast<std::size_t>(c.borrower)].name);
      // A gang of the VC holds it too: it is taking the cell back (its GPUs count twice here).
      if (c.used > c.borrowed_used) o.set("reclaiming", true);
    }
    const std::string key = c.qualified_type + "|" + (c.bound == no_cell ? "~" : model.tree.at(c.bound).address);
    cells.emplace_back(key, std::move(o));
  }
  // Cells it borrowed (note 9), after its own: the lender's cell as the lender sees it.
  for (const auto& c : state.vc_cells) {
    if (c.borrower != vc || c.bound == no_cell) continue;
    json::object o;
    o.set("cellType", c.qualified_type);
    o.set("leafCellType", c.leaf_type);
    o.set("cellAddress", model.tree.at(c.bound).address);
    o.set("cellState", "Used");
    o.set("usedLeafCells", c.borrowed_used);
    o.set("totalLeafCells", c.leaf_count);
    o.set("borrowed", model.vcs[static_cast<std::size_t>(c.vc)].name);
    cells.emplace_back("~borrowed|" + model.tree.at(c.bound).address, std::move(o));
  }
  std::stable_sort(cells.begin(), cells.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  json::array out;
  for (auto& [key, cell] : cells) out.push_back(std::move(cell));
  return out;
}

json::value core_impl::physical_json() const {
  json::array nodes;
  for (const auto& n : model.tree.nodes()) {
    json::object o;
    o.set("node", n.node);
    int used = 0, total = 0, bad = 0, other = 0;
    for (cell_id leaf : model.tree.leaf_cells_of(n.node)) {
      ++total;
      used += state.owner[leaf] >= 0 ? 1 : 0;
      other += state.foreign_leaves(leaf);
      bad += state.is_bad_leaf(leaf) && state.foreign_leaves(leaf) == 0 ? 1 : 0;
    }
    o.set("leafCells", total);
    o.set("usedLeafCells", used);
    o.set("otherPodsLeafCells", other);
    o.set("badLeafCells", bad);
    o.set("cellHealthiness", bad > 0 ? "Bad" : "Healthy");
    nodes.push_back(std::move(o));
  }
  return nodes;
}

} // namespace kozmo::scheduler::detail
