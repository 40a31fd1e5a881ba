#include "actors/scheduler/scheduler_actor.hpp"

#include "actors/controller/event_recorder_actor.hpp"
#include "actors/scheduler/config.hpp"
#include "actors/scheduler/inspect_api.hpp"
#include "actors/scheduler/pod_intake.hpp"
#include "actors/scheduler/pod_reporter.hpp"
#include "actors/scheduler/scheduler_metrics.hpp"
#include "actors/watch/object_traits.hpp"
#include "messages/atoms.hpp"
#include "messages/scheduler_messages.hpp"
#include "messages/watch_messages.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

namespace kozmo::scheduler {
namespace {

using pod_ptr = std::shared_ptr<const k8s::pod>;
using node_ptr = std::shared_ptr<const k8s::node>;

struct scheduler_state {
  static inline const char* name = "scheduler";
  std::optional<scheduler_core> core;
  std::shared_ptr<client::client> cli;
  scheduler_actor_config cfg;
  cellgroup_factory spawn_group;
  int force_bind_threshold = 3;
  intake_options intake;

  // Start-up: our pods are recovered once the nodes and our pods are listed (`recovered`); the
  // scheduler is `ready` once other schedulers' pods are counted too. Inspect waits for `ready`.
  int unsynced = 2;         // the nodes watch and our pods watch, not yet listed
  bool others_listed = true; // false while a watch of other schedulers' pods has not listed
  bool recovered = false;
  bool ready = false;
  std::vector<std::function<void()>> deferred;
  std::unordered_map<std::string, pod_ptr> pods_at_start; // by uid (sorted oldest first when used)
  std::map<std::string, node_ptr> nodes_at_start;  // by name

  std::optional<pod_reporter> report;
  std::map<std::string, caf::actor> cellgroups; // group -> its cellgroup actor
  std::set<std::string> given_up;               // binds that failed permanently
  bool pass_queued = false;
  bool flush_queued = false; // a flush of queued wait reasons is on its way

  // With a derived configuration (cfg.derived): what a rebuild of the core starts from.
  std::map<std::string, node_ptr> nodes;                 // by name
  std::unordered_map<std::string, pod_ptr> known_pods;   // by uid: bound by us, or waiting
  std::map<std::string, pod_decision> binding;           // by uid: bind sent, not yet seen bound
  bool rebuild_queued = false;

  // Other schedulers' pods that hold GPUs: by uid, (node, GPUs). The core keeps each node's sum.
  std::unordered_map<std::string, std::pair<std::string, int>> others;
};

using scheduler_actor = caf::stateful_actor<scheduler_state>;

// ---- groups and their cellgroup actors ---------------------------------------------------

caf::actor cellgroup_for(scheduler_actor* self, const std::string& group) {
  auto& st = self->state;
  auto& a = st.cellgroups[group];
  if (!a) {
    a = st.spawn_group(group, st.force_bind_threshold, caf::actor_cast<caf::actor>(self));
    // Linked: they go down with the scheduler (shutdown); their normal exit after a release
    // does not affect it.
    self->link_to(a);
  }
  return a;
}

void queue_pass(scheduler_actor* self) {
  auto& st = self->state;
  if (st.pass_queued || !st.ready)
    return;
  st.pass_queued = true;
  // Behind every message already queued: one pass per mailbox drain, not one per event.
  self->send(self, atoms::advance_atom::value);
}

// The pod left the core: its cellgroup forgets it; a group with no pod left is released.
void untrack(scheduler_actor* self, const std::string& uid) {
  auto& st = self->state;
  st.binding.erase(uid);
  auto removed = st.core->remove_pod(uid);
  if (removed.group.empty())
    return;
  queue_pass(self); // cells may have been freed (a victim gone, a group released)
  auto cg = st.cellgroups.find(removed.group);
  if (cg != st.cellgroups.end())
    self->send(cg->second, group_pod_gone{uid});
  if (!removed.group_released)
    return;
  if (cg != st.cellgroups.end()) {
    self->send(cg->second, group_release{removed.group});
    st.cellgroups.erase(cg);
  }
  spdlog::info("scheduler group={} released", removed.group);
}

// ---- pods into the core ------------------------------------------------------------------

void act(scheduler_actor* self, const pod_decision& d);

void admit(scheduler_actor* self, const k8s::pod& p) {
  auto& st = self->state;
  pod_ref ref{p.metadata.namespace_, p.metadata.name, p.metadata.uid};
  auto view = pod_view_of(p, st.intake);
  if (!view)
    return st.report->bad_spec(ref, view.err().message);
  if (auto added = st.core->add_pod(*view); !added)
    return st.report->bad_spec(ref, added.err().message);
  st.report->forget(ref.uid);
  if (auto bind = st.core->bind_placed(ref.uid)) {
    act(self, *bind);
    set_pods_waiting(st.core->waiting_pods());
    return;
  }
  queue_pass(self);
}

void recover(scheduler_actor* self, const k8s::pod& p) {
  auto& st = self->state;
  const auto& m = p.metadata;
  auto view = pod_view_of(p, st.intake);
  if (!view) {
    spdlog::error("scheduler pod={}/{} bound on node={} with an unreadable spec, its GPUs are not accounted: {}",
                  m.namespace_, m.name, p.spec.node_name, view.err().message);
    return;
  }
  if (auto done = st.core->recover_pod(*view); !done) {
    spdlog::error("scheduler pod={}/{} bound on node={} could not be recovered: {}", m.namespace_, m.name,
                  p.spec.node_name, done.err().message);
    st.report->event(view->ref, "Warning", "RecoveryFailed", done.err().message);
    return;
  }
  spdlog::debug("scheduler pod={}/{} recovered on node={} group={}", m.namespace_, m.name, p.spec.node_name,
               view->spec.affinity_group);
}

// A pod of another scheduler: what it holds on its node (nothing once it has finished or is
// gone) goes into the node's count of GPUs held elsewhere.
void apply_other(scheduler_actor* self, watch::event_type type, const k8s::pod& p) {
  auto& st = self->state;
  const auto& uid = p.metadata.uid;
  const bool holds = type != watch::event_type::deleted && !finished(p) && !p.spec.node_name.empty();
  const int gpus = holds ? gpus_held(p, st.intake.gpu_resource) : 0;
  auto it = st.others.find(uid);
  if (it != st.others.end() && it->second == std::make_pair(p.spec.node_name, gpus))
    return;
  auto add = [&](const std::string& node, int delta) {
    if (st.core->set_other_pods_gpus(node, st.core->other_pods_gpus(node) + delta))
      queue_pass(self); // GPUs freed may let a waiting pod in; taken ones change wait reasons
  };
  if (it != st.others.end()) {
    auto [node, held] = std::move(it->second);
    st.others.erase(it);
    add(node, -held);
  }
  if (gpus > 0) {
    st.others.emplace(uid, std::make_pair(p.spec.node_name, gpus));
    add(p.spec.node_name, gpus);
  }
}

// Other schedulers' pods as listed at start: counted node by node, one change of a node's count
// each (20,000 pods on 5,000 nodes were 20,000 changes, each re-evaluating the node's cells:
// most of the time between the last LIST and /readyz).
void count_others_at_start(scheduler_actor* self, const std::vector<pod_ptr>& pods) {
  auto& st = self->state;
  std::unordered_map<std::string, int> held;
  for (const auto& pod : pods) {
    const auto& p = *pod;
    if (st.others.count(p.metadata.uid)) { // seen before (not at start): a change, not a count
      apply_other(self, watch::event_type::added, p);
      continue;
    }
    const int gpus = !finished(p) && !p.spec.node_name.empty() ? gpus_held(p, st.intake.gpu_resource) : 0;
    if (gpus <= 0)
      continue;
    st.others.emplace(p.metadata.uid, std::make_pair(p.spec.node_name, gpus));
    held[p.spec.node_name] += gpus;
  }
  bool changed = false;
  for (const auto& [node, gpus] : held)
    changed = st.core->set_other_pods_gpus(node, st.core->other_pods_gpus(node) + gpus) || changed;
  if (changed)
    queue_pass(self);
}

void apply_pod(scheduler_actor* self, watch::event_type type, const pod_ptr& pod) {
  auto& st = self->state;
  const auto& p = *pod;
  const auto& uid = p.metadata.uid;
  if (p.spec.scheduler_name != st.cfg.scheduler_name)
    return apply_other(self, type, p);
  if (type == watch::event_type::deleted || finished(p)) {
    st.report->forget(uid);
    st.given_up.erase(uid);
    st.known_pods.erase(uid);
    return untrack(self, uid);
  }
  if (st.cfg.derived)
    st.known_pods[uid] = pod;
  if (!st.core->group_of(uid).empty()) {
    if (!p.spec.node_name.empty()) {
      st.binding.erase(uid);
      st.core->pod_bound(uid);
    }
    return;
  }
  if (!p.spec.node_name.empty()) {
    // Bound: ours if it carries a bind-info (written by us, maybe before a restart).
    if (p.metadata.annotations.count(bind_info_annotation))
      recover(self, p);
    return;
  }
  if (!p.metadata.deletion_timestamp && !st.given_up.count(uid))
    admit(self, p);
}

void rebuild(scheduler_actor* self);

// A derived configuration follows the GPU nodes: a change of a node's signature derives it
// again a second later (a burst of joins is one rebuild).
void follow_node(scheduler_actor* self, watch::event_type type, const node_ptr& n) {
  auto& st = self->state;
  const auto& signature_of = st.cfg.derived->signature;
  auto& known = st.nodes[n->metadata.name];
  std::string before = known ? signature_of(*known) : std::string();
  std::string signature = type == watch::event_type::deleted ? std::string() : signature_of(*n);
  if (type == watch::event_type::deleted)
    st.nodes.erase(n->metadata.name);
  else
    known = n;
  if (signature == before || st.rebuild_queued || !st.ready)
    return;
  st.rebuild_queued = true;
  self->delayed_send(self, std::chrono::seconds(1), atoms::reconfigure_atom::value);
}

void apply_node(scheduler_actor* self, watch::event_type type, const node_ptr& node) {
  if (self->state.cfg.derived)
    follow_node(self, type, node);
  const auto& n = *node;
  auto& core = *self->state.core;
  bool changed = false;
  if (type == watch::event_type::deleted) {
    changed = core.remove_node(n.metadata.name);
  } else {
    changed = core.set_node(n.metadata.name, node_healthy(n));
  }
  // Every node writes its status every few seconds; only a change of health can give a
  // waiting pod a new chance (a thousand nodes' heartbeats were a hundred rounds a second).
  if (changed)
    queue_pass(self);
}

// ---- decisions ---------------------------------------------------------------------------

// Ten times a second while there is something to catch up on: queued wait reasons are
// written a few at a time (pod_reporter.hpp), and a round brings up to date the wait reasons
// the core left stale (scheduler_options::reason_refreshes_per_round). Neither competes with
// the rounds that place pods.
void flush_reports(scheduler_actor* self) {
  auto& st = self->state;
  st.flush_queued = false;
  if (st.core->stale_reasons() > 0)
    queue_pass(self);
  if (st.report->flush(std::chrono::steady_clock::now()) || st.core->stale_reasons() > 0) {
    st.flush_queued = true;
    self->delayed_send(self, std::chrono::milliseconds(100), atoms::flush_atom::value);
  }
}

void act(scheduler_actor* self, const pod_decision& d) {
  count_decision(d.kind);
  if (d.kind != decision_kind::wait)
    self->state.report->forget(d.pod.uid); // a queued wait reason is stale now
  switch (d.kind) {
  case decision_kind::bind:
    if (self->state.cfg.derived)
      self->state.binding[d.pod.uid] = d; // a rebuild before the pod is seen bound recovers it from here
    self->send(cellgroup_for(self, d.group),
               group_bind{d.group, d.pod.ns, d.pod.name, d.pod.uid, d.node, d.leaf_indices, d.annotations});
    return;
  case decision_kind::preempt: {
    group_preempt p{d.group, d.pod.ns, d.pod.name, d.pod.uid, {}, d.reason};
    for (const auto& v : d.victims)
      p.victims.push_back({v.ns, v.name, v.uid});
    self->send(cellgroup_for(self, d.group), std::move(p));
    return;
  }
  case decision_kind::wait:
    self->state.report->waiting(d.pod, d.reason);
    return;
  }
}

void pass(scheduler_actor* self) {
  auto& st = self->state;
  st.pass_queued = false;
  if (!st.ready)
    return;
  auto started = std::chrono::steady_clock::now();
  auto decisions = st.core->schedule(st.cfg.time->now_ms());
  observe_round(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  for (const auto& d : decisions)
    act(self, d);
  if (!st.flush_queued && (st.report->queued() > 0 || st.core->stale_reasons() > 0)) {
    st.flush_queued = true;
    self->delayed_send(self, std::chrono::milliseconds(100), atoms::flush_atom::value);
  }
  st.report->notices(st.core->take_notices());
  set_pods_waiting(st.core->waiting_pods());
  set_groups_allocated(st.core->placed_groups());
}

// Oldest first: after a configuration change that shrank a VC, the groups that were there first
// keep its quota and the later ones are downgraded, whatever order the LIST had.
void oldest_first(std::vector<pod_ptr>& pods) {
  std::sort(pods.begin(), pods.end(), [](const pod_ptr& a, const pod_ptr& b) {
    const auto& x = a->metadata;
    const auto& y = b->metadata;
    return std::tie(x.creation_timestamp, x.namespace_, x.name) < std::tie(y.creation_timestamp, y.namespace_, y.name);
  });
}

// A core on the configuration derived from `nodes` (name → node), when it differs from the one in
// use; the configuration in use is then the new one. Nullopt when it is the same, or when it
// does not load (logged; the one in use stays). `gpu_nodes`: how many of the nodes have GPUs.
template <class NodeMap>
std::optional<scheduler_core> derive_core(scheduler_actor* self, const NodeMap& nodes, std::size_t& gpu_nodes) {
  auto& st = self->state;
  std::vector<k8s::node> list;
  list.reserve(nodes.size());
  gpu_nodes = 0;
  for (const auto& [name, n] : nodes) {
    list.push_back(*n);
    gpu_nodes += !st.cfg.derived->signature(*n).empty();
  }
  auto yaml = st.cfg.derived->derive(list);
  if (yaml == st.cfg.config_yaml)
    return std::nullopt;
  auto core = scheduler_core::load(yaml);
  if (!core) {
    spdlog::error("scheduler: the configuration derived from {} GPU node(s) does not load, keeping the one in "
                  "use: {}", gpu_nodes, core.err().message);
    return std::nullopt;
  }
  st.cfg.config_yaml = std::move(yaml);
  return std::move(*core);
}

// A derived configuration from the nodes as the nodes watch listed them, before anything is
// placed (the one the actor was spawned with is a placeholder: no cells). Called when the nodes
// watch has synced; events of nodes that change meanwhile wait in nodes_at_start.
void derive_at_start(scheduler_actor* self) {
  auto& st = self->state;
  std::size_t gpu_nodes = 0;
  if (auto core = derive_core(self, st.nodes_at_start, gpu_nodes))
    st.core.emplace(std::move(*core));
  if (gpu_nodes == 0)
    spdlog::warn("scheduler: no node has allocatable nvidia.com/gpu yet; GPU nodes are taken in as they register");
  else
    spdlog::info("scheduler: configuration derived from {} GPU node(s)", gpu_nodes);
}

long ms_since(std::chrono::steady_clock::time_point began) {
  return static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - began).count());
}

void apply_listed_nodes(scheduler_actor* self) {
  auto& st = self->state;
  for (const auto& [name, n] : st.nodes_at_start)
    apply_node(self, watch::event_type::added, n);
  st.nodes_at_start.clear();
}

// The nodes and our pods have listed: our bound pods are recovered from their bind-info. With a
// watch of other schedulers' pods of its own, this runs while that (larger) LIST is still on its
// way; their GPUs are counted afterwards, on what our pods leave free. Our waiting pods stay
// buffered until the scheduler is ready.
void recover_at_start(scheduler_actor* self) {
  auto& st = self->state;
  auto began = std::chrono::steady_clock::now();
  apply_listed_nodes(self);
  std::vector<pod_ptr> ours;
  for (auto it = st.pods_at_start.begin(); it != st.pods_at_start.end();) {
    const auto& p = *it->second;
    if (p.spec.scheduler_name == st.cfg.scheduler_name && !p.spec.node_name.empty()) {
      ours.push_back(std::move(it->second));
      it = st.pods_at_start.erase(it);
    } else {
      ++it;
    }
  }
  oldest_first(ours);
  for (const auto& p : ours)
    apply_pod(self, watch::event_type::added, p);
  st.recovered = true;
  spdlog::info("scheduler: {} group(s) recovered from {} bound pod(s) (in {} ms)", st.core->placed_groups(), ours.size(),
               ms_since(began));
}

// Every watch has listed: other schedulers' pods are counted, then our waiting pods queued.
void become_ready(scheduler_actor* self) {
  auto& st = self->state;
  auto began = std::chrono::steady_clock::now();
  apply_listed_nodes(self); // those that changed since recovery
  // Ours first (bound ones recovered, oldest first), then what other schedulers' pods hold, on
  // what ours leave free.
  std::vector<pod_ptr> pods, others;
  for (auto& [uid, p] : st.pods_at_start)
    (p->spec.scheduler_name == st.cfg.scheduler_name ? pods : others).push_back(std::move(p));
  st.pods_at_start.clear();
  oldest_first(pods);
  for (const auto& p : pods)
    if (!p->spec.node_name.empty())
      apply_pod(self, watch::event_type::added, p);
  count_others_at_start(self, others);
  st.ready = true;
  spdlog::info("scheduler ready: {} group(s) recovered, {} more pod(s) counted or queued (in {} ms after the last LIST)",
               st.core->placed_groups(), pods.size() + others.size(), ms_since(began));
  if (st.cfg.on_ready)
    st.cfg.on_ready();
  st.report->notices(st.core->take_notices()); // groups downgraded by a configuration change
  for (const auto& p : pods)
    if (p->spec.node_name.empty() && p->spec.scheduler_name == st.cfg.scheduler_name)
      apply_pod(self, watch::event_type::added, p);
  auto deferred = std::move(st.deferred);
  for (auto& fn : deferred)
    fn();
  queue_pass(self);
  if (st.cfg.derived) { // a node may have joined since the configuration was derived (after the first pass)
    st.rebuild_queued = true;
    self->send(self, atoms::reconfigure_atom::value);
  }
}

// The derived configuration again from the nodes as they are now; when it differs, a new core
// on it, given every node's health and every pod as at start-up (bound ones recovered from
// bind-info, binds still being written from their decision, waiting ones queued), oldest first.
// Cellgroup actors keep their groups; a preemption under way is decided again. Pods the old
// core did not hold (a spec it refused) stay out.
void rebuild(scheduler_actor* self) {
  auto& st = self->state;
  st.rebuild_queued = false;
  std::size_t gpu_nodes = 0;
  auto core = derive_core(self, st.nodes, gpu_nodes);
  if (!core)
    return;
  scheduler_core old = std::move(*st.core);
  st.core.emplace(std::move(*core));
  for (const auto& [name, n] : st.nodes)
    st.core->set_node(name, node_healthy(*n));
  for (const auto& [uid, held] : st.others)
    st.core->set_other_pods_gpus(held.first, st.core->other_pods_gpus(held.first) + held.second);
  // The pods the old core held (those it refused were told why already and stay out).
  std::vector<pod_ptr> pods;
  for (const auto& [uid, p] : st.known_pods) {
    if (old.group_of(uid).empty())
      continue;
    auto b = st.binding.find(uid);
    if (b == st.binding.end() || !p->spec.node_name.empty()) {
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
  for (const auto& p : pods)
    if (!p->spec.node_name.empty())
      recover(self, *p);
  for (const auto& p : pods)
    if (p->spec.node_name.empty() && !p->metadata.deletion_timestamp && !st.given_up.count(p->metadata.uid))
      admit(self, *p);
  spdlog::info("scheduler: configuration derived again from {} GPU node(s); {} group(s) recovered, {} pod(s) known",
               gpu_nodes, st.core->placed_groups(), pods.size());
  st.report->notices(st.core->take_notices());
  queue_pass(self);
}

// Runs `serve` now, or once recovery is done (the inspect views must include recovered groups).
void when_ready(scheduler_actor* self, std::function<void()> serve) {
  if (self->state.ready)
    return serve();
  self->state.deferred.push_back(std::move(serve));
}

inspect_reply inspect(scheduler_actor* self, const std::string& path) {
  auto a = answer_inspect(*self->state.core, path);
  return {a.status, std::move(a.body)};
}

template <class T, class Buffer, class Apply>
void on_watch_event(scheduler_actor* self, Buffer& buffer, const object_event<T>& ev, const std::string& key,
                    Apply apply) {
  if (self->state.ready)
    return apply();
  if (ev.type == watch::event_type::deleted)
    buffer.erase(key);
  else
    buffer[key] = ev.object;
}

caf::behavior scheduler(scheduler_actor* self, std::shared_ptr<client::client> cli, caf::actor pods_watch,
                        caf::actor nodes_watch, scheduler_actor_config cfg, cellgroup_factory spawn_group,
                        std::shared_ptr<scheduler_core> core, int force_bind_threshold) {
  auto& st = self->state;
  st.cli = std::move(cli);
  st.cfg = std::move(cfg);
  st.spawn_group = std::move(spawn_group);
  st.core.emplace(std::move(*core));
  st.force_bind_threshold = force_bind_threshold;
  st.report.emplace(
      st.cli, [recorder = st.cfg.recorder](controller::event_note n) { controller::record(recorder, std::move(n)); },
      st.cfg.component);
  st.intake.default_virtual_cluster = st.cfg.default_virtual_cluster.empty()
                                          ? default_virtual_cluster(st.cfg.config_yaml)
                                          : st.cfg.default_virtual_cluster;
  // A cellgroup that fails takes nothing with it: it is spawned again when its group needs
  // one. Any other exit (shutdown) ends the scheduler, and through the links its cellgroups.
  self->set_exit_handler([self](caf::exit_msg& m) {
    auto& groups = self->state.cellgroups;
    for (auto it = groups.begin(); it != groups.end(); ++it)
      if (it->second.address() == m.source) {
        spdlog::warn("scheduler cellgroup of group={} ended: {}", it->first, self->system().render(m.reason));
        groups.erase(it);
        return;
      }
    if (m.reason)
      self->quit(m.reason);
  });
  self->attach_functor([](const caf::error& reason) { spdlog::info("scheduler stopped: {}", caf::to_string(reason)); });
  auto me = caf::actor_cast<caf::actor>(self);
  // Every pod when other schedulers' pods are counted and no watch of their own brings them.
  const bool every_pod = st.cfg.count_other_pods && !st.cfg.other_pods_watch;
  self->send(pods_watch, atoms::subscribe_atom::value,
             every_pod ? watch::index_kind::all : watch::index_kind::scheduler_name,
             every_pod ? std::string() : st.cfg.scheduler_name, me);
  self->send(nodes_watch, atoms::subscribe_atom::value, watch::index_kind::all, std::string(), me);
  std::vector<caf::actor> watches{pods_watch, nodes_watch};
  if (st.cfg.count_other_pods && st.cfg.other_pods_watch) {
    self->send(st.cfg.other_pods_watch, atoms::subscribe_atom::value, watch::index_kind::all, std::string(), me);
    watches.push_back(st.cfg.other_pods_watch);
  }
  st.others_listed = watches.size() == 2;
  for (const auto& w : watches)
    self->request(w, caf::infinite, atoms::synced_atom::value)
        .then([self, nodes = w == nodes_watch, others = w != nodes_watch && w != pods_watch](caf::ok_atom) {
          auto& st = self->state;
          // A derived configuration is made as soon as the nodes are listed, while the (larger)
          // pods LISTs are still on their way.
          if (nodes && st.cfg.derived)
            derive_at_start(self);
          if (others)
            st.others_listed = true;
          else if (--st.unsynced == 0)
            recover_at_start(self);
          if (st.recovered && st.others_listed)
            become_ready(self);
        });
  return {
      [self](const object_event<k8s::pod>& ev) {
        auto& st = self->state;
        const auto& p = *ev.object;
        // Recovered, not yet ready: our bound pods' changes reach the core at once (it holds
        // them now); waiting ones and other schedulers' pods wait for readiness.
        if (!st.ready && st.recovered && p.spec.scheduler_name == st.cfg.scheduler_name &&
            (ev.type == watch::event_type::deleted || !p.spec.node_name.empty())) {
          st.pods_at_start.erase(p.metadata.uid);
          return apply_pod(self, ev.type, ev.object);
        }
        on_watch_event(self, st.pods_at_start, ev, p.metadata.uid, [&] { apply_pod(self, ev.type, ev.object); });
      },
      [self](const object_event<k8s::node>& ev) {
        on_watch_event(self, self->state.nodes_at_start, ev, ev.object->metadata.name,
                       [&] { apply_node(self, ev.type, ev.object); });
      },
      [self](atoms::advance_atom) { pass(self); },
      [self](atoms::reconfigure_atom) { rebuild(self); },
      [self](atoms::flush_atom) { flush_reports(self); },
      [self](const group_bind_failed& f) {
        self->state.given_up.insert(f.uid);
        self->state.report->event({f.ns, f.name, f.uid}, "Warning", "FailedScheduling", "binding failed: " + f.reason);
        untrack(self, f.uid);
        queue_pass(self);
      },
      [self](const inspect_callback& req) {
        when_ready(self, [self, req] {
          if (req.done)
            req.done(inspect(self, req.path));
        });
      },
      [self](const inspect_request& req) -> caf::result<inspect_reply> {
        auto rp = self->make_response_promise<inspect_reply>();
        when_ready(self, [self, rp, path = req.path]() mutable { rp.deliver(inspect(self, path)); });
        return caf::delegated<inspect_reply>();
      },
  };
}

} // namespace

expected<caf::actor> spawn_scheduler(caf::actor_system& sys, std::shared_ptr<client::client> cli,
                                     caf::actor pods_watch, caf::actor nodes_watch, scheduler_actor_config cfg,
                                     cellgroup_factory spawn_group) {
  auto core = scheduler_core::load(cfg.config_yaml); // parses once: thousands of cells take a while
  if (!core)
    return core.err();
  int threshold = core->force_pod_bind_threshold();
  auto shared_core = std::make_shared<scheduler_core>(std::move(*core));
  return sys.spawn(scheduler, std::move(cli), std::move(pods_watch), std::move(nodes_watch), std::move(cfg),
                   std::move(spawn_group), std::move(shared_core), threshold);
}

} // namespace kozmo::scheduler
