// The bind-info annotation and recovery: written at bind (HiveD's layout plus the VC cell type
// each GPU counted against), read back on a restart to rebuild every group exactly.
#include "actors/scheduler/scheduler_core_impl.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>

namespace kozmo::scheduler::detail {

namespace {

// A YAML double-quoted scalar: node names and cell types are config text, quoted to be safe.
void quoted(std::string& out, const std::string& s) {
  out += '"';
  // (One pass over the bytes: find_first_of asks memchr once per byte.)
  if (std::none_of(s.begin(), s.end(), [](char c) { return c == '"' || c == '\\'; })) {
    out += s;
  } else {
    for (char c : s) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
  }
  out += '"';
}

void int_list(std::string& out, const std::vector<int>& v) {
  out += '[';
  append_joined(out, v, ", ");
  out += ']';
}

} // namespace

// HiveD's layout plus what recovery needs: the VC cell type each GPU was counted against
// (preassignedCellTypes, empty for an opportunistic GPU). Written by hand, not with
// YAML::Emitter: it is on the bind path of every pod.
std::string core_impl::bind_info(const slot& s, const std::string& group_part) const {
  std::string out;
  out.reserve(96 + group_part.size());
  out += "node: ";
  quoted(out, s.place.node);
  out += "\nleafCellIsolation: ";
  int_list(out, s.place.leaf_indices);
  out += "\ncellChain: ";
  quoted(out, s.place.leaves.empty() ? std::string() : model.tree.chain_of(s.place.leaves.front()));
  out += "\n";
  out += group_part;
  return out;
}

std::string core_impl::bind_info_group_part(const group_entry& g) const {
  std::string out = "affinityGroupBindInfo:\n";
  std::size_t estimate = 32;
  for (const auto& other : g.slots) estimate += 128 + other.place.node.size() + 32 * other.place.leaf_indices.size();
  out.reserve(estimate);
  std::string types; // one slot's preassignedCellTypes list
  for (std::size_t m = 0; m < g.spec.members.size(); ++m) {
    out += "- podPlacements:\n";
    for (const auto& other : g.slots) {
      if (other.member != static_cast<int>(m)) continue;
      out += "  - physicalNode: ";
      quoted(out, other.place.node);
      out += "\n    physicalLeafCellIndices: ";
      int_list(out, other.place.leaf_indices);
      out += "\n    preassignedCellTypes: [";
      types.clear();
      quoted(types, other.vc_cell >= 0 ? state.vc_cells[other.vc_cell].qualified_type : std::string());
      for (std::size_t i = 0; i < other.place.leaf_indices.size(); ++i) {
        if (i) out += ", ";
        out += types;
      }
      out += "]\n";
    }
  }
  return out;
}

namespace {

// The ancestor of `leaf` (or itself) at `level`; no_cell when the chain is shorter.
cell_id ancestor_at(const cell_tree& tree, cell_id leaf, int level) {
  for (cell_id up = leaf; up != no_cell; up = tree.at(up).parent)
    if (tree.at(up).level == level) return up;
  return no_cell;
}

} // namespace

// The virtual cell of `g`'s VC that these recovered GPUs count against, binding one when
// needed; -1 when the VC's quota has no place for them any more.
static int map_to_vc(core_impl& d, const group_entry& g, const slot& s, const std::string& preassigned) {
  const auto& leaves = s.place.leaves;
  cluster_state& st = d.state;
  const int held = st.vc_cell_containing(leaves.front());
  if (held >= 0) {
    if (st.vc_cells[held].vc != g.vc) return -1;
    if (st.vc_cells[held].pinned != !g.spec.pinned_cell_id.empty()) return -1;
    for (cell_id leaf : leaves)
      if (st.vc_cell_containing(leaf) != held) return -1;
    return held;
  }
  int best = -1;
  cell_id best_cell = no_cell;
  for (int index : st.vc_cells_of[g.vc]) {
    const vc_cell& c = st.vc_cells[index];
    if (c.bound != no_cell || c.pinned || c.chain != d.model.tree.chain_of(leaves.front())) continue;
    const cell_id a = ancestor_at(d.model.tree, leaves.front(), c.level);
    if (a == no_cell || !st.bindings.is_free(a)) continue;
    bool all = true;
    for (cell_id leaf : leaves) all = all && ancestor_at(d.model.tree, leaf, c.level) == a;
    if (!all) continue;
    if (best < 0 || (c.qualified_type == preassigned && st.vc_cells[best].qualified_type != preassigned)) {
      best = index;
      best_cell = a;
    }
    // Nothing later can replace a cell of the preassigned type: a restart with 10,000 groups
    // scanned all 5,000 cells of a derived VC for each node's first pod (half of the recovery).
    if (st.vc_cells[best].qualified_type == preassigned) break;
  }
  if (best >= 0) st.bind(best, best_cell);
  return best;
}

namespace {

// A bind-info annotation, read.
struct bind_info_doc {
  struct placement {
    std::string node;
    std::vector<int> indices;
    std::string preassigned; // the first preassignedCellTypes entry ("" when none)
  };
  std::string node;
  std::vector<int> isolation;
  std::vector<std::vector<placement>> members;
};

// The exact layout core_impl::bind_info writes, read without a YAML parser: on a restart every
// bound pod's annotation is read, and yaml-cpp takes ~50 µs for one. Anything else (HiveD's
// own, edited by hand) is nullopt, for the YAML path below.
class layout_reader {
public:
  explicit layout_reader(std::string_view text) : rest_(text) {}

  std::optional<bind_info_doc> read() {
    bind_info_doc d;
    if (!quoted_field("node: ", d.node) || !int_field("leafCellIsolation: ", d.isolation)) return std::nullopt;
    std::string chain;
    if (!quoted_field("cellChain: ", chain) || !line_is("affinityGroupBindInfo:")) return std::nullopt;
    while (!rest_.empty()) {
      if (!line_is("- podPlacements:")) return std::nullopt;
      auto& member = d.members.emplace_back();
      while (starts("  - physicalNode: ")) {
        auto& p = member.emplace_back();
        std::vector<std::string> types;
        if (!quoted_field("  - physicalNode: ", p.node) || !int_field("    physicalLeafCellIndices: ", p.indices) ||
            !string_list_field("    preassignedCellTypes: ", types))
          return std::nullopt;
        if (!types.empty()) p.preassigned = types.front();
      }
    }
    return d;
  }

private:
  std::string_view rest_;

  bool starts(std::string_view prefix) const { return rest_.substr(0, prefix.size()) == prefix; }
  // The current line without `prefix`, consumed; nullopt when it does not start so.
  std::optional<std::string_view> take_line(std::string_view prefix) {
    if (!starts(prefix)) return std::nullopt;
    auto end = rest_.find('\n');
    if (end == std::string_view::npos) return std::nullopt;
    auto line = rest_.substr(prefix.size(), end - prefix.size());
    rest_.remove_prefix(end + 1);
    return line;
  }
  bool line_is(std::string_view whole) {
    auto line = take_line(whole);
    return line && line->empty();
  }
  // "text" with \" and \\ escapes, all of the view.
  static bool unquote(std::string_view v, std::string& out) {
    if (v.size() < 2 || v.front() != '"' || v.back() != '"') return false;
    out.clear();
    for (std::size_t i = 1; i + 1 < v.size(); ++i) {
      char c = v[i];
      if (c == '"') return false;
      if (c == '\\') {
        if (i + 2 >= v.size() || (v[i + 1] != '"' && v[i + 1] != '\\')) return false;
        c = v[++i];
      }
      out += c;
    }
    return true;
  }
  bool quoted_field(std::string_view prefix, std::string& out) {
    auto line = take_line(prefix);
    return line && unquote(*line, out);
  }
  // [a, b, c] with ", " between items (none when empty); `item` reads one.
  template <class F>
  static bool list(std::string_view v, F item) {
    if (v.size() < 2 || v.front() != '[' || v.back() != ']') return false;
    v = v.substr(1, v.size() - 2);
    while (!v.empty()) {
      auto comma = v.find(", ");
      if (!item(v.substr(0, comma))) return false;
      if (comma == std::string_view::npos) break;
      v.remove_prefix(comma + 2);
    }
    return true;
  }
  bool int_field(std::string_view prefix, std::vector<int>& out) {
    auto line = take_line(prefix);
    return line && list(*line, [&](std::string_view t) {
             int n = 0;
             auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
             if (ec != std::errc{} || p != t.data() + t.size()) return false;
             out.push_back(n);
             return true;
           });
  }
  bool string_list_field(std::string_view prefix, std::vector<std::string>& out) {
    auto line = take_line(prefix);
    return line && list(*line, [&](std::string_view t) {
             std::string s;
             if (!unquote(t, s)) return false;
             out.push_back(std::move(s));
             return true;
           });
  }
};

// Any bind-info YAML (HiveD's layout; preassignedCellTypes is Kozmo's and may be missing).
// Throws YAML::Exception.
bind_info_doc read_yaml_bind_info(const std::string& text) {
  const YAML::Node info = YAML::Load(text);
  bind_info_doc d;
  d.node = info["node"].as<std::string>();
  d.isolation = info["leafCellIsolation"].as<std::vector<int>>();
  const auto members = info["affinityGroupBindInfo"];
  for (std::size_t m = 0; m < members.size(); ++m) {
    auto& member = d.members.emplace_back();
    for (const auto& pp : members[m]["podPlacements"]) {
      auto& p = member.emplace_back();
      p.node = pp["physicalNode"].as<std::string>();
      p.indices = pp["physicalLeafCellIndices"].as<std::vector<int>>();
      const auto types = pp["preassignedCellTypes"];
      p.preassigned = types && types.size() > 0 ? types[0].as<std::string>() : "";
    }
  }
  return d;
}

} // namespace

void core_impl::recover_grown(group_entry& g, const pod_view& pod, const std::string& node,
                              const std::vector<int>& indices) {
  slot s;
  s.place.node = node;
  s.place.leaf_indices = indices;
  const auto on_node = model.tree.leaf_cells_of(node);
  for (int index : indices) {
    auto it = std::find_if(on_node.begin(), on_node.end(),
                           [&](cell_id id) { return model.tree.at(id).leaf_indices.front() == index; });
    if (it == on_node.end() || state.owner[*it] >= 0) return; // gone, or someone else's: not ours
    s.place.leaves.push_back(*it);
  }
  if (s.place.leaves.empty()) return;
  s.place.leaf_type = model.tree.at(s.place.leaves.front()).leaf_type;
  s.pod_uid = pod.ref.uid;
  for (cell_id leaf : s.place.leaves) state.set_owner(leaf, g.id);
  if (g.guaranteed() && !physical_mode() && g.vc >= 0) {
    s.vc_cell = map_to_vc(*this, g, s, "");
    if (s.vc_cell >= 0) {
      state.add_use(s.vc_cell, static_cast<int>(s.place.leaves.size()));
      count_quota(g, static_cast<int>(s.place.leaves.size()));
    }
  }
  g.slots.push_back(std::move(s));
}

status core_impl::recover(const pod_view& pod) {
  if (pod.bind_info.empty())
    return error::bad_request("pod has no " + std::string(bind_info_annotation) + " annotation");
  if (pods.count(pod.ref.uid)) return ok;
  try {
    auto fast = layout_reader(pod.bind_info).read();
    const bind_info_doc info = fast ? std::move(*fast) : read_yaml_bind_info(pod.bind_info);
    group_entry& g = add_group(pod);
    // The first recovered pod of a group rebuilds all of it (a waiting pod of the same group
    // may have been added before: the group then exists but holds nothing yet).
    if (g.state == group_state::pending && g.slots.empty()) {
      std::vector<slot> slots;
      std::vector<std::string> preassigned;
      std::string problem;
      for (std::size_t m = 0; m < info.members.size(); ++m)
        for (const auto& pp : info.members[m]) {
          slot s;
          s.member = static_cast<int>(m);
          s.place.node = pp.node;
          s.place.leaf_indices = pp.indices;
          preassigned.push_back(pp.preassigned);
          const auto on_node = model.tree.leaf_cells_of(s.place.node);
          for (int index : s.place.leaf_indices) {
            auto it = std::find_if(on_node.begin(), on_node.end(), [&](cell_id id) {
              return model.tree.at(id).leaf_indices.front() == index;
            });
            if (it == on_node.end()) {
              problem = "GPU " + std::to_string(index) + " of node '" + s.place.node +
                        "' is no longer in the configuration";
              s.place.leaves.clear();
              break;
            }
            if (state.owner[*it] >= 0) {
              if (g.pods.empty()) {
                by_id.erase(g.id);
                unqueue(g);
                groups.erase(g.name);
              }
              return error::conflict("GPU " + std::to_string(index) + " of node '" + s.place.node +
                                     "' is already used by another affinity group");
            }
            s.place.leaves.push_back(*it);
          }
          if (!s.place.leaves.empty()) s.place.leaf_type = model.tree.at(s.place.leaves.front()).leaf_type;
          slots.push_back(std::move(s));
        }
      for (const auto& s : slots)
        for (cell_id leaf : s.place.leaves) state.set_owner(leaf, g.id);
      g.slots = std::move(slots);
      set_state(g, group_state::allocated);
      if (g.spec.priority >= 0 && !physical_mode()) {
        if (g.vc < 0) problem = "virtual cluster '" + g.spec.virtual_cluster + "' no longer exists";
        for (std::size_t i = 0; i < g.slots.size() && problem.empty(); ++i) {
          slot& s = g.slots[i];
          if (s.place.leaves.empty()) continue;
          if (!g.spec.leaf_cell_type.empty() && s.place.leaf_type != g.spec.leaf_cell_type) {
            problem = "node '" + s.place.node + "' no longer has " + g.spec.leaf_cell_type + " GPUs there";
            break;
          }
          s.vc_cell = map_to_vc(*this, g, s, preassigned[i]);
          if (s.vc_cell < 0) {
            problem = "its GPUs on node '" + s.place.node + "' are outside virtual cluster '" +
                      g.spec.virtual_cluster + "''s quota";
            break;
          }
          state.add_use(s.vc_cell, static_cast<int>(s.place.leaves.size()));
        }
        count_quota(g, vc_leaves(g));
      }
      if (!problem.empty()) downgrade(g, "the configuration changed: " + problem, "", 0);
    }
    const auto& node = info.node;
    const auto& indices = info.isolation;
    bool matched = false;
    for (auto& s : g.slots)
      if (s.pod_uid.empty() && s.place.node == node && s.place.leaf_indices == indices) {
        s.pod_uid = pod.ref.uid;
        matched = true;
        break;
      }
    // An elastic gang's pod placed when it grew, after the pod that rebuilt the group: its
    // own place joins the group (note 10).
    if (!matched && g.elastic() && g.state == group_state::allocated) recover_grown(g, pod, node, indices);
    g.pods.insert(pod.ref.uid);
    pods[pod.ref.uid] = pod_entry{pod, g.name, true, true, {}};
  } catch (const YAML::Exception& e) {
    return error::bad_request(std::string("unreadable bind-info: ") + e.what());
  }
  return ok;
}

} // namespace kozmo::scheduler::detail
