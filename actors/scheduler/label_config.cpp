// config_from_labels (label_topology.hpp): a configuration with topologyFromLabels made into a
// whole HiveD configuration. yaml-cpp throws; everything is caught here.
#include "actors/scheduler/label_topology.hpp"

#include <yaml-cpp/yaml.h>

#include <set>
#include <sstream>

namespace kozmo::scheduler {
namespace {

// Every derived type below a top-level type, with its qualified names (one per chain holding it).
std::map<std::string, std::vector<std::string>> qualified_names(const physical_cluster_spec& spec) {
  std::set<std::string> tops;
  for (const auto& c : spec.physical_cells)
    tops.insert(c.cell_type);
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& top : tops) {
    std::string path = top;
    for (auto it = spec.cell_types.find(top); it != spec.cell_types.end();
         it = spec.cell_types.find(it->second.child_cell_type)) {
      const auto& child = it->second.child_cell_type;
      if (!spec.cell_types.count(child))
        break; // the GPU: a leaf type is asked for by the pod, not written as a quota
      path += "." + child;
      out[child].push_back(path);
    }
  }
  return out;
}

// Quotas naming the type of a level below the top, held by one chain only, written qualified.
void qualify_quotas(YAML::Node vcs, const physical_cluster_spec& spec) {
  if (!vcs.IsMap())
    return;
  std::set<std::string> tops;
  for (const auto& c : spec.physical_cells)
    tops.insert(c.cell_type);
  const auto qualified = qualified_names(spec);
  for (auto vc : vcs) {
    if (!vc.second.IsMap() || !vc.second["virtualCells"] || !vc.second["virtualCells"].IsSequence())
      continue;
    for (auto cell : vc.second["virtualCells"]) {
      if (!cell.IsMap() || !cell["cellType"] || !cell["cellType"].IsScalar())
        continue;
      const auto type = cell["cellType"].Scalar();
      auto q = qualified.find(type);
      if (type.find('.') != std::string::npos || tops.count(type) || q == qualified.end() || q->second.size() != 1)
        continue;
      cell["cellType"] = q->second.front();
    }
  }
}

std::string default_vc_yaml(const physical_cluster_spec& spec) {
  std::map<std::string, int> tops;
  for (const auto& c : spec.physical_cells)
    ++tops[c.cell_type];
  std::ostringstream out;
  out << "virtualClusters:\n  default:\n    virtualCells:\n";
  if (tops.empty())
    out << "    []\n";
  for (const auto& [type, count] : tops) {
    YAML::Emitter e;
    e << YAML::Flow << YAML::BeginMap << YAML::Key << "cellType" << YAML::Value << YAML::DoubleQuoted << type
      << YAML::Key << "cellNumber" << YAML::Value << count << YAML::EndMap;
    out << "    - " << e.c_str() << "\n";
  }
  return out.str();
}

} // namespace

expected<std::string> config_from_labels(std::string_view config_text, const std::vector<labelled_node>& nodes) {
  std::vector<topology_level> levels = default_levels();
  if (!config_text.empty()) {
    auto cfg = parse_config(config_text);
    if (!cfg)
      return cfg.err();
    if (!cfg->has_topology_from_labels)
      return error::invalid("scheduler config: no topologyFromLabels to derive the cells from");
    levels = cfg->topology_from_labels;
  }
  auto spec = cells_from_labels(nodes, levels);
  if (!spec)
    return spec.err();
  std::string out = "# Derived by Kozmo from the GPU nodes' labels (topologyFromLabels).\n" + physical_cluster_yaml(*spec);
  if (config_text.empty())
    return out + default_vc_yaml(*spec);
  try {
    YAML::Node root = YAML::Load(std::string(config_text));
    for (auto kv : root) {
      const auto key = kv.first.as<std::string>();
      if (key == "topologyFromLabels" || key == "physicalCluster")
        continue;
      YAML::Node value = YAML::Clone(kv.second);
      if (key == "virtualClusters")
        qualify_quotas(value, *spec);
      YAML::Emitter e;
      e << YAML::BeginMap << YAML::Key << key << YAML::Value << value << YAML::EndMap;
      out += std::string(e.c_str()) + "\n";
    }
  } catch (const YAML::Exception& e) {
    return error::invalid(std::string("scheduler config: malformed YAML: ") + e.what());
  }
  return out;
}

} // namespace kozmo::scheduler
