// Simulated nodes between the public face (kozmo::simulated_node) and the kubelets' shape
// (kubelet::cluster_shape, which adds each node's addresses).
#include "runtime/engine_internal.hpp"

namespace kozmo {

std::vector<simulated_node> uniform_nodes(int count, int gpus, const std::string& prefix) {
  return simulated_nodes(kubelet::uniform_cluster(count, gpus, prefix));
}

std::vector<simulated_node> simulated_nodes(const kubelet::cluster_shape& shape) {
  std::vector<simulated_node> out;
  for (const auto& n : shape.nodes)
    out.push_back({n.name, n.gpus, n.gpu_type, n.cpu, n.memory, n.ephemeral_storage, n.pods, n.labels});
  return out;
}

kubelet::cluster_shape cluster_shape_of(const std::vector<simulated_node>& nodes) {
  std::vector<kubelet::node_shape> shapes;
  for (const auto& n : nodes) {
    kubelet::node_shape s;
    s.name = n.name;
    s.gpus = n.gpus;
    s.gpu_type = n.gpu_type;
    s.cpu = n.cpu;
    s.memory = n.memory;
    s.ephemeral_storage = n.ephemeral_storage;
    s.pods = n.pods;
    s.labels = n.labels;
    shapes.push_back(std::move(s));
  }
  return kubelet::shape_of(std::move(shapes)); // the addresses, as the CLI's shapes have them
}

} // namespace kozmo
