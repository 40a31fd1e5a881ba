#include "runtime/hived_shape.hpp"

#include "actors/scheduler/virtual_clusters.hpp"

#include <algorithm>

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
      shape.labels["kozmo.io/gpus." + type] = std::to_string(count);
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
