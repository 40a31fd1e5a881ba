#include "actors/scheduler/virtual_clusters.hpp"

#include <algorithm>
#include <cstdint>
#include <map>

namespace kozmo::scheduler {
namespace {

std::vector<std::string> split_dots(const std::string& s) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (auto dot = s.find('.'); dot != std::string::npos; dot = s.find('.', start)) {
    parts.push_back(s.substr(start, dot - start));
    start = dot + 1;
  }
  parts.push_back(s.substr(start));
  return parts;
}

expected<vc_cell_quota> resolve_cell(const std::string& vc, const virtual_cell_spec& spec,
                                     const cell_tree& tree, const std::vector<std::string>& chains) {
  const auto prefix = "virtual cluster '" + vc + "': cell type '" + spec.cell_type + "'";
  if (spec.cell_number < 0)
    return error::invalid(prefix + ": cellNumber must not be negative, got " +
                          std::to_string(spec.cell_number));
  const auto parts = split_dots(spec.cell_type);
  if (std::find(chains.begin(), chains.end(), parts[0]) == chains.end())
    return error::invalid(prefix + " is unknown: '" + parts[0] +
                          "' is not the cell type of any top-level physical cell");
  auto info = tree.type_info(parts[0]);
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (info->is_leaf || info->child_type != parts[i])
      return error::invalid(prefix + " is unknown: '" + parts[i] + "' is not the child type of '" +
                            parts[i - 1] + "'");
    info = tree.type_info(parts[i]);
  }
  return vc_cell_quota{spec.cell_type, parts[0], info->name, info->level, spec.cell_number};
}

bool inside_pinned(const cell_tree& tree, cell_id id) {
  for (auto up = tree.at(id).parent; up != no_cell; up = tree.at(up).parent)
    if (!tree.at(up).pinned_id.empty()) return true;
  return false;
}

// Requests of one cell type in one chain: how many, and by whom (for the message).
struct demand {
  std::int64_t total = 0;
  std::string by;
};

status check_chain_fits(const cell_tree& tree, const std::string& chain,
                        const std::map<int, demand>& wanted) {
  // Cells per level in this chain that hold no pinned cell but whose parent does: they are
  // free whole cells that a split of the parent does not produce.
  std::map<int, std::int64_t> loose;
  std::int64_t whole_tops = 0;
  std::string top_type;
  for (cell_id id = 0; id < tree.size(); ++id) {
    const auto& c = tree.at(id);
    if (c.chain != chain || c.holds_pinned || inside_pinned(tree, id)) continue;
    if (c.parent == no_cell) {
      ++whole_tops;
      top_type = c.type;
    } else if (tree.at(c.parent).holds_pinned) {
      ++loose[c.level];
    }
  }
  auto info = tree.type_info(chain);
  std::int64_t free_cells = whole_tops;
  for (int level = info->level; level >= 1;) {
    auto w = wanted.find(level);
    const std::int64_t need = w == wanted.end() ? 0 : w->second.total;
    if (need > free_cells)
      return error::invalid("virtual clusters do not fit the physical cluster: chain '" + chain +
                            "' has " + std::to_string(free_cells) + " free cells of type '" +
                            info->name + "' but " + w->second.by + " ask for " +
                            std::to_string(need));
    if (info->is_leaf) break;
    // Cap the count so a deep chain cannot overflow; no VC asks for more than INT32_MAX.
    free_cells = std::min<std::int64_t>((free_cells - need) * info->child_number, INT32_MAX);
    info = tree.type_info(info->child_type);
    level = info->level;
    free_cells += loose[level];
  }
  return ok;
}

} // namespace

expected<std::vector<virtual_cluster>> resolve_virtual_clusters(const config& cfg,
                                                                const cell_tree& tree) {
  const auto chains = tree.chains();
  std::vector<virtual_cluster> vcs;
  std::map<std::string, std::string> pinned_owner; // pinnedCellId -> VC
  std::map<std::string, std::map<int, demand>> wanted; // chain -> level -> demand
  for (const auto& [name, spec] : cfg.virtual_clusters) {
    virtual_cluster vc{name, {}, {}, {}};
    for (const auto& cell_spec : spec.virtual_cells) {
      auto quota = resolve_cell(name, cell_spec, tree, chains);
      if (!quota) return quota.err();
      auto& d = wanted[quota->chain][quota->level];
      d.total += quota->count;
      d.by += (d.by.empty() ? "" : ", ") + name + " (" + std::to_string(quota->count) + ")";
      vc.cells.push_back(std::move(*quota));
    }
    for (const auto& pid : spec.pinned_cells) {
      auto cell = tree.find_pinned(pid);
      if (!cell)
        return error::invalid("virtual cluster '" + name + "': pinnedCellId '" + pid +
                              "' is not the pinnedCellId of any physical cell");
      auto [owner, fresh] = pinned_owner.emplace(pid, name);
      if (!fresh)
        return error::invalid("pinnedCellId '" + pid + "' is used by virtual cluster '" +
                              owner->second + "' and by '" + name + "'");
      vc.pinned_cells.push_back(*cell);
      vc.pinned_ids.push_back(pid);
    }
    vcs.push_back(std::move(vc));
  }
  auto names_quota = [](const virtual_cluster& vc, const std::string& type) {
    return std::any_of(vc.cells.begin(), vc.cells.end(), [&](const vc_cell_quota& q) {
      return q.cell_type == type || q.qualified_type == type;
    });
  };
  // Kept by plain type (the last step of a qualified name), as the core counts loans.
  auto plain = [](const std::string& type) { return type.substr(type.rfind('.') + 1); };
  for (auto& vc : vcs) {
    const auto& spec = cfg.virtual_clusters.at(vc.name);
    for (const auto& [type, count] : spec.lending_limit) {
      if (!names_quota(vc, type))
        return error::invalid("virtual cluster '" + vc.name + "': lendingLimit names cell type '" + type +
                              "', which is not one of its virtualCells");
      vc.lending_limit[plain(type)] = count;
    }
    for (const auto& limit : spec.borrowing_limit) {
      const std::string& type = limit.first; // named apart: clang 14 cannot capture a structured binding
      const int count = limit.second;
      if (std::none_of(vcs.begin(), vcs.end(), [&](const virtual_cluster& other) { return names_quota(other, type); }))
        return error::invalid("virtual cluster '" + vc.name + "': borrowingLimit names cell type '" + type +
                              "', which no virtual cluster's virtualCells has");
      vc.borrowing_limit[plain(type)] = count;
    }
  }
  for (const auto& [chain, levels] : wanted)
    if (auto st = check_chain_fits(tree, chain, levels); !st) return st.err();
  return vcs;
}

expected<cluster_model> load_cluster_model(std::string_view yaml_text) {
  auto cfg = parse_config(yaml_text);
  if (!cfg) return cfg.err();
  auto tree = cell_tree::build(cfg->physical_cluster);
  if (!tree) return tree.err();
  auto vcs = resolve_virtual_clusters(*cfg, *tree);
  if (!vcs) return vcs.err();
  return cluster_model{std::move(*cfg), std::move(*tree), std::move(*vcs)};
}

} // namespace kozmo::scheduler
