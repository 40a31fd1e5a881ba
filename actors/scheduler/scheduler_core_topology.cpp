// Gang topology behind the facade (scheduler_core.hpp note 11): hard levels for a gang and its
// subgroups, and a preferred level with fallback. The search is the ordinary whole-gang
// placement (try_place) run once per candidate cell, or combination of cells, with each
// member's GPUs confined to its cell through topo_within; the first that fits wins. Candidates
// come in best-fit order (on a free pass the cells with the fewest available GPUs that still
// have enough; on the others the most available first) and the work is bounded: at most
// `placements_per_pass` placements per pass.
#include "actors/scheduler/scheduler_core_impl.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace kozmo::scheduler::detail {

struct subgroup_shape {
  std::string name;         // "" for the pods that name no subgroup
  std::string level;        // "" when none
  int min_members = 0;      // 0: not given
  int pods = 0;
  int need = 0;             // GPUs of all its pods
  std::vector<int> members; // indices into the group's spec.members
};

struct gang_topology {
  std::string gang_level;
  std::string preferred_level;
  bool has_subgroups = false;            // some pod names a subgroup: wait for all of them
  std::vector<affinity_member> declared; // kozmo.io/gang-members, as the gang's first pod said
  std::vector<subgroup_shape> subgroups; // built from the pods once all are present
  // Per member of spec.members: its subgroup; nullopt for a recovered slot no pod named.
  std::vector<std::optional<std::string>> member_subgroup;
  bool last_relaxed = false; // the last placement found lies outside the preferred level
  std::string relaxed;       // why the gang's placement lies outside its preferred level
  std::string waiting;       // why the subgroups cannot be built yet ("" once built)
};

namespace {

constexpr int placements_per_pass = 256;
constexpr std::size_t cells_per_level = 128;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Whether every one of `leaves` lies in one cell of `lc`.
bool within_one(const cell_tree& tree, const core_impl::level_cells& lc, const std::vector<cell_id>& leaves) {
  if (leaves.empty()) return true;
  for (cell_id up = leaves.front(); up != no_cell; up = tree.at(up).parent) {
    if (!lc.mark[up]) continue;
    if (std::all_of(leaves.begin(), leaves.end(), [&](cell_id l) { return cell_inside(tree, l, up); })) return true;
  }
  return false;
}

std::string quoted_level(const std::string& level) { return "one '" + level + "' cell"; }

} // namespace

const core_impl::level_cells* core_impl::level_of(const std::string& word) {
  const cell_tree& tree = model.tree;
  if (cell_types.empty())
    for (cell_id id = 0; id < tree.size(); ++id) cell_types.insert(tree.at(id).type);
  const bool exact = cell_types.count(word) > 0;
  const std::string w = lower(word);
  const std::string key = exact ? word : "~" + w; // '~' is no character of a valid word
  if (auto it = levels.find(key); it != levels.end()) return &it->second;
  level_cells lc;
  lc.mark.assign(tree.size(), 0);
  for (cell_id id = 0; id < tree.size(); ++id) {
    const cell& c = tree.at(id);
    bool match = false;
    if (exact) {
      match = c.type == word;
    } else if (w == "node") {
      match = c.is_node_level;
    } else {
      // rack-0 (label-derived, named after the level) or V100-RACK (HiveD's custom).
      const std::string t = lower(c.type);
      const std::size_t n = w.size();
      match = t == w || (t.size() > n && t.compare(0, n, w) == 0 && std::strchr("-_./", t[n])) ||
              (t.size() > n && t.compare(t.size() - n, n, w) == 0 && std::strchr("-_./", t[t.size() - n - 1]));
    }
    if (!match) continue;
    lc.cells.push_back(id);
    lc.mark[id] = 1;
  }
  if (lc.cells.empty()) return nullptr; // not kept: a stream of bad words must not grow the map
  return &levels.emplace(key, std::move(lc)).first->second;
}

status core_impl::topology_admit(group_entry& g, const pod_view& pod) {
  const pod_scheduling_spec& s = pod.spec;
  for (const auto& [key, word] : {std::pair{keys::gang_level, &s.gang_level},
                                  std::pair{keys::preferred_level, &s.preferred_level},
                                  std::pair{keys::subgroup_level, &s.subgroup_level}}) {
    if (word->empty() || level_of(*word)) continue;
    std::string list;
    for (const auto& t : cell_types)
      if (!model.tree.type_info(t) || !model.tree.type_info(t)->is_leaf) list += (list.empty() ? "" : ", ") + t;
    return error::bad_request(std::string(key) + ": '" + *word + "' is not a cell level of the cluster: use a cell type (" +
                              list + ") or node");
  }
  const bool fresh = g.pods.empty() && g.state == group_state::pending;
  if (!fresh) {
    const std::string none;
    const std::string& gang_level = g.topo ? g.topo->gang_level : none;
    const std::string& preferred = g.topo ? g.topo->preferred_level : none;
    if (s.gang_level != gang_level)
      return error::bad_request(std::string(keys::gang_level) + ": '" + s.gang_level + "' differs from '" + gang_level +
                                "' of the other pods of gang '" + g.name + "'");
    if (s.preferred_level != preferred)
      return error::bad_request(std::string(keys::preferred_level) + ": '" + s.preferred_level + "' differs from '" +
                                preferred + "' of the other pods of gang '" + g.name + "'");
    if (!s.subgroup.empty() && !(g.topo && g.topo->has_subgroups) && g.state != group_state::pending)
      return error::bad_request(std::string(keys::subgroup) + ": gang '" + g.name +
                                "' was placed before any of its pods named a subgroup; every pod of a gang with "
                                "subgroups must carry " + keys::subgroup);
    for (const auto& uid : g.pods) {
      const pod_scheduling_spec& other = pods.at(uid).view.spec;
      if (s.subgroup.empty() || other.subgroup != s.subgroup) continue;
      if (other.subgroup_level != s.subgroup_level || other.subgroup_min_members != s.subgroup_min_members)
        return error::bad_request(std::string(keys::subgroup_level) + " and " + keys::subgroup_min_members +
                                  " must be the same on every pod of subgroup '" + s.subgroup + "' of gang '" + g.name + "'");
      break;
    }
  }
  if (!s.has_topology()) return ok;
  if (!g.topo) {
    g.topo = std::make_shared<gang_topology>();
    g.topo->gang_level = s.gang_level;
    g.topo->preferred_level = s.preferred_level;
    g.topo->declared = g.spec.members;
  }
  g.topo->has_subgroups = g.topo->has_subgroups || !s.subgroup.empty();
  return ok;
}

void core_impl::topology_recovered(const pod_view& pod) {
  auto p = pods.find(pod.ref.uid);
  if (p == pods.end()) return;
  auto it = groups.find(p->second.group);
  if (it == groups.end()) return;
  group_entry& g = it->second;
  if (!g.topo && !pod.spec.has_topology()) return;
  if (!g.topo) {
    g.topo = std::make_shared<gang_topology>();
    g.topo->gang_level = pod.spec.gang_level;
    g.topo->preferred_level = pod.spec.preferred_level;
    g.topo->declared = g.spec.members;
  }
  gang_topology& t = *g.topo;
  t.has_subgroups = t.has_subgroups || !pod.spec.subgroup.empty();
  // The members as the bind-info laid them out (subgroups split kozmo.io/gang-members).
  std::vector<affinity_member> laid_out;
  for (const auto& s : g.slots) {
    if (laid_out.size() <= static_cast<std::size_t>(s.member)) laid_out.resize(static_cast<std::size_t>(s.member) + 1);
    auto& m = laid_out[static_cast<std::size_t>(s.member)];
    ++m.pod_number;
    m.leaf_cell_number = static_cast<int>(s.place.leaf_indices.size());
  }
  if (laid_out != g.spec.members) {
    g.spec.members = std::move(laid_out);
    g.klass.reset();
  }
  t.member_subgroup.resize(g.spec.members.size());
  for (const auto& s : g.slots)
    if (s.pod_uid == pod.ref.uid) t.member_subgroup[static_cast<std::size_t>(s.member)] = pod.spec.subgroup;
}

bool core_impl::topology_slot_fits(const group_entry& g, const slot& s, const pod_scheduling_spec& pod) const {
  if (static_cast<int>(s.place.leaf_indices.size()) != pod.leaf_cell_number) return false;
  const auto& subgroups = g.topo->member_subgroup;
  const auto m = static_cast<std::size_t>(s.member);
  if (m >= subgroups.size() || !subgroups[m]) return true;
  return *subgroups[m] == pod.subgroup;
}

namespace {

// The subgroups of a gang whose pods are all present, read from the pods: spec.members is laid
// out again as one member per (subgroup, pod size), narrower subgroup levels first (so that,
// for pods of one size, a subgroup confined to a node takes its GPUs before one that may use a
// whole rack). Returns why it cannot be done yet, or "".
std::string build_subgroups(core_impl& d, group_entry& g) {
  gang_topology& t = *g.topo;
  int total = 0;
  for (const auto& m : t.declared) total += m.pod_number;
  const int present = static_cast<int>(g.pods.size());
  const std::string prefix = "the gang '" + g.name + "' has subgroups: ";
  if (present < total)
    return prefix + "it is placed once all " + std::to_string(total) + " pods " + keys::gang_members + " counts are present (" +
           std::to_string(present) + " now)";
  if (present > total)
    return prefix + "it has " + std::to_string(present) + " pods, more than the " + std::to_string(total) + " " +
           keys::gang_members + " counts";
  std::map<std::string, subgroup_shape> by_name;
  std::map<std::pair<std::string, int>, int> counts; // (subgroup, pod size) -> pods
  std::map<int, int> sizes;
  for (const auto& uid : g.pods) {
    const pod_scheduling_spec& s = d.pods.at(uid).view.spec;
    subgroup_shape& sg = by_name[s.subgroup];
    sg.name = s.subgroup;
    sg.level = s.subgroup_level;
    sg.min_members = s.subgroup_min_members;
    ++sg.pods;
    sg.need += s.leaf_cell_number;
    ++counts[{s.subgroup, s.leaf_cell_number}];
    ++sizes[s.leaf_cell_number];
  }
  std::map<int, int> declared;
  for (const auto& m : t.declared) declared[m.leaf_cell_number] += m.pod_number;
  if (sizes != declared)
    return prefix + "the GPUs of its pods do not add up to " + keys::gang_members + " " + format_members(t.declared);
  for (const auto& [name, sg] : by_name)
    if (sg.min_members > sg.pods)
      return prefix + "subgroup '" + name + "' asks for at least " + std::to_string(sg.min_members) + " pods (" +
             keys::subgroup_min_members + ") but has " + std::to_string(sg.pods);
  // Narrowest level first: the lowest cell level among the level's cells; none last.
  auto rank = [&](const subgroup_shape& sg) {
    if (sg.level.empty()) return 1 << 20;
    int lowest = 1 << 20;
    if (const auto* lc = d.level_of(sg.level))
      for (cell_id id : lc->cells) lowest = std::min(lowest, d.model.tree.at(id).level);
    return lowest;
  };
  std::vector<subgroup_shape> ordered;
  for (auto& [name, sg] : by_name) ordered.push_back(std::move(sg));
  std::stable_sort(ordered.begin(), ordered.end(),
                   [&](const subgroup_shape& a, const subgroup_shape& b) { return rank(a) < rank(b); });
  std::vector<affinity_member> members;
  t.member_subgroup.clear();
  for (auto& sg : ordered)
    for (auto it = counts.rbegin(); it != counts.rend(); ++it) {
      if (it->first.first != sg.name) continue;
      sg.members.push_back(static_cast<int>(members.size()));
      members.push_back({it->second, it->first.second});
      t.member_subgroup.emplace_back(sg.name);
    }
  t.subgroups = std::move(ordered);
  if (members != g.spec.members) {
    g.spec.members = std::move(members);
    g.klass.reset();
  }
  return {};
}

// "within one 'rack' cell (kozmo.io/gang-level), subgroup 'prefill' within one 'node' cell"
std::string constraint_phrase(const gang_topology& t) {
  std::string out;
  if (!t.gang_level.empty()) out = "within " + quoted_level(t.gang_level) + " (" + keys::gang_level + ")";
  for (const auto& sg : t.subgroups) {
    if (sg.level.empty()) continue;
    out += (out.empty() ? "" : ", ") + std::string("subgroup '") + sg.name + "' within " + quoted_level(sg.level);
  }
  return out;
}

} // namespace

std::string core_impl::place_topology_group(group_entry& g, const std::set<std::string>* nodes, std::int64_t now_ms) {
  gang_topology& t = *g.topo;
  // No queueing hints for topology gangs (note 11d): searched on every round.
  g.told = false;
  g.hint.reset();
  if (t.has_subgroups) {
    t.waiting = build_subgroups(*this, g);
    if (!t.waiting.empty()) return t.waiting;
  }
  t.last_relaxed = false;
  std::string reason = search_group(g, nodes, now_ms);
  if (g.state != group_state::pending) {
    t.relaxed.clear();
    if (t.last_relaxed) {
      t.relaxed = "no " + quoted_level(t.preferred_level) + " (" + keys::preferred_level +
                  ") could hold the gang; placed across cells instead";
      notices.push_back({notice_kind::topology_relaxed, g.name, t.relaxed, {}});
    }
    return reason;
  }
  const std::string where = constraint_phrase(t);
  return where.empty() ? reason : "no placement " + where + " fits now; " + reason;
}

std::optional<attempt> core_impl::try_place_topology(group_entry& g, int max_cost, const std::set<std::string>* nodes) {
  gang_topology& t = *g.topo;
  const cell_tree& tree = model.tree;
  const bool free_only = max_cost == 0;
  std::vector<cell_id> within(g.spec.members.size(), no_cell);
  struct restore {
    const std::vector<cell_id>*& p;
    ~restore() { p = nullptr; }
  } restore_within{topo_within};
  topo_within = &within;
  int budget = placements_per_pass;

  // Cells of a level that lie in `in` or hold it (no_cell: anywhere), of the gang's leaf type,
  // large enough for `need` GPUs, best fit first.
  auto candidates = [&](const level_cells& lc, cell_id in, int need) {
    std::vector<std::pair<int, cell_id>> found;
    for (cell_id c : lc.cells) {
      const cell& x = tree.at(c);
      if (x.leaf_count < need) continue;
      if (!g.spec.leaf_cell_type.empty() && x.leaf_type != g.spec.leaf_cell_type) continue;
      if (in != no_cell && !cell_inside(tree, c, in) && !cell_inside(tree, in, c)) continue;
      const int avail = state.avail_leaves(c);
      if (free_only && avail < need) continue;
      found.emplace_back(free_only ? avail : -avail, c);
    }
    std::sort(found.begin(), found.end());
    if (found.size() > cells_per_level) found.resize(cells_per_level);
    std::vector<cell_id> out;
    out.reserve(found.size());
    for (const auto& f : found) out.push_back(f.second);
    return out;
  };

  // The gang confined to `gang_cell` (no_cell: anywhere), each subgroup with a level to one
  // cell of it inside there: combinations in best-fit order until one fits or the budget ends.
  auto place_in = [&](cell_id gang_cell) -> std::optional<attempt> {
    std::fill(within.begin(), within.end(), gang_cell);
    std::vector<const subgroup_shape*> leveled;
    std::vector<std::vector<cell_id>> options;
    for (const auto& sg : t.subgroups) {
      if (sg.level.empty()) continue;
      const level_cells* lc = level_of(sg.level);
      if (!lc) return std::nullopt;
      leveled.push_back(&sg);
      options.push_back(candidates(*lc, gang_cell, sg.need));
      if (options.back().empty()) return std::nullopt;
    }
    std::vector<cell_id> chosen(leveled.size(), no_cell);
    auto search = [&](auto& self, std::size_t i) -> std::optional<attempt> {
      if (i == leveled.size()) {
        if (budget-- <= 0) return std::nullopt;
        return try_place(g, max_cost, nodes);
      }
      for (cell_id c : options[i]) {
        if (budget <= 0) return std::nullopt;
        if (free_only) { // subgroups sharing a cell must fit in its available GPUs together
          int need = leveled[i]->need;
          for (std::size_t j = 0; j < i; ++j) need += chosen[j] == c ? leveled[j]->need : 0;
          if (need > state.avail_leaves(c)) continue;
        }
        chosen[i] = c;
        const cell_id confine = gang_cell != no_cell && cell_inside(tree, gang_cell, c) ? gang_cell : c;
        for (int m : leveled[i]->members) within[static_cast<std::size_t>(m)] = confine;
        if (auto a = self(self, i + 1)) return a;
      }
      return std::nullopt;
    };
    return search(search, 0);
  };

  int need = 0;
  for (const auto& m : g.spec.members) need += m.pod_number * m.leaf_cell_number;
  const level_cells* gang = t.gang_level.empty() ? nullptr : level_of(t.gang_level);
  const level_cells* preferred = t.preferred_level.empty() ? nullptr : level_of(t.preferred_level);
  auto held_by_gang_cell = [&](cell_id c) {
    for (cell_id up = c; up != no_cell; up = tree.at(up).parent)
      if (gang->mark[up]) return true;
    return false;
  };
  std::optional<attempt> found;
  if (preferred)
    for (cell_id p : candidates(*preferred, no_cell, need)) {
      if (gang && !held_by_gang_cell(p)) continue; // not narrower than the gang's level
      if ((found = place_in(p)) || budget <= 0) break;
    }
  if (!found && gang) {
    for (cell_id c : candidates(*gang, no_cell, need))
      if ((found = place_in(c)) || budget <= 0) break;
  } else if (!found) {
    found = place_in(no_cell);
  }
  if (found && preferred) {
    std::vector<cell_id> leaves;
    for (const auto& s : found->slots) leaves.insert(leaves.end(), s.place.leaves.begin(), s.place.leaves.end());
    t.last_relaxed = !within_one(tree, *preferred, leaves);
  } else if (found) {
    t.last_relaxed = false;
  }
  return found;
}

json::value core_impl::topology_json(const group_entry& g) const {
  const gang_topology& t = *g.topo;
  json::object o;
  if (!t.gang_level.empty()) o.set("gangLevel", t.gang_level);
  if (!t.preferred_level.empty()) o.set("preferredLevel", t.preferred_level);
  if (!t.relaxed.empty()) o.set("relaxed", t.relaxed);
  if (!t.waiting.empty() && g.state == group_state::pending) o.set("waiting", t.waiting);
  json::array subgroups;
  for (const auto& sg : t.subgroups) {
    json::object s;
    s.set("name", sg.name);
    if (!sg.level.empty()) s.set("level", sg.level);
    if (sg.min_members > 0) s.set("minMembers", sg.min_members);
    s.set("pods", sg.pods);
    s.set("gpus", sg.need);
    subgroups.push_back(std::move(s));
  }
  if (!subgroups.empty()) o.set("subgroups", std::move(subgroups));
  return o;
}

} // namespace kozmo::scheduler::detail
