// Following a configuration derived from the cluster's GPU nodes (scheduler_actor_config's
// `derived`): what the scheduler actor keeps to derive it again and to rebuild its core on it.
// Pure.
//
// It holds every node (by name), our pods the core may hold (bound or waiting), and the binds
// sent but not yet seen bound. It says when a node's event changes the node's GPU signature
// (the configuration may differ: derive it again), derives the configuration's text from
// nodes, and lists the pods a new core takes over: those the old one held, a bind still being
// written as it will be once written, oldest first.
#pragma once

#include "actors/scheduler/scheduler_core.hpp"
#include "actors/scheduler/startup.hpp"
#include "messages/watch_types.hpp"

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace kozmo::scheduler {

class derived_following {
public:
  using signature_fn = std::function<std::string(const k8s::node&)>;       // "" = no GPUs to offer
  using derive_fn = std::function<std::string(const std::vector<k8s::node>&)>; // HiveD's YAML

  derived_following(signature_fn signature, derive_fn derive)
      : signature_(std::move(signature)), derive_(std::move(derive)) {}

  // A node's event; true when its GPU signature changed (a GPU node joined or left, or its GPUs
  // changed), false for a heartbeat.
  bool node_event(watch::event_type type, const node_ptr& node);
  const std::map<std::string, node_ptr>& nodes() const { return nodes_; }

  void pod_seen(const pod_ptr& pod) { pods_[pod->metadata.uid] = pod; } // one of ours, as it is now
  void pod_gone(const std::string& uid) { pods_.erase(uid); }            // deleted or finished
  void bind_sent(const pod_decision& bind) { binding_[bind.pod.uid] = bind; }
  void bind_over(const std::string& uid) { binding_.erase(uid); }        // seen bound, or out of the core

  struct derivation {
    std::string yaml;
    std::size_t gpu_nodes = 0; // nodes with a signature
  };
  derivation derive(const std::map<std::string, node_ptr>& nodes) const;

  // The pods a new core takes over: those `held` says the old core held (the ones it refused
  // were told why already and stay out), oldest first.
  std::vector<pod_ptr> carried_over(const std::function<bool(const std::string& uid)>& held) const;

private:
  signature_fn signature_;
  derive_fn derive_;
  std::map<std::string, node_ptr> nodes_;
  std::unordered_map<std::string, pod_ptr> pods_; // by uid
  std::map<std::string, pod_decision> binding_;   // by uid
};

} // namespace kozmo::scheduler
