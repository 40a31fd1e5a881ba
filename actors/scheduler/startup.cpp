#include "actors/scheduler/startup.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace kozmo::scheduler {

startup::startup(startup_options opts) : opts_(std::move(opts)), others_listed_(!opts_.other_pods_watch) {}

bool startup::pod_event(watch::event_type type, const pod_ptr& pod) {
  const auto& p = *pod;
  if (phase_ == phase::ready)
    return true;
  if (phase_ == phase::recovered && ours(p) && (type == watch::event_type::deleted || !p.spec.node_name.empty())) {
    pods_.erase(p.metadata.uid);
    return true;
  }
  if (type == watch::event_type::deleted)
    pods_.erase(p.metadata.uid);
  else
    pods_[p.metadata.uid] = pod;
  return false;
}

bool startup::node_event(watch::event_type type, const node_ptr& node) {
  if (phase_ == phase::ready)
    return true;
  if (type == watch::event_type::deleted)
    nodes_.erase(node->metadata.name);
  else
    nodes_[node->metadata.name] = node;
  return false;
}

startup_step startup::listed(listed_watch which) {
  startup_step step;
  if (phase_ == phase::ready)
    return step;
  // A derived configuration is made as soon as the nodes are listed, while the (larger) pods
  // LISTs are still on their way.
  if (which == listed_watch::nodes && opts_.derived)
    step.derive_from = nodes_;
  if (which == listed_watch::other_pods)
    others_listed_ = true;
  else if (--unlisted_ == 0)
    recover(step);
  if (phase_ == phase::recovered && others_listed_)
    become_ready(step);
  return step;
}

void startup::take_nodes(startup_step& step) {
  for (auto& [name, n] : nodes_)
    step.nodes.push_back(std::move(n));
  nodes_.clear();
}

// Our bound pods are recovered from their bind-info as soon as the nodes and our pods have
// listed: with a watch of other schedulers' pods of its own, this runs while that (larger) LIST
// is still on its way, and their GPUs are counted afterwards, on what our pods leave free.
void startup::recover(startup_step& step) {
  take_nodes(step);
  std::vector<pod_ptr> bound;
  for (auto it = pods_.begin(); it != pods_.end();) {
    if (ours(*it->second) && !it->second->spec.node_name.empty()) {
      bound.push_back(std::move(it->second));
      it = pods_.erase(it);
    } else {
      ++it;
    }
  }
  oldest_first(bound);
  step.bound = std::move(bound);
  step.recovered = true;
  phase_ = phase::recovered;
}

// Every watch has listed: the nodes that changed since recovery, then ours (bound ones, oldest
// first), then what other schedulers' pods hold, on what ours leave free; then our waiting pods.
void startup::become_ready(startup_step& step) {
  take_nodes(step);
  std::vector<pod_ptr> ours_held;
  for (auto& [uid, p] : pods_)
    (ours(*p) ? ours_held : step.others).push_back(std::move(p));
  pods_.clear();
  oldest_first(ours_held);
  for (auto& p : ours_held)
    (p->spec.node_name.empty() ? step.waiting : step.bound).push_back(std::move(p));
  step.ready = true;
  phase_ = phase::ready;
}

void oldest_first(std::vector<pod_ptr>& pods) {
  std::sort(pods.begin(), pods.end(), [](const pod_ptr& a, const pod_ptr& b) {
    const auto& x = a->metadata;
    const auto& y = b->metadata;
    return std::tie(x.creation_timestamp, x.namespace_, x.name) < std::tie(y.creation_timestamp, y.namespace_, y.name);
  });
}

} // namespace kozmo::scheduler
