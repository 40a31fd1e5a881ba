// GPUs that other schedulers' pods hold, pod by pod, and what a change of one means for its
// node's count (scheduler_core note 8: the core keeps each node's sum). Pure.
//
// A pod holds what the kubelet admitted it with (gpus_held) while it is bound and has not
// finished; a deleted or finished pod holds nothing. The answers are changes of a node's count,
// (node, delta), for the caller to add to scheduler_core::other_pods_gpus.
#pragma once

#include "k8s/model/pod.hpp"
#include "messages/watch_types.hpp"

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kozmo::scheduler {

class other_pods {
public:
  using change = std::pair<std::string, int>; // node, GPUs more (or fewer) held there

  explicit other_pods(std::string gpu_resource) : gpu_resource_(std::move(gpu_resource)) {}

  // One pod's event: none when what it holds is unchanged; else giving back what it held
  // before, then taking what it holds now.
  std::vector<change> apply(watch::event_type type, const k8s::pod& p);

  // The pods as listed at start, counted node by node: one change per node (20,000 pods on
  // 5,000 nodes were 20,000 changes, each re-evaluating the node's cells: most of the time
  // between the last LIST and /readyz). A pod seen before is a change of its own, first.
  std::vector<change> count_listed(const std::vector<std::shared_ptr<const k8s::pod>>& pods);

  // By uid: (node, GPUs) of every pod that holds some.
  const std::unordered_map<std::string, change>& held() const { return held_; }

private:
  int holds(watch::event_type type, const k8s::pod& p) const;

  std::string gpu_resource_;
  std::unordered_map<std::string, change> held_;
};

} // namespace kozmo::scheduler
