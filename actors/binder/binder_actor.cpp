#include "actors/binder/binder_actor.hpp"

#include "actors/binder/first_fit.hpp"
#include "actors/kubelet/admission.hpp"
#include "actors/watch/object_traits.hpp"
#include "actors/controller/event_recorder_actor.hpp"
#include "actors/controller/watch_into.hpp"
#include "k8s/model/pod_patches.hpp"
#include "messages/atoms.hpp"
#include "messages/watch_messages.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <spdlog/spdlog.h>

#include <map>
#include <set>

namespace kozmo::binder {
namespace {

using pod_ptr = std::shared_ptr<const k8s::pod>;
using node_ptr = std::shared_ptr<const k8s::node>;

// A pod waiting for a node, with what it asks for worked out once (not per pass).
struct waiting_pod {
  pod_ptr pod;
  pod_need need;
};

// Resources a pod holds (or will hold, once its bind is seen) on a node.
struct placement {
  std::string node;
  pod_need need;
};

struct binder_state {
  static inline const char* name = "binder";
  std::shared_ptr<client::client> cli;
  caf::actor recorder;
  std::map<std::string, node_ptr> nodes;       // by name
  std::map<std::string, waiting_pod> pending;  // by uid: ours, unbound, not deleting
  std::set<std::string> unplaced;              // uids of pending pods with no bind in flight
  std::map<std::string, placement> bound;      // by uid: holding resources on a node
  std::map<std::string, placement> assumed;    // by uid: bind sent, not yet seen
  std::map<std::string, std::string> last_refusal; // uid → message already reported
  // What every node has left: allocatable minus bound and assumed pods. Kept up to date as
  // pods come and go, so that a pass costs O(pods waiting × nodes), not O(pods × all pods).
  std::vector<node_room> rooms;
  std::map<std::string, std::size_t> room_of; // node name → index in rooms
  bool pass_queued = false;
};

using binder_actor = caf::stateful_actor<binder_state>;

bool is_ours(const k8s::pod& p) {
  return p.spec.scheduler_name.empty() || p.spec.scheduler_name == "default-scheduler";
}

bool holds_resources(const k8s::pod& p) {
  return !p.spec.node_name.empty() && p.status.phase != "Succeeded" && p.status.phase != "Failed";
}

// What a pod asks for: the sum over containers of requests (limits where no request is
// given, as the API server defaults them), or the largest init container if that is more.
pod_need need_of(const k8s::pod& p) {
  // What the pod asks for, counted as the kubelet's admission counts it.
  const kubelet::resource_need asks = kubelet::need_of(p);
  pod_need need;
  need.gpus = asks.gpus;
  need.milli_cpu = asks.milli_cpu;
  need.memory_bytes = asks.memory_bytes;
  need.pods = asks.pods;
  need.node_selector = p.spec.node_selector;
  if (p.spec.affinity && p.spec.affinity->node_affinity && p.spec.affinity->node_affinity->required)
    for (const auto& term : *p.spec.affinity->node_affinity->required) {
      node_selector_term t;
      for (const auto& e : term.match_expressions)
        t.push_back({e.key, e.operator_, e.values});
      need.required_terms.push_back(std::move(t));
    }
  for (const auto& t : p.spec.tolerations)
    need.tolerations.push_back({t.key, t.operator_.empty() ? "Equal" : t.operator_, t.value, t.effect});
  return need;
}

node_room room_of_node(const std::string& name, const k8s::node& n) {
  node_room r;
  r.name = name;
  r.unschedulable = n.spec.unschedulable;
  r.labels = n.metadata.labels;
  for (const auto& t : n.spec.taints)
    r.taints.push_back({t.key, t.value, t.effect});
  r.ready = false;
  for (const auto& c : n.status.conditions)
    if (c.type == "Ready")
      r.ready = c.status == "True";
  auto get = [&](const char* res) -> k8s::quantity {
    auto it = n.status.allocatable.find(res);
    return it == n.status.allocatable.end() ? k8s::quantity{} : it->second;
  };
  r.gpus = get("nvidia.com/gpu").value();
  r.milli_cpu = get("cpu").milli_value();
  r.memory_bytes = get("memory").value();
  if (n.status.allocatable.count("pods"))
    r.pods = get("pods").value();
  return r;
}

// Takes `need` from (sign +1) or gives it back to (sign -1) the node's room, if we know it.
void charge(binder_state& st, const std::string& node, const pod_need& need, int sign) {
  auto it = st.room_of.find(node);
  if (it == st.room_of.end())
    return;
  auto& r = st.rooms[it->second];
  r.gpus -= sign * need.gpus;
  r.milli_cpu -= sign * need.milli_cpu;
  r.memory_bytes -= sign * need.memory_bytes;
  r.pods -= sign * need.pods;
}

// Every node's room from scratch: when a node comes, changes or goes.
void rebuild_rooms(binder_state& st) {
  st.rooms.clear();
  st.room_of.clear();
  for (const auto& [name, n] : st.nodes) {
    st.room_of.emplace(name, st.rooms.size());
    st.rooms.push_back(room_of_node(name, *n));
  }
  for (const auto& [uid, pl] : st.bound)
    charge(st, pl.node, pl.need, +1);
  for (const auto& [uid, pl] : st.assumed)
    charge(st, pl.node, pl.need, +1);
}

// Forgets a pod's placement (bound or assumed) and gives its resources back to the node.
void drop(binder_state& st, std::map<std::string, placement>& placements, const std::string& uid) {
  if (auto it = placements.find(uid); it != placements.end()) {
    charge(st, it->second.node, it->second.need, -1);
    placements.erase(it);
  }
}

void report_unschedulable(binder_actor* self, const k8s::pod& p, const std::string& message) {
  auto& st = self->state;
  auto& last = st.last_refusal[p.metadata.uid];
  if (last == message)
    return;
  last = message;
  spdlog::info("binder pod={}/{} waiting: {}", p.metadata.namespace_, p.metadata.name, message);
  controller::record(st.recorder, controller::pod_note(p.metadata.namespace_, p.metadata.name, p.metadata.uid,
                                                      {"default-scheduler", ""}, "Warning", "FailedScheduling", message));
  st.cli->patch_status({"", "v1", "pods", p.metadata.namespace_, p.metadata.name, ""}, client::patch_type::strategic,
                       k8s::pod_scheduled_false("Unschedulable", message), {}, [](expected<json::value>) {});
}

void schedule_pass(binder_actor* self) {
  auto& st = self->state;
  st.pass_queued = false;
  caf::actor me = caf::actor_cast<caf::actor>(self);
  std::vector<std::pair<pod_need, std::string>> refusals; // this pass's: need → why not
  for (auto uid_it = st.unplaced.begin(); uid_it != st.unplaced.end();) {
    const auto& uid = *uid_it;
    auto found = st.pending.find(uid);
    if (found == st.pending.end()) { // cannot happen: unplaced ⊆ pending; kept safe anyway
      uid_it = st.unplaced.erase(uid_it);
      continue;
    }
    const auto& [pod, need] = found->second;
    // Pods that ask for the same thing as one that did not fit in this pass do not fit either
    // (nothing was placed since): a full cluster with a long queue costs one look per kind.
    auto refused = std::find_if(refusals.begin(), refusals.end(), [&](const auto& r) { return r.first == need; });
    if (refused != refusals.end()) {
      report_unschedulable(self, *pod, refused->second);
      ++uid_it;
      continue;
    }
    auto chosen = choose_node(need, st.rooms);
    if (!chosen) {
      refusals.emplace_back(need, chosen.err().message);
      report_unschedulable(self, *pod, chosen.err().message);
      ++uid_it;
      continue;
    }
    std::string node = *chosen;
    st.assumed[uid] = placement{node, need};
    charge(st, node, need, +1);
    client::binding b{pod->metadata.namespace_, pod->metadata.name, node, uid, {}};
    // The Scheduled event is posted from the bind's answer itself: the pods watch may show
    // the pod bound before this actor hears back, and the event must not depend on that race.
    st.cli->bind(b, [me, uid, node, ns = pod->metadata.namespace_, name = pod->metadata.name,
                     recorder = st.recorder](expected<json::value> r) {
      if (r)
        controller::record(recorder, controller::pod_note(ns, name, uid, {"default-scheduler", ""}, "Normal",
                                                          "Scheduled",
                                                          "Successfully assigned " + ns + "/" + name + " to " + node));
      caf::anon_send(me, atoms::retry_atom::value, uid, node, r ? std::string() : r.err().message);
    });
    uid_it = st.unplaced.erase(uid_it);
  }
}

void queue_pass(binder_actor* self) {
  if (self->state.pass_queued)
    return;
  self->state.pass_queued = true;
  self->send(self, atoms::advance_atom::value);
}

void on_pod(binder_actor* self, const object_event<k8s::pod>& ev) {
  auto& st = self->state;
  const auto& p = *ev.object;
  const auto& uid = p.metadata.uid;
  bool gone = ev.type == watch::event_type::deleted;
  drop(st, st.bound, uid);
  if (gone || !p.spec.node_name.empty() || p.metadata.deletion_timestamp || !is_ours(p)) {
    bool was_pending = st.pending.erase(uid) > 0;
    st.unplaced.erase(uid);
    drop(st, st.assumed, uid);
    st.last_refusal.erase(uid);
    if (!gone && holds_resources(p)) {
      auto need = need_of(p);
      charge(st, p.spec.node_name, need, +1);
      st.bound.emplace(uid, placement{p.spec.node_name, std::move(need)});
    }
    if (gone || was_pending || !holds_resources(p))
      queue_pass(self); // resources or a queue slot were freed
    return;
  }
  st.pending[uid] = waiting_pod{ev.object, need_of(p)};
  if (!st.assumed.count(uid))
    st.unplaced.insert(uid);
  queue_pass(self);
}

caf::behavior binder(binder_actor* self, std::shared_ptr<client::client> cli, caf::actor pods_watch,
                     caf::actor nodes_watch, caf::actor recorder) {
  self->state.cli = std::move(cli);
  self->state.recorder = std::move(recorder);
  controller::subscribe_to(self, pods_watch);
  controller::subscribe_to(self, nodes_watch);
  return {
      [self](const object_event<k8s::pod>& ev) { on_pod(self, ev); },
      [self](const object_event<k8s::node>& ev) {
        auto& nodes = self->state.nodes;
        if (ev.type == watch::event_type::deleted)
          nodes.erase(ev.object->metadata.name);
        else
          nodes[ev.object->metadata.name] = ev.object;
        rebuild_rooms(self->state);
        queue_pass(self);
      },
      [self](atoms::advance_atom) { schedule_pass(self); },
      [self](atoms::retry_atom, const std::string& uid, const std::string& node, const std::string& failure) {
        auto& st = self->state;
        if (failure.empty()) {
          spdlog::info("binder pod-uid={} bound node={}", uid, node);
          return; // the pods watch will show it bound
        }
        spdlog::warn("binder pod-uid={} bind to node={} failed: {}", uid, node, failure);
        drop(st, st.assumed, uid);
        if (st.pending.count(uid))
          st.unplaced.insert(uid);
        self->delayed_send(self, std::chrono::seconds(1), atoms::advance_atom::value);
      },
  };
}

} // namespace

caf::actor spawn_binder(caf::actor_system& sys, std::shared_ptr<client::client> cli, caf::actor pods_watch,
                        caf::actor nodes_watch, caf::actor recorder) {
  return sys.spawn(binder, std::move(cli), std::move(pods_watch), std::move(nodes_watch), std::move(recorder));
}

} // namespace kozmo::binder
