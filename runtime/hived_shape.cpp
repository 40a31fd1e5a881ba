#include "runtime/hived_shape.hpp"

#include "actors/scheduler/virtual_clusters.hpp"
#include "k8s/json/value.hpp"
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

// The cell types of one chain, from the leaf up to the node-level type; returns its name.
std::string add_chain(std::ostringstream& types, const std::string& leaf, const std::string& prefix, int gpus) {
  std::string child = leaf;
  int below = gpus;
  if (gpus >= 4 && gpus % 2 == 0) {
    types << "    " << prefix << "-SWITCH: {childCellType: \"" << child << "\", childCellNumber: 2}\n";
    child = prefix + "-SWITCH";
    below = gpus / 2;
    if (below >= 4 && below % 2 == 0) {
      types << "    " << prefix << "-SOCKET: {childCellType: " << child << ", childCellNumber: 2}\n";
      child = prefix + "-SOCKET";
      below /= 2;
    }
  }
  types << "    " << prefix << "-NODE: {childCellType: \"" << child << "\", childCellNumber: " << below
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
  for (const auto& [key, nodes] : chains) {
    const auto& [type, gpus] = key;
    std::string prefix = sizes_by_type[type].size() == 1 ? type : type + "-" + std::to_string(gpus) + "GPU";
    std::string node_type = add_chain(types, type, prefix, gpus);
    for (const auto& name : nodes)
      cells << "  - {cellType: " << node_type << ", cellAddress: \"" << name << "\"}\n";
    vcs << "    - {cellType: " << node_type << ", cellNumber: " << nodes.size() << "}\n";
  }
  std::ostringstream out;
  out << "# Derived by kozmo local from the simulated cluster's shape.\n"
         "physicalCluster:\n  cellTypes:\n"
      << (chains.empty() ? "    {}\n" : types.str()) << "  physicalCells:\n"
      << (chains.empty() ? "  []\n" : cells.str()) << "virtualClusters:\n  default:\n    virtualCells:\n"
      << (chains.empty() ? "    []\n" : vcs.str());
  return out.str();
}

kubelet::cluster_shape shape_from_nodes(const json::value& node_list) {
  kubelet::cluster_shape out;
  const json::value* items = node_list.find("items");
  if (!items || !items->is_array())
    return out;
  for (const auto& node : items->as_array()) {
    if (node.at_path({"metadata", "deletionTimestamp"}))
      continue;
    const json::value* gpu = node.at_path({"status", "allocatable", "nvidia.com/gpu"});
    if (!gpu)
      continue;
    long count = gpu->is_string() ? std::strtol(gpu->as_string().c_str(), nullptr, 10)
                                  : (gpu->is_int() ? static_cast<long>(gpu->as_int()) : 0);
    if (count <= 0)
      continue;
    kubelet::node_shape n;
    n.name = node.at_path({"metadata", "name"}) ? node.at_path({"metadata", "name"})->as_string() : "";
    if (n.name.empty())
      continue;
    n.gpus = static_cast<int>(count);
    n.gpu_type = "gpu";
    if (const json::value* labels = node.at_path({"metadata", "labels"}); labels && labels->is_object()) {
      if (auto t = labels->get_string(keys::gpu_type); !t.empty())
        n.gpu_type = t;
      else if (auto p = labels->get_string("nvidia.com/gpu.product"); !p.empty())
        n.gpu_type = p;
    }
    out.nodes.push_back(std::move(n));
  }
  std::sort(out.nodes.begin(), out.nodes.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

} // namespace kozmo::runtime
