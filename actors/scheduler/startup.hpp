// The scheduler actor's start-up and recovery, as a pure state machine (no CAF, no I/O): it
// holds the watch events that arrive before the scheduler may act on them, and says what the
// actor must do as each watch reports that it has listed.
//
//        nodes and our pods listed                  other schedulers' pods listed
//   listing ─────────────────────────▶ recovered ─────────────────────────────▶ ready
//   (every event held)                 (our bound pods pass; the rest held)     (every event passes)
//
// Rules:
//  1. Until ready, a node's event is held: the latest state per node, a deletion forgets it.
//  2. Until recovered, a pod's event is held the same way, by uid.
//  3. Recovered, not ready: an event of one of our pods that is bound or deleted passes (the
//     core holds our bound pods now and must see them change); waiting pods and other
//     schedulers' pods are held.
//  4. Ready: every event passes. pod_event / node_event return true when the event passes (the
//     actor applies it at once), false when it is held.
//  5. listed() is called once per watch. Its answer, a startup_step, lists what the actor does,
//     in its fields' order: derive the configuration, apply the nodes, recover our bound pods
//     (oldest first, so that after a change that shrank a VC the groups there first keep its
//     quota), count other schedulers' pods, become ready, admit our waiting pods (oldest first).
//  6. Without a watch of its own for other schedulers' pods, they come with our pods (or are not
//     counted): recovery and readiness then come in the same step.
#pragma once

#include "k8s/model/node.hpp"
#include "k8s/model/pod.hpp"
#include "messages/watch_types.hpp"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kozmo::scheduler {

using pod_ptr = std::shared_ptr<const k8s::pod>;
using node_ptr = std::shared_ptr<const k8s::node>;

enum class listed_watch {
  nodes,
  pods,       // our pods (every pod when other schedulers' pods have no watch of their own)
  other_pods, // other schedulers' bound pods, when they have a watch of their own
};

struct startup_options {
  std::string scheduler_name = "kozmo"; // pods with this spec.schedulerName are ours
  bool other_pods_watch = false;        // other schedulers' pods list on a watch of their own
  bool derived = false;                 // the configuration is derived from the nodes (derived_config)
};

// What the actor does after a watch listed, field by field in this order; any part may be empty.
struct startup_step {
  // The nodes have just listed and the configuration follows them: derive it from these (by
  // name) before anything is placed. The nodes themselves stay held until recovery.
  std::optional<std::map<std::string, node_ptr>> derive_from;
  std::vector<node_ptr> nodes;   // nodes listed, or changed since recovery: apply as added
  std::vector<pod_ptr> bound;    // our bound pods, oldest first: apply (recovered from bind-info)
  bool recovered = false;        // our bound pods are in the core now
  std::vector<pod_ptr> others;   // other schedulers' pods as listed: count what they hold
  bool ready = false;            // from here on the actor places pods and answers inspect
  std::vector<pod_ptr> waiting;  // our pods not bound, oldest first: apply once ready
};

class startup {
public:
  enum class phase { listing, recovered, ready };

  explicit startup(startup_options opts);

  bool pod_event(watch::event_type type, const pod_ptr& pod);
  bool node_event(watch::event_type type, const node_ptr& node);
  startup_step listed(listed_watch which);

  phase now() const { return phase_; }
  bool ready() const { return phase_ == phase::ready; }

private:
  void recover(startup_step& step);
  void become_ready(startup_step& step);
  void take_nodes(startup_step& step);
  bool ours(const k8s::pod& p) const { return p.spec.scheduler_name == opts_.scheduler_name; }

  startup_options opts_;
  phase phase_ = phase::listing;
  int unlisted_ = 2;           // the nodes watch and our pods watch, not yet listed
  bool others_listed_ = true;  // false while a watch of other schedulers' pods has not listed
  std::unordered_map<std::string, pod_ptr> pods_; // held, by uid
  std::map<std::string, node_ptr> nodes_;         // held, by name
};

// Oldest first (creation time, then namespace and name), whatever order a LIST had.
void oldest_first(std::vector<pod_ptr>& pods);

} // namespace kozmo::scheduler
