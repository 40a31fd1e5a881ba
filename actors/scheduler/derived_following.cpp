#include "actors/scheduler/derived_following.hpp"

#include <memory>
#include <utility>

namespace kozmo::scheduler {

bool derived_following::node_event(watch::event_type type, const node_ptr& node) {
  auto& known = nodes_[node->metadata.name];
  std::string before = known ? signature_(*known) : std::string();
  std::string signature = type == watch::event_type::deleted ? std::string() : signature_(*node);
  if (type == watch::event_type::deleted)
    nodes_.erase(node->metadata.name);
  else
    known = node;
  return signature != before;
}

derived_following::derivation derived_following::derive(const std::map<std::string, node_ptr>& nodes) const {
  derivation d;
  std::vector<k8s::node> list;
  list.reserve(nodes.size());
  for (const auto& [name, n] : nodes) {
    list.push_back(*n);
    d.gpu_nodes += !signature_(*n).empty();
  }
  d.yaml = derive_(list);
  return d;
}

std::vector<pod_ptr> derived_following::carried_over(const std::function<bool(const std::string& uid)>& held) const {
  std::vector<pod_ptr> pods;
  for (const auto& [uid, p] : pods_) {
    if (!held(uid))
      continue;
    auto b = binding_.find(uid);
    if (b == binding_.end() || !p->spec.node_name.empty()) {
      pods.push_back(p);
      continue;
    }
    auto bound = std::make_shared<k8s::pod>(*p); // as it will be once the binding is written
    bound->spec.node_name = b->second.node;
    for (const auto& [k, v] : b->second.annotations)
      bound->metadata.annotations[k] = v;
    pods.push_back(std::move(bound));
  }
  oldest_first(pods);
  return pods;
}

} // namespace kozmo::scheduler
