#include "runtime/hived_shape.hpp"

#include "actors/scheduler/virtual_clusters.hpp"
#include "k8s/json/value.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/kozmo_keys.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

namespace kozmo::runtime {

bool is_hived_config(const std::string& yaml_text) {
  // A top-level key, not a substring of some value.
  return yaml_text.rfind("physicalCluster:", 0) == 0 || yaml_text.find("\nphysicalCluster:") != std::string::npos;
}

expected<kubelet::cluster_shape> shape_from_hived_config(const std::string& yaml_text) {
  auto model = scheduler::load_cluster_model(yaml_text);
  if (!model)
    return error::bad_request("--cluster: invalid HiveD configuration: " + model.err().message);
  std::vector<kubelet::node_shape> nodes;
  for (const auto& n : model->tree.nodes()) {
    kubelet::node_shape shape;
    shape.name = n.node;
    shape.gpus = 0;
    int most = -1;
    for (const auto& [type, count] : n.leaves_by_type) {
      shape.gpus += count;
      shape.labels[keys::gpus_of_type_prefix + type] = std::to_string(count);
      if (count > most) {
        most = count;
        shape.gpu_type = type;
      }
    }
    nodes.push_back(std::move(shape));
  }
  return kubelet::shape_of(std::move(nodes));
}

} // namespace kozmo::runtime

namespace kozmo::runtime {
namespace {

// A name (GPU type, node) as a YAML double-quoted scalar: JSON's escapes are YAML's, and a
// cluster file's gpuType or name may hold any character.
std::string quoted(std::string_view name) {
  std::string out;
  json::write_string(out, name);
  return out;
}

// The cell types of one chain, from the leaf up to the node-level type; returns its name.
std::string add_chain(std::ostringstream& types, const std::string& leaf, const std::string& prefix, int gpus) {
  std::string child = leaf;
  int below = gpus;
  if (gpus >= 4 && gpus % 2 == 0) {
    types << "    " << quoted(prefix + "-SWITCH") << ": {childCellType: " << quoted(child) << ", childCellNumber: 2}\n";
    child = prefix + "-SWITCH";
    below = gpus / 2;
    if (below >= 4 && below % 2 == 0) {
      types << "    " << quoted(prefix + "-SOCKET") << ": {childCellType: " << quoted(child) << ", childCellNumber: 2}\n";
      child = prefix + "-SOCKET";
      below /= 2;
    }
  }
  types << "    " << quoted(prefix + "-NODE") << ": {childCellType: " << quoted(child) << ", childCellNumber: " << below
        << ", isNodeLevel: true}\n";
  return prefix + "-NODE";
}

} // namespace

std::string hived_config_from_shape(const kubelet::cluster_shape& shape) {
  // (type, gpus) -> node names, in the shape's order.
  std::map<std::pair<std::string, int>, std::vector<std::string>> chains;
  std::map<std::string, std::set<int>> sizes_by_type;
  for (const auto& n : shape.nodes) {
    if (n.gpus <= 0)
      continue;
    chains[{n.gpu_type, n.gpus}].push_back(n.name);
    sizes_by_type[n.gpu_type].insert(n.gpus);
  }
  std::ostringstream types, cells, vcs;
  std::set<std::string> prefixes;
  for (const auto& [key, nodes] : chains) {
    const auto& [type, gpus] = key;
    std::string prefix = sizes_by_type[type].size() == 1 ? type : type + "-" + std::to_string(gpus) + "GPU";
    // '.' separates the parts of a virtual cell's qualified type ("A100.8GB-NODE" would read as
    // cell type "8GB-NODE" under "A100"): not in a name of ours, which stays unique.
    std::replace(prefix.begin(), prefix.end(), '.', '_');
    while (!prefixes.insert(prefix).second)
      prefix += '_';
    std::string node_type = add_chain(types, type, prefix, gpus);
    for (const auto& name : nodes)
      cells << "  - {cellType: " << quoted(node_type) << ", cellAddress: " << quoted(name) << "}\n";
    vcs << "    - {cellType: " << quoted(node_type) << ", cellNumber: " << nodes.size() << "}\n";
  }
  std::ostringstream out;
  out << "# Derived by kozmo local from the simulated cluster's shape.\n"
         "physicalCluster:\n  cellTypes:\n"
      << (chains.empty() ? "    {}\n" : types.str()) << "  physicalCells:\n"
      << (chains.empty() ? "  []\n" : cells.str()) << "virtualClusters:\n  default:\n    virtualCells:\n"
      << (chains.empty() ? "    []\n" : vcs.str());
  return out.str();
}

std::optional<kubelet::node_shape> gpu_shape_of(const k8s::node& node) {
  if (node.metadata.deletion_timestamp || node.metadata.name.empty())
    return std::nullopt;
  auto gpu = node.status.allocatable.find("nvidia.com/gpu");
  if (gpu == node.status.allocatable.end() || gpu->second.value() <= 0)
    return std::nullopt;
  kubelet::node_shape n;
  n.name = node.metadata.name;
  n.gpus = static_cast<int>(gpu->second.value());
  n.gpu_type = "gpu";
  const auto& labels = node.metadata.labels;
  if (auto t = labels.find(keys::gpu_type); t != labels.end() && !t->second.empty())
    n.gpu_type = t->second;
  else if (auto p = labels.find("nvidia.com/gpu.product"); p != labels.end() && !p->second.empty())
    n.gpu_type = p->second;
  return n;
}

kubelet::cluster_shape shape_from_nodes(const std::vector<k8s::node>& nodes) {
  kubelet::cluster_shape out;
  for (const auto& node : nodes)
    if (auto n = gpu_shape_of(node))
      out.nodes.push_back(std::move(*n));
  std::sort(out.nodes.begin(), out.nodes.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

std::vector<k8s::node> nodes_of(const json::value& node_list) {
  std::vector<k8s::node> nodes;
  if (const json::value* items = node_list.find("items"); items && items->is_array())
    for (const auto& item : items->as_array())
      if (auto n = k8s::from_json<k8s::node>(item))
        nodes.push_back(std::move(*n));
  return nodes;
}

kubelet::cluster_shape shape_from_nodes(const json::value& node_list) { return shape_from_nodes(nodes_of(node_list)); }

std::vector<scheduler::labelled_node> labelled_nodes(const std::vector<k8s::node>& nodes) {
  std::vector<scheduler::labelled_node> out;
  for (const auto& node : nodes)
    if (auto n = gpu_shape_of(node))
      out.push_back({n->name, n->gpus, n->gpu_type, node.metadata.labels});
  return out;
}

namespace {

bool labelled(const std::map<std::string, std::string>& labels, const std::vector<scheduler::topology_level>& levels) {
  for (const auto& l : levels)
    if (auto it = labels.find(l.label); !l.label.empty() && it != labels.end() && scheduler::valid_label_value(it->second))
      return true;
  return false;
}

} // namespace

bool carries_topology_labels(const std::vector<k8s::node>& nodes, const std::vector<scheduler::topology_level>& levels) {
  return std::any_of(nodes.begin(), nodes.end(),
                     [&](const k8s::node& n) { return gpu_shape_of(n) && labelled(n.metadata.labels, levels); });
}

bool carries_topology_labels(const kubelet::cluster_shape& shape, const std::vector<scheduler::topology_level>& levels) {
  return std::any_of(shape.nodes.begin(), shape.nodes.end(),
                     [&](const kubelet::node_shape& n) { return n.gpus > 0 && labelled(n.labels, levels); });
}

std::string topology_signature(const k8s::node& node, const std::vector<scheduler::topology_level>& levels) {
  auto shape = gpu_shape_of(node);
  if (!shape)
    return "";
  std::string out = shape->gpu_type + "/" + std::to_string(shape->gpus);
  for (const auto& l : levels) {
    if (l.label.empty())
      continue;
    auto it = node.metadata.labels.find(l.label);
    out += "|" + (it == node.metadata.labels.end() ? std::string("-") : "=" + it->second);
  }
  return out;
}

std::string derived_config_of(const std::vector<k8s::node>& nodes) {
  const auto levels = scheduler::default_levels();
  if (!carries_topology_labels(nodes, levels))
    return hived_config_from_shape(shape_from_nodes(nodes));
  auto text = scheduler::config_from_labels("", labelled_nodes(nodes));
  return text ? *text : hived_config_from_shape(shape_from_nodes(nodes)); // the default levels always check
}

} // namespace kozmo::runtime
