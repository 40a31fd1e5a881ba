// The map of who holds what, for people: each VC's GPUs, the gangs that wait and why, and the
// state of every GPU under its physical cell (scheduler_core.hpp's cell_map). Read-only.
#include "actors/scheduler/scheduler_core_impl.hpp"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

namespace kozmo::scheduler::detail {
namespace {

int gang_gpus(const group_entry& g) {
  int gpus = 0;
  for (const auto& m : g.spec.members) gpus += m.pod_number * m.leaf_cell_number;
  return gpus;
}

} // namespace

std::vector<vc_usage> core_impl::vc_usages() const {
  std::vector<vc_usage> out(model.vcs.size());
  for (std::size_t v = 0; v < model.vcs.size(); ++v) {
    vc_usage& u = out[v];
    u.name = model.vcs[v].name;
    int bad = 0;
    for (int index : state.vc_cells_of[v]) {
      const vc_cell& c = state.vc_cells[index];
      u.guaranteed += c.leaf_count;
      u.used += c.used;
      u.lent += c.borrowed_used;
      if (c.bound != no_cell) bad += std::max(0, state.bad_leaves(c.bound) - state.foreign_leaves(c.bound));
    }
    u.free = std::max(0, u.guaranteed - u.used - bad);
    u.borrowed += state.borrowed_used(static_cast<int>(v));
  }
  for (const auto& [name, g] : groups) {
    if (g.vc < 0 || g.guaranteed() || g.state == group_state::pending) continue;
    for (const auto& s : g.slots) out[static_cast<std::size_t>(g.vc)].borrowed += static_cast<int>(s.place.leaves.size());
  }
  return out;
}

std::vector<waiting_gang> core_impl::waiting_gangs() const {
  std::vector<const group_entry*> order;
  for (const auto& [name, g] : groups)
    if (g.state != group_state::allocated && !g.pods.empty()) order.push_back(&g);
  std::sort(order.begin(), order.end(), [](const group_entry* a, const group_entry* b) {
    return std::make_tuple(-a->priority(), a->created_ms, std::string_view(a->name)) <
           std::make_tuple(-b->priority(), b->created_ms, std::string_view(b->name));
  });
  std::vector<waiting_gang> out;
  out.reserve(order.size());
  for (const group_entry* g : order) {
    waiting_gang w;
    w.name = g->name;
    w.vc = g->vc >= 0 ? model.vcs[static_cast<std::size_t>(g->vc)].name : std::string();
    w.priority = g->priority();
    w.pods = static_cast<int>(g->pods.size());
    w.gpus = gang_gpus(*g);
    w.since_ms = g->created_ms;
    for (const auto& uid : g->pods) {
      auto it = pods.find(uid);
      if (it != pods.end() && !it->second.last_reason.empty()) {
        w.reason = it->second.last_reason;
        break;
      }
    }
    if (w.reason.empty() && g->hint) w.reason = g->hint->reason;
    if (g->state == group_state::preempting) {
      w.reason_kind = "Preempting";
      if (w.reason.empty()) w.reason = g->preempt_reason;
    } else if (g->reserving) {
      w.reason_kind = "Reserving";
    } else if (!g->guaranteed()) {
      w.reason_kind = "Opportunistic";
    } else {
      w.reason_kind = g->vc >= 0 ? "VirtualClusterFull" : "ClusterFull";
    }
    out.push_back(std::move(w));
  }
  return out;
}

std::vector<map_cell> core_impl::map_cells() const {
  std::vector<map_cell> out;
  const cell_tree& tree = model.tree;
  auto gang_of = [&](int id, gpu_run& run) {
    auto it = by_id.find(id);
    if (it == by_id.end()) return;
    run.gang = it->second->name;
    if (it->second->vc >= 0) run.vc = model.vcs[static_cast<std::size_t>(it->second->vc)].name;
  };
  auto leaf_run = [&](cell_id leaf) {
    gpu_run run;
    run.count = 1;
    const int owner = state.owner[leaf], reserver = state.reserver[leaf];
    if (state.foreign_leaves(leaf) > 0) {
      run.state = gpu_state::other;
    } else if (state.is_bad_leaf(leaf)) {
      if (owner >= 0) gang_of(owner, run);
      run.state = gpu_state::bad;
    } else if (owner >= 0) {
      gang_of(owner, run);
      auto it = by_id.find(owner);
      const bool opportunistic = it != by_id.end() && !it->second->guaranteed();
      run.state = reserver >= 0 ? gpu_state::preempting : opportunistic ? gpu_state::opportunistic : gpu_state::bound;
    } else if (reserver >= 0) {
      gang_of(reserver, run);
      run.state = gpu_state::reserved;
    }
    return run;
  };
  // Depth first from each top-level cell: parents before children, a node's GPUs in tree order.
  struct frame {
    cell_id id;
    int parent;
  };
  std::vector<frame> stack;
  const auto& tops = tree.top_cells();
  for (auto it = tops.rbegin(); it != tops.rend(); ++it) stack.push_back({*it, -1});
  std::vector<cell_id> below;
  while (!stack.empty()) {
    const frame f = stack.back();
    stack.pop_back();
    const cell& c = tree.at(f.id);
    map_cell m;
    m.address = c.address;
    m.type = c.type;
    m.parent = f.parent;
    const int index = static_cast<int>(out.size());
    if (c.is_node_level || c.level == 1) {
      m.node = c.node;
      below.assign(1, f.id);
      // The leaves under the node-level cell, tree order.
      for (std::size_t i = 0; i < below.size();) {
        const cell& b = tree.at(below[i]);
        if (b.level == 1) { ++i; continue; }
        below.erase(below.begin() + static_cast<std::ptrdiff_t>(i));
        below.insert(below.begin() + static_cast<std::ptrdiff_t>(i), b.children.begin(), b.children.end());
      }
      for (cell_id leaf : below) {
        gpu_run run = leaf_run(leaf);
        if (!m.gpus.empty() && m.gpus.back().state == run.state && m.gpus.back().gang == run.gang)
          ++m.gpus.back().count;
        else
          m.gpus.push_back(std::move(run));
      }
      out.push_back(std::move(m));
      continue;
    }
    out.push_back(std::move(m));
    for (auto ch = c.children.rbegin(); ch != c.children.rend(); ++ch) stack.push_back({*ch, index});
  }
  return out;
}

} // namespace kozmo::scheduler::detail
