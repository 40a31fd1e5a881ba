// Wait reasons behind the facade: what a waiting gang is told, in words a user can act on (its
// VC's free quota, or the cluster's free GPUs and slots per pod size), and the counts of free
// GPUs those words rest on. Read-only.
#include "actors/scheduler/scheduler_core_impl.hpp"

#include <charconv>
#include <map>
#include <set>

namespace kozmo::scheduler::detail {

namespace {

// Appended in place: a round refreshes a hundred reasons, and a chain of operator+ made a
// string per piece.
void add_int(std::string& out, int v) {
  char digits[16];
  out.append(digits, std::to_chars(digits, digits + sizeof digits, v).ptr);
}

void add_gpus(std::string& out, const std::string& leaf_type) {
  if (!leaf_type.empty()) {
    out += leaf_type;
    out += ' ';
  }
  out += "GPUs";
}

std::string gpus_phrase(const std::string& leaf_type) {
  std::string out;
  add_gpus(out, leaf_type);
  return out;
}

void add_needs(std::string& out, const group_entry& g, const std::string& type) {
  out += "the gang '";
  out += g.name;
  out += "' needs ";
  auto add_count = [&](int count, int size) {
    add_int(out, count);
    out += " × ";
    add_int(out, size);
  };
  if (g.spec.members.size() == 1) {
    add_count(g.spec.members.front().pod_number, g.spec.members.front().leaf_cell_number);
  } else {
    std::map<int, int, std::greater<>> by_size;
    for (const auto& m : g.spec.members) by_size[m.leaf_cell_number] += m.pod_number;
    bool first = true;
    for (const auto& [size, count] : by_size) {
      if (!first) out += " + ";
      first = false;
      add_count(count, size);
    }
  }
  out += ' ';
  add_gpus(out, type);
  out += ", each pod on one node";
}

} // namespace

std::string core_impl::wait_reason(const group_entry& g) const {
  std::string type = g.spec.leaf_cell_type;
  if (g.guaranteed() && !physical_mode() && g.vc >= 0) {
    int total = 0, used = 0, bad = 0, other = 0;
    // "any type" in a VC holding one type reads better as that type.
    const auto& types = vc_leaf_types[static_cast<std::size_t>(g.vc)];
    if (type.empty() && types.size() == 1) type = types.front();
    if (options.shortcuts && g.spec.pinned_cell_id.empty() && state.bad_total() == 0) {
      // Nothing is bad: the VC's counters say what the pass below would count.
      total = state.vc_quota(g.vc, type);
      used = total - state.vc_unused(g.vc, type);
    } else for (int index : state.vc_cells_of[g.vc]) {
      const vc_cell& c = state.vc_cells[index];
      if (!type_matches(type, c.leaf_type)) continue;
      if (g.spec.pinned_cell_id.empty() == c.pinned) continue;
      if (c.pinned && c.qualified_type != g.spec.pinned_cell_id) continue;
      total += c.leaf_count;
      used += c.used;
      if (c.bound == no_cell) continue;
      bad += state.bad_leaves(c.bound);
      other += state.foreign_leaves(c.bound);
    }
    const int free = std::max(0, total - used - bad);
    std::string out;
    out.reserve(192);
    out += "VC ";
    out += model.vcs[g.vc].name;
    out += " has ";
    add_int(out, free);
    out += " of ";
    add_int(out, total);
    out += ' ';
    add_gpus(out, type);
    out += " free";
    if (!g.spec.pinned_cell_id.empty()) out += " in pinned cell " + g.spec.pinned_cell_id;
    if (bad > other) {
      out += " (" + std::to_string(bad - other) + " on bad nodes";
      out += other > 0 ? ", " + std::to_string(other) + " held by other schedulers' pods)" : ")";
    } else if (other > 0) {
      out += " (" + std::to_string(other) + " held by other schedulers' pods)";
    }
    out += "; ";
    add_needs(out, g, type);
    return out;
  }
  std::set<int> sizes;
  for (const auto& m : g.spec.members) sizes.insert(m.leaf_cell_number);
  free_summary fresh;
  free_summary* summary = &fresh;
  if (options.shortcuts) {
    if (free_cache_version != state.avail_version()) {
      free_cache.clear();
      free_cache_version = state.avail_version();
    }
    auto it = free_cache.find(type);
    if (it == free_cache.end()) it = free_cache.emplace(type, count_free(type)).first;
    summary = &it->second;
  } else {
    fresh = count_free(type);
  }
  std::string out = std::string(g.guaranteed() ? "" : "opportunistic: ") + "the cluster has " +
                    std::to_string(summary->free) + " of " + std::to_string(summary->total) + " " +
                    gpus_phrase(type) + " free and healthy; ";
  add_needs(out, g, type);
  // What decides between waiting and resizing; the per-node list only while it stays short.
  for (auto size = sizes.rbegin(); size != sizes.rend(); ++size) {
    const node_slots& n = slots_of(*summary, *size);
    out += "; " + std::to_string(n.slots) + " free " + std::to_string(*size) + "-GPU slot" +
           (n.slots == 1 ? " exists" : "s exist") + n.list;
  }
  // A pod no node can ever hold waits for nothing: say so.
  if (const int biggest = *sizes.rbegin(); biggest > summary->largest)
    out += "; no node holds " + std::to_string(biggest) + " " + gpus_phrase(type) + " (the largest holds " +
           std::to_string(summary->largest) + ")";
  return out;
}

// The node-level cells of a leaf type: their sizes once, their free GPUs from the nodes that
// have some (a full cluster has few).
core_impl::free_summary core_impl::count_free(const std::string& type) const {
  free_summary s;
  auto [size, fresh] = node_sizes.try_emplace(type);
  if (fresh)
    for (cell_id id = 0; id < model.tree.size(); ++id) {
      const cell& c = model.tree.at(id);
      if (!c.is_node_level || !type_matches(type, c.leaf_type)) continue;
      size->second.first += c.leaf_count;
      size->second.second = std::max(size->second.second, c.leaf_count);
    }
  s.total = size->second.first;
  s.largest = size->second.second;
  state.visit_nodes_with_avail(type, [&](cell_id id) {
    const int usable = state.avail_leaves(id);
    s.free += usable;
    s.usable.push_back({id, usable});
  });
  return s;
}

const core_impl::node_slots& core_impl::slots_of(free_summary& s, int size) const {
  auto [it, added] = s.by_size.try_emplace(size);
  if (!added) return it->second;
  node_slots& out = it->second;
  // Slots per node name (a node's cells in several chains add up); listed while at most 16.
  constexpr std::size_t listed_nodes = 16;
  std::map<std::string_view, int> by_node;
  bool listable = true;
  for (const auto& [id, usable] : s.usable) {
    const int k = usable / size;
    if (k == 0) continue;
    out.slots += k;
    if (listable) {
      by_node[model.tree.at(id).node] += k;
      listable = by_node.size() <= listed_nodes;
    }
  }
  if (listable && !by_node.empty()) {
    std::string list;
    for (const auto& [node, k] : by_node) list += (list.empty() ? "" : ", ") + std::string(node) + ": " + std::to_string(k);
    out.list = " (" + list + ")";
  }
  return out;
}

void append_joined(std::string& out, const std::vector<int>& v, std::string_view separator) {
  char digits[16];
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += separator;
    const auto end = std::to_chars(digits, digits + sizeof digits, v[i]).ptr;
    out.append(digits, end);
  }
}

std::string join_indices(const std::vector<int>& v) {
  std::string s;
  append_joined(s, v, ",");
  return s;
}

} // namespace kozmo::scheduler::detail
