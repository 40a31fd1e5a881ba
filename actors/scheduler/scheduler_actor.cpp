// The scheduler actor's message table, its start-up and its decisions (the actor's picture is
// in scheduler_actor.hpp; its state and the rest of its shell in scheduler_actor_state.hpp).
#include "actors/scheduler/scheduler_actor.hpp"

#include "actors/controller/event_recorder_actor.hpp"
#include "actors/controller/watch_into.hpp"
#include "actors/scheduler/inspect_api.hpp"
#include "actors/scheduler/scheduler_actor_state.hpp"
#include "actors/scheduler/scheduler_metrics.hpp"
#include "actors/watch/object_traits.hpp"
#include "messages/atoms.hpp"
#include "messages/scheduler_messages.hpp"
#include "messages/watch_messages.hpp"

#include <algorithm>
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>

namespace kozmo::scheduler {
namespace shell {
namespace {

using vc_metrics_atom = caf::atom_constant<caf::atom("vcmetrics")>;
using wake_atom = caf::atom_constant<caf::atom("wake")>;

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

} // namespace

void queue_pass(scheduler_actor* self) {
  auto& st = self->state;
  if (st.pass_queued || !st.start->ready())
    return;
  st.pass_queued = true;
  // Behind every message already queued: one pass per mailbox drain, not one per event.
  self->send(self, atoms::advance_atom::value);
}

// The pod left the core: its cellgroup forgets it; a group with no pod left is released.
void untrack(scheduler_actor* self, const std::string& uid) {
  auto& st = self->state;
  if (st.follow)
    st.follow->bind_over(uid);
  st.created_ms.erase(uid);
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

// ---- decisions ---------------------------------------------------------------------------

void act(scheduler_actor* self, const pod_decision& d) {
  count_decision(d.kind);
  if (d.kind != decision_kind::wait)
    self->state.report->forget(d.pod.uid); // a queued wait reason is stale now
  switch (d.kind) {
  case decision_kind::bind: {
    if (self->state.follow)
      self->state.follow->bind_sent(d); // a rebuild before the pod is seen bound recovers it from here
    auto created = self->state.created_ms.extract(d.pod.uid);
    self->send(cellgroup_for(self, d.group),
               group_bind{d.group, d.pod.ns, d.pod.name, d.pod.uid, d.node, d.leaf_indices, d.annotations,
                          created ? created.mapped() : 0});
    return;
  }
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

namespace {

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

void pass(scheduler_actor* self) {
  auto& st = self->state;
  st.pass_queued = false;
  if (!st.start->ready())
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
  // A reclaim falls due with nothing else happening: a pass then (scheduler_core note 9).
  if (auto due = st.core->next_wake_ms(); due && (!st.wake_at || *due < *st.wake_at)) {
    st.wake_at = *due;
    const auto delay = std::max<std::int64_t>(0, *due - st.cfg.time->now_ms());
    self->delayed_send(self, std::chrono::milliseconds(delay + 10), wake_atom::value);
  }
  set_pods_waiting(st.core->waiting_pods());
  set_groups_allocated(st.core->placed_groups());
  // The per-VC gauges read every group (vc_usages, waiting_gangs): at most twice a second, and
  // always within half a second of the last round.
  if (!st.vc_metrics_queued) {
    st.vc_metrics_queued = true;
    self->delayed_send(self, std::chrono::milliseconds(500), vc_metrics_atom::value);
  }
}

void refresh_vc_metrics(scheduler_actor* self) {
  auto& st = self->state;
  st.vc_metrics_queued = false;
  if (!st.core)
    return;
  set_virtual_clusters(st.core->vc_usages(), st.core->waiting_gangs());
}

long ms_since(std::chrono::steady_clock::time_point began) {
  return static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - began).count());
}

// A watch has listed: what the start-up says to do next (startup.hpp), in its order.
void start_up(scheduler_actor* self, startup_step step) {
  auto& st = self->state;
  if (step.derive_from)
    derive_at_start(self, *step.derive_from);
  auto began = std::chrono::steady_clock::now();
  // Ready now (to queue passes): a reconfiguration follows at once (below), not a second later.
  if (step.ready && st.cfg.derived)
    st.rebuild_queued = true;
  for (const auto& n : step.nodes)
    apply_node(self, watch::event_type::added, n);
  for (const auto& p : step.bound)
    apply_pod(self, watch::event_type::added, p);
  if (step.recovered) {
    spdlog::info("scheduler: {} group(s) recovered from {} bound pod(s) (in {} ms)", st.core->placed_groups(),
                 step.bound.size(), ms_since(began));
    began = std::chrono::steady_clock::now();
  }
  if (!step.ready)
    return;
  shift_other_gpus(self, st.others->count_listed(step.others));
  spdlog::info("scheduler ready: {} group(s) recovered, {} more pod(s) counted or queued (in {} ms after the last LIST)",
               st.core->placed_groups(), step.waiting.size() + step.others.size(), ms_since(began));
  if (st.cfg.on_ready)
    st.cfg.on_ready();
  st.report->notices(st.core->take_notices()); // groups downgraded by a configuration change
  for (const auto& p : step.waiting)
    apply_pod(self, watch::event_type::added, p);
  auto deferred = std::move(st.deferred);
  for (auto& fn : deferred)
    fn();
  queue_pass(self);
  if (st.cfg.derived) // a node may have joined since the configuration was derived (after the first pass)
    self->send(self, atoms::reconfigure_atom::value);
}

// Runs `serve` now, or once recovery is done (the inspect views must include recovered groups).
void when_ready(scheduler_actor* self, std::function<void()> serve) {
  if (self->state.start->ready())
    return serve();
  self->state.deferred.push_back(std::move(serve));
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
  st.start.emplace(startup_options{st.cfg.scheduler_name, st.cfg.count_other_pods && st.cfg.other_pods_watch,
                                   st.cfg.derived.has_value()});
  st.others.emplace(st.intake.gpu_resource);
  if (st.cfg.derived)
    st.follow.emplace(st.cfg.derived->signature, st.cfg.derived->derive);
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
  auto listed = [self](listed_watch which) {
    return [self, which] { start_up(self, self->state.start->listed(which)); };
  };
  // Every pod when other schedulers' pods are counted and no watch of their own brings them.
  const bool every_pod = st.cfg.count_other_pods && !st.cfg.other_pods_watch;
  controller::subscribe_to(self, pods_watch, listed(listed_watch::pods),
                           every_pod ? watch::index_kind::all : watch::index_kind::scheduler_name,
                           every_pod ? std::string() : st.cfg.scheduler_name);
  controller::subscribe_to(self, nodes_watch, listed(listed_watch::nodes));
  if (st.cfg.count_other_pods && st.cfg.other_pods_watch)
    controller::subscribe_to(self, st.cfg.other_pods_watch, listed(listed_watch::other_pods));
  return {
      [self](const object_event<k8s::pod>& ev) {
        if (self->state.start->pod_event(ev.type, ev.object))
          apply_pod(self, ev.type, ev.object);
      },
      [self](const object_event<k8s::node>& ev) {
        if (self->state.start->node_event(ev.type, ev.object))
          apply_node(self, ev.type, ev.object);
      },
      [self](atoms::advance_atom) { pass(self); },
      [self](atoms::reconfigure_atom) { rebuild(self); },
      [self](atoms::flush_atom) { flush_reports(self); },
      [self](vc_metrics_atom) { refresh_vc_metrics(self); },
      [self](wake_atom) {
        self->state.wake_at.reset();
        queue_pass(self);
      },
      [self](const group_bind_failed& f) {
        self->state.given_up.insert(f.uid);
        self->state.report->event({f.ns, f.name, f.uid}, "Warning", "FailedScheduling", "binding failed: " + f.reason);
        untrack(self, f.uid);
        queue_pass(self);
      },
      [self](const inspect_callback& req) {
        when_ready(self, [self, req] {
          if (!req.done)
            return;
          if (auto since = parse_since(req.path))
            return watch_map(self, *since, req.done);
          req.done(answer(self, req.path));
        });
      },
      [self](caf::tick_atom) { map_tick(self); },
      [self](const inspect_request& req) -> caf::result<inspect_reply> {
        auto rp = self->make_response_promise<inspect_reply>();
        when_ready(self, [self, rp, path = req.path]() mutable { rp.deliver(answer(self, path)); });
        return caf::delegated<inspect_reply>();
      },
  };
}

} // namespace
} // namespace shell

expected<caf::actor> spawn_scheduler(caf::actor_system& sys, std::shared_ptr<client::client> cli,
                                     caf::actor pods_watch, caf::actor nodes_watch, scheduler_actor_config cfg,
                                     cellgroup_factory spawn_group) {
  auto core = scheduler_core::load(cfg.config_yaml); // parses once: thousands of cells take a while
  if (!core)
    return core.err();
  int threshold = core->force_pod_bind_threshold();
  auto shared_core = std::make_shared<scheduler_core>(std::move(*core));
  return sys.spawn(shell::scheduler, std::move(cli), std::move(pods_watch), std::move(nodes_watch), std::move(cfg),
                   std::move(spawn_group), std::move(shared_core), threshold);
}

} // namespace kozmo::scheduler
