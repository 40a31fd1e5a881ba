#include "actors/scheduler/other_pods.hpp"

#include "actors/scheduler/pod_intake.hpp"

namespace kozmo::scheduler {

int other_pods::holds(watch::event_type type, const k8s::pod& p) const {
  const bool holding = type != watch::event_type::deleted && !finished(p) && !p.spec.node_name.empty();
  return holding ? gpus_held(p, gpu_resource_) : 0;
}

std::vector<other_pods::change> other_pods::apply(watch::event_type type, const k8s::pod& p) {
  std::vector<change> changes;
  const int gpus = holds(type, p);
  auto it = held_.find(p.metadata.uid);
  if (it != held_.end() && it->second == std::make_pair(p.spec.node_name, gpus))
    return changes;
  if (it != held_.end()) {
    auto [node, gpus_before] = std::move(it->second);
    held_.erase(it);
    changes.emplace_back(std::move(node), -gpus_before);
  }
  if (gpus > 0) {
    held_.emplace(p.metadata.uid, std::make_pair(p.spec.node_name, gpus));
    changes.emplace_back(p.spec.node_name, gpus);
  }
  return changes;
}

std::vector<other_pods::change> other_pods::count_listed(const std::vector<std::shared_ptr<const k8s::pod>>& pods) {
  std::vector<change> changes;
  std::unordered_map<std::string, int> by_node;
  for (const auto& pod : pods) {
    const auto& p = *pod;
    if (held_.count(p.metadata.uid)) { // seen before (not at start): a change, not a count
      for (auto& c : apply(watch::event_type::added, p))
        changes.push_back(std::move(c));
      continue;
    }
    const int gpus = holds(watch::event_type::added, p);
    if (gpus <= 0)
      continue;
    held_.emplace(p.metadata.uid, std::make_pair(p.spec.node_name, gpus));
    by_node[p.spec.node_name] += gpus;
  }
  for (auto& [node, gpus] : by_node)
    changes.emplace_back(node, gpus);
  return changes;
}

} // namespace kozmo::scheduler
