#include "actors/scheduler/scheduler_actor.hpp"

#include "actors/scheduler/config.hpp"
#include "actors/scheduler/scheduler_core.hpp"
#include "actors/watch/object_traits.hpp"
#include "k8s/model/make_event.hpp"
#include "messages/atoms.hpp"
#include "messages/scheduler_messages.hpp"
#include "messages/watch_messages.hpp"
#include "actors/scheduler/scheduler_metrics.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <charconv>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace kozmo::scheduler {
namespace {

using pod_ptr = std::shared_ptr<const k8s::pod>;
using node_ptr = std::shared_ptr<const k8s::node>;
using string_map = std::map<std::string, std::string>;

struct scheduler_state {
  static inline const char* name = "scheduler";
  std::optional<scheduler_core> core;
  std::shared_ptr<client::client> cli;
  scheduler_actor_config cfg;
  cellgroup_factory spawn_group;
  int force_bind_threshold = 3;
  std::string default_vc;

  // Start-up: both watches must have listed before recovery; requests wait for `ready`.
  int unsynced = 2;
  bool ready = false;
  std::vector<std::function<void()>> deferred;

  std::map<std::string, pod_ptr> pods;   // our pods, by uid (latest version seen)
  std::map<std::string, node_ptr> nodes; // by name, until ready (then the core knows them)

  std::set<std::string> in_core;                          // uids the core holds
  std::map<std::string, std::string> group_of;            // uid -> affinity group (core pods)
  std::map<std::string, std::set<std::string>> members;   // group -> uids in the core
  std::map<std::string, caf::actor> cellgroups;           // group -> its cellgroup actor
  std::map<std::string, std::string> spec_error;          // uid -> spec error already reported
  std::map<std::string, std::string> wait_reason;         // uid -> waiting reason already reported
  std::set<std::string> given_up;                         // binds that failed permanently
  std::map<std::string, pod_decision> extender_decisions; // uid -> last filter decision
  bool pass_queued = false;
};

using scheduler_actor = caf::stateful_actor<scheduler_state>;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ---- reading pods ------------------------------------------------------------------------

sched_pod view_of(const k8s::pod& p) {
  sched_pod v;
  v.ns = p.metadata.namespace_;
  v.name = p.metadata.name;
  v.uid = p.metadata.uid;
  v.annotations = string_map(p.metadata.annotations.begin(), p.metadata.annotations.end());
  v.node = p.spec.node_name;
  if (p.metadata.creation_timestamp)
    v.created_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       p.metadata.creation_timestamp->time_since_epoch())
                       .count();
  auto gpus = [](const auto& list) {
    auto it = list.find("nvidia.com/gpu");
    return it == list.end() ? 0 : static_cast<int>(it->second.value());
  };
  for (const auto& c : p.spec.containers) {
    int n = gpus(c.resources.limits);
    v.gpu_request += n > 0 ? n : gpus(c.resources.requests);
  }
  return v;
}

bool finished(const k8s::pod& p) { return p.status.phase == "Succeeded" || p.status.phase == "Failed"; }

// Kozmo's flat keys need less than HiveD's spec: the virtual cluster defaults to the
// configured default, the pod's GPUs to its nvidia.com/gpu limit (or the gang's only member
// size), and a pod that only says `schedulerName: kozmo` is a gang of one.
expected<pod_scheduling_spec> spec_of(const sched_pod& p, const std::string& default_vc) {
  auto annotations = p.annotations;
  if (!annotations.count(hived_spec_annotation)) {
    annotations.try_emplace("kozmo.io/virtual-cluster", default_vc);
    if (!annotations.count("kozmo.io/leaf-cell-number")) {
      int gpus = p.gpu_request;
      if (auto it = annotations.find("kozmo.io/gang-members");
          gpus <= 0 && it != annotations.end() && it->second.find(',') == std::string::npos) {
        auto x = it->second.find('x');
        if (x != std::string::npos)
          gpus = std::atoi(it->second.c_str() + x + 1);
      }
      if (gpus > 0)
        annotations["kozmo.io/leaf-cell-number"] = std::to_string(gpus);
    }
  }
  return parse_pod_scheduling_spec(annotations, p.ns, p.name);
}

pod_view core_view(const sched_pod& p, pod_scheduling_spec spec) {
  pod_view v;
  v.ref = {p.ns, p.name, p.uid};
  v.spec = std::move(spec);
  v.node = p.node;
  if (auto it = p.annotations.find(bind_info_annotation); it != p.annotations.end())
    v.bind_info = it->second;
  v.created_ms = p.created_ms;
  return v;
}

// ---- writing to the API ------------------------------------------------------------------

void post_event(scheduler_actor* self, const pod_ref& pod, const std::string& type, const std::string& reason,
                const std::string& message) {
  auto& st = self->state;
  st.cli->create_event(k8s::make_event(k8s::pod_reference(pod.ns, pod.name, pod.uid), {st.cfg.component, ""}, type,
                                       reason, message, std::chrono::system_clock::now()),
                       [](expected<json::value> r) {
                         if (!r)
                           spdlog::debug("scheduler could not post an event: {}", r.err().message);
                       });
}

void set_unschedulable(scheduler_actor* self, const pod_ref& pod, const std::string& reason,
                       const std::string& message) {
  json::value cond;
  cond["type"] = "PodScheduled";
  cond["status"] = "False";
  cond["reason"] = reason;
  cond["message"] = message;
  cond["lastProbeTime"] = nullptr;
  json::value body;
  body["status"]["conditions"] = json::array{cond};
  self->state.cli->patch_status({"", "v1", "pods", pod.ns, pod.name, ""}, client::patch_type::strategic, body, {},
                                [](expected<json::value> r) {
                                  if (!r)
                                    spdlog::debug("scheduler could not patch a pod condition: {}", r.err().message);
                                });
}

void report_waiting(scheduler_actor* self, const pod_ref& pod, const std::string& reason) {
  auto& last = self->state.wait_reason[pod.uid];
  if (last == reason)
    return;
  last = reason;
  spdlog::info("scheduler pod={}/{} waiting: {}", pod.ns, pod.name, reason);
  set_unschedulable(self, pod, "Unschedulable", reason);
  post_event(self, pod, "Warning", "FailedScheduling", reason);
}

void report_bad_spec(scheduler_actor* self, const pod_ref& pod, const std::string& message) {
  auto& last = self->state.spec_error[pod.uid];
  if (last == message)
    return;
  last = message;
  spdlog::warn("scheduler pod={}/{} has an invalid scheduling spec: {}", pod.ns, pod.name, message);
  set_unschedulable(self, pod, "InvalidSchedulingSpec", message);
  post_event(self, pod, "Warning", "InvalidSchedulingSpec", message);
}

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

void track(scheduler_actor* self, const std::string& uid, const std::string& group) {
  auto& st = self->state;
  st.in_core.insert(uid);
  st.group_of[uid] = group;
  st.members[group].insert(uid);
}

// The pod left the core: its cellgroup forgets it; a group with no pod left is released.
void untrack(scheduler_actor* self, const std::string& uid) {
  auto& st = self->state;
  if (!st.in_core.erase(uid))
    return;
  st.core->remove_pod(uid);
  auto g = st.group_of.find(uid);
  if (g == st.group_of.end())
    return;
  std::string group = g->second;
  st.group_of.erase(g);
  auto cg = st.cellgroups.find(group);
  if (cg != st.cellgroups.end())
    self->send(cg->second, group_pod_gone{uid});
  auto m = st.members.find(group);
  if (m != st.members.end()) {
    m->second.erase(uid);
    if (!m->second.empty())
      return;
    st.members.erase(m);
  }
  if (cg != st.cellgroups.end()) {
    self->send(cg->second, group_release{group});
    st.cellgroups.erase(cg);
  }
  spdlog::info("scheduler group={} released", group);
}

void queue_pass(scheduler_actor* self) {
  auto& st = self->state;
  if (st.pass_queued || !st.ready || !st.cfg.direct)
    return;
  st.pass_queued = true;
  // Behind every message already queued: one pass per mailbox drain, not one per event.
  self->send(self, atoms::advance_atom::value);
}

// ---- pods into the core ------------------------------------------------------------------

status admit(scheduler_actor* self, const sched_pod& p) {
  auto& st = self->state;
  pod_ref ref{p.ns, p.name, p.uid};
  auto spec = spec_of(p, st.default_vc);
  if (!spec) {
    report_bad_spec(self, ref, spec.err().message);
    return spec.err();
  }
  std::string group = spec->affinity_group;
  if (auto added = st.core->add_pod(core_view(p, std::move(*spec))); !added) {
    report_bad_spec(self, ref, added.err().message);
    return added.err();
  }
  st.spec_error.erase(p.uid);
  track(self, p.uid, group);
  queue_pass(self);
  return ok;
}

void recover(scheduler_actor* self, const sched_pod& p) {
  auto& st = self->state;
  auto spec = spec_of(p, st.default_vc);
  if (!spec) {
    spdlog::error("scheduler pod={}/{} bound on node={} with an unreadable spec, its GPUs are not accounted: {}", p.ns,
                  p.name, p.node, spec.err().message);
    return;
  }
  std::string group = spec->affinity_group;
  if (auto done = st.core->recover_pod(core_view(p, std::move(*spec))); !done) {
    spdlog::error("scheduler pod={}/{} bound on node={} could not be recovered: {}", p.ns, p.name, p.node,
                  done.err().message);
    post_event(self, {p.ns, p.name, p.uid}, "Warning", "RecoveryFailed", done.err().message);
    return;
  }
  spdlog::info("scheduler pod={}/{} recovered on node={} group={}", p.ns, p.name, p.node, group);
  track(self, p.uid, group);
}

void forget(scheduler_actor* self, const std::string& uid) {
  auto& st = self->state;
  st.pods.erase(uid);
  st.spec_error.erase(uid);
  st.wait_reason.erase(uid);
  st.given_up.erase(uid);
  st.extender_decisions.erase(uid);
  if (st.in_core.count(uid)) {
    untrack(self, uid);
    queue_pass(self); // cells may have been freed
  }
}

void apply_pod(scheduler_actor* self, watch::event_type type, const pod_ptr& pod) {
  auto& st = self->state;
  const auto& p = *pod;
  const auto& uid = p.metadata.uid;
  if (type == watch::event_type::deleted || finished(p)) {
    forget(self, uid);
    return;
  }
  st.pods[uid] = pod;
  if (st.in_core.count(uid)) {
    if (!p.spec.node_name.empty())
      st.core->pod_bound(uid);
    return;
  }
  auto view = view_of(p);
  if (!p.spec.node_name.empty()) {
    // Bound: ours if it carries a bind-info (written by us, maybe before a restart).
    if (view.annotations.count(bind_info_annotation))
      recover(self, view);
    return;
  }
  if (p.metadata.deletion_timestamp || st.given_up.count(uid) || !st.cfg.direct)
    return;
  (void)admit(self, view);
}

void apply_node(scheduler_actor* self, watch::event_type type, const k8s::node& n) {
  auto& core = *self->state.core;
  bool changed = false;
  if (type == watch::event_type::deleted) {
    changed = core.remove_node(n.metadata.name);
  } else {
    bool ready = false;
    for (const auto& c : n.status.conditions)
      if (c.type == "Ready")
        ready = c.status == "True";
    changed = core.set_node(n.metadata.name, ready && !n.spec.unschedulable);
  }
  // Every node writes its status every few seconds; only a change of health can give a
  // waiting pod a new chance (a thousand nodes' heartbeats were a hundred rounds a second).
  if (changed)
    queue_pass(self);
}

// ---- decisions ---------------------------------------------------------------------------

void act(scheduler_actor* self, const pod_decision& d) {
  auto& st = self->state;
  count_decision(d.kind);
  switch (d.kind) {
  case decision_kind::bind:
    st.wait_reason.erase(d.pod.uid);
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
    report_waiting(self, d.pod, d.reason);
    return;
  }
}

void pass(scheduler_actor* self) {
  auto& st = self->state;
  st.pass_queued = false;
  if (!st.ready || !st.cfg.direct)
    return;
  auto started = std::chrono::steady_clock::now();
  auto decisions = st.core->schedule(now_ms());
  observe_round(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  for (const auto& d : decisions)
    act(self, d);
  set_pods_waiting(st.wait_reason.size());
  set_groups_allocated(st.cellgroups.size());
}

// Both watches have listed: account for the bound pods first, then queue the waiting ones.
void become_ready(scheduler_actor* self) {
  auto& st = self->state;
  for (const auto& [name, n] : st.nodes)
    apply_node(self, watch::event_type::added, *n);
  st.nodes.clear();
  auto pods = st.pods;
  for (const auto& [uid, p] : pods)
    if (!p->spec.node_name.empty())
      apply_pod(self, watch::event_type::added, p);
  st.ready = true;
  spdlog::info("scheduler ready: {} bound pod(s) recovered, {} pod(s) known", st.in_core.size(), pods.size());
  for (const auto& [uid, p] : pods)
    if (p->spec.node_name.empty())
      apply_pod(self, watch::event_type::added, p);
  auto deferred = std::move(st.deferred);
  for (auto& fn : deferred)
    fn();
  queue_pass(self);
}

// ---- inspect (HiveD's GET /v1/inspect/... paths) ------------------------------------------

inspect_reply json_reply(const json::value& v) { return {200, json::dump(v)}; }

inspect_reply error_reply(const error& e) {
  int code = e.code ? e.code : 500;
  return {code, json::dump(json::object{{"code", code}, {"message", e.message}})};
}

// Percent-decoding for names in paths (a default group is named "<ns>/<pod>").
std::string unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    int byte = 0;
    if (s[i] == '%' && i + 2 < s.size() &&
        std::from_chars(s.data() + i + 1, s.data() + i + 3, byte, 16).ptr == s.data() + i + 3) {
      out += static_cast<char>(byte);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

inspect_reply answer_inspect(const scheduler_core& core, std::string path) {
  path = path.substr(0, path.find('?'));
  auto rest_after = [&](std::string_view prefix) -> std::optional<std::string> {
    if (path.rfind(prefix, 0) != 0)
      return std::nullopt;
    std::string rest = path.substr(prefix.size());
    if (!rest.empty() && rest.front() != '/')
      return std::nullopt; // "/affinitygroupsX" is not "/affinitygroups"
    if (!rest.empty() && rest.back() == '/')
      rest.pop_back();
    if (!rest.empty() && rest.front() == '/')
      rest.erase(0, 1);
    return unescape(rest);
  };
  if (auto name = rest_after("/v1/inspect/affinitygroups")) {
    if (name->empty())
      return json_reply(core.inspect_groups());
    auto g = core.inspect_group(*name);
    return g ? json_reply(*g) : error_reply(g.err());
  }
  if (auto vc = rest_after("/v1/inspect/clusterstatus/virtualclusters")) {
    if (vc->empty())
      return json_reply(core.inspect_virtual_clusters());
    auto v = core.inspect_virtual_cluster(*vc);
    return v ? json_reply(*v) : error_reply(v.err());
  }
  if (auto rest = rest_after("/v1/inspect/clusterstatus/physicalcluster"); rest && rest->empty())
    return json_reply(core.inspect_physical_cluster());
  if (auto rest = rest_after("/v1/inspect/clusterstatus"); rest && rest->empty())
    return json_reply(json::object{{"physicalCluster", core.inspect_physical_cluster()},
                                   {"virtualClusters", core.inspect_virtual_clusters()}});
  return error_reply(error::not_found("no inspect API at " + path));
}

// ---- extender verbs ----------------------------------------------------------------------

status ensure_in_core(scheduler_actor* self, const sched_pod& p) {
  if (self->state.in_core.count(p.uid))
    return ok;
  return admit(self, p);
}

filter_reply on_filter(scheduler_actor* self, const filter_request& req) {
  auto& st = self->state;
  filter_reply out;
  if (auto in = ensure_in_core(self, req.pod); !in) {
    out.error = in.err().message;
    return out;
  }
  auto d = st.core->schedule_one(req.pod.uid, req.nodes, now_ms());
  count_decision(d.kind);
  switch (d.kind) {
  case decision_kind::bind:
    out.nodes.push_back(d.node);
    st.extender_decisions[req.pod.uid] = std::move(d);
    return out;
  case decision_kind::preempt:
    for (const auto& v : d.victims)
      if (auto it = st.pods.find(v.uid); it != st.pods.end() && !it->second->spec.node_name.empty())
        out.failed_nodes[it->second->spec.node_name] = "preemptible: " + d.reason;
    st.extender_decisions[req.pod.uid] = std::move(d);
    return out;
  case decision_kind::wait: {
    std::string reason = "Pod is waiting for preemptible or free resource to appear: " + d.reason;
    if (req.nodes.empty())
      out.failed_nodes[st.cfg.scheduler_name] = reason;
    for (const auto& n : req.nodes)
      out.failed_nodes[n] = reason;
    return out;
  }
  }
  return out;
}

preempt_reply on_preempt(scheduler_actor* self, const preempt_request& req) {
  auto& st = self->state;
  preempt_reply out;
  auto it = st.extender_decisions.find(req.pod.uid);
  if (it == st.extender_decisions.end() || it->second.kind != decision_kind::preempt)
    return out;
  for (const auto& v : it->second.victims)
    if (auto p = st.pods.find(v.uid); p != st.pods.end() && !p->second->spec.node_name.empty())
      out.victims[p->second->spec.node_name].push_back(v.uid);
  return out;
}

void on_bind(scheduler_actor* self, caf::response_promise rp, const bind_request& req) {
  auto& st = self->state;
  auto it = st.extender_decisions.find(req.uid);
  if (it == st.extender_decisions.end() || it->second.kind != decision_kind::bind) {
    rp.deliver(bind_reply{400, "pod " + req.ns + "/" + req.name + " has no placement: filter it first"});
    return;
  }
  const auto& d = it->second;
  if (d.node != req.node) {
    rp.deliver(bind_reply{400, "pod " + req.ns + "/" + req.name + " was placed on " + d.node + ", not " + req.node});
    return;
  }
  rp.delegate(cellgroup_for(self, d.group),
              group_bind{d.group, d.pod.ns, d.pod.name, d.pod.uid, d.node, d.leaf_indices, d.annotations});
}

// Runs `serve` now, or once recovery is done.
template <class Reply>
caf::result<Reply> when_ready(scheduler_actor* self, std::function<void(caf::response_promise&)> serve) {
  auto rp = self->make_response_promise();
  if (self->state.ready)
    serve(rp);
  else
    self->state.deferred.push_back([rp, serve]() mutable { serve(rp); });
  return caf::delegated<Reply>();
}

caf::behavior scheduler(scheduler_actor* self, std::shared_ptr<client::client> cli, caf::actor pods_watch,
                        caf::actor nodes_watch, scheduler_actor_config cfg, cellgroup_factory spawn_group,
                        std::shared_ptr<scheduler_core> core, int force_bind_threshold, std::string default_vc) {
  auto& st = self->state;
  st.cli = std::move(cli);
  st.cfg = std::move(cfg);
  st.spawn_group = std::move(spawn_group);
  st.core.emplace(std::move(*core));
  st.force_bind_threshold = force_bind_threshold;
  st.default_vc = std::move(default_vc);
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
  self->set_error_handler([self](caf::error& e) {
    spdlog::warn("scheduler ignored an error message: {}", self->system().render(e));
  });
  self->attach_functor([](const caf::error& reason) { spdlog::info("scheduler stopped: {}", caf::to_string(reason)); });
  auto me = caf::actor_cast<caf::actor>(self);
  self->send(pods_watch, atoms::subscribe_atom::value, watch::index_kind::scheduler_name, st.cfg.scheduler_name, me);
  self->send(nodes_watch, atoms::subscribe_atom::value, watch::index_kind::all, std::string(), me);
  for (const auto& w : {pods_watch, nodes_watch})
    self->request(w, caf::infinite, atoms::synced_atom::value).then([self](caf::ok_atom) {
      if (--self->state.unsynced == 0)
        become_ready(self);
    });
  return {
      [self](const object_event<k8s::pod>& ev) {
        if (self->state.ready)
          apply_pod(self, ev.type, ev.object);
        else if (ev.type == watch::event_type::deleted)
          self->state.pods.erase(ev.object->metadata.uid);
        else
          self->state.pods[ev.object->metadata.uid] = ev.object;
      },
      [self](const object_event<k8s::node>& ev) {
        if (self->state.ready)
          apply_node(self, ev.type, *ev.object);
        else if (ev.type == watch::event_type::deleted)
          self->state.nodes.erase(ev.object->metadata.name);
        else
          self->state.nodes[ev.object->metadata.name] = ev.object;
      },
      [self](atoms::advance_atom) { pass(self); },
      [self](const group_pod_bound& b) {
        if (self->state.in_core.count(b.uid))
          self->state.core->pod_bound(b.uid);
      },
      [self](const group_bind_failed& f) {
        auto& st = self->state;
        st.given_up.insert(f.uid);
        if (auto it = st.pods.find(f.uid); it != st.pods.end()) {
          const auto& m = it->second->metadata;
          post_event(self, {m.namespace_, m.name, m.uid}, "Warning", "FailedScheduling", "binding failed: " + f.reason);
        }
        untrack(self, f.uid);
        queue_pass(self);
      },
      [](const group_released&) {},
      // A cellgroup answers every group_bind (the extender's bind waits on it); direct mode
      // learns the outcome from group_pod_bound / group_bind_failed instead.
      [](const bind_reply&) {},
      [self](const filter_request& req) {
        return when_ready<filter_reply>(self, [self, req](caf::response_promise& rp) { rp.deliver(on_filter(self, req)); });
      },
      [self](const preempt_request& req) {
        return when_ready<preempt_reply>(self,
                                         [self, req](caf::response_promise& rp) { rp.deliver(on_preempt(self, req)); });
      },
      [self](const bind_request& req) {
        return when_ready<bind_reply>(self, [self, req](caf::response_promise& rp) { on_bind(self, rp, req); });
      },
      [self](const inspect_callback& req) {
        auto serve = [self, req] {
          auto answer = answer_inspect(*self->state.core, req.path);
          if (req.done)
            req.done(std::move(answer));
        };
        if (self->state.ready)
          serve();
        else
          self->state.deferred.push_back(serve);
      },
      [self](const inspect_request& req) {
        return when_ready<inspect_reply>(self, [self, req](caf::response_promise& rp) {
          auto answer = answer_inspect(*self->state.core, req.path);
          rp.deliver(inspect_reply{answer.status, std::move(answer.body)});
        });
      },
  };
}

} // namespace

expected<caf::actor> spawn_scheduler(caf::actor_system& sys, std::shared_ptr<client::client> cli,
                                     caf::actor pods_watch, caf::actor nodes_watch, scheduler_actor_config cfg,
                                     cellgroup_factory spawn_group) {
  auto parsed = parse_config(cfg.config_yaml);
  if (!parsed)
    return parsed.err();
  auto core = scheduler_core::load(cfg.config_yaml);
  if (!core)
    return core.err();
  std::string default_vc = cfg.default_virtual_cluster;
  if (default_vc.empty())
    default_vc = parsed->virtual_clusters.size() == 1 && !parsed->virtual_clusters.count("default")
                     ? parsed->virtual_clusters.begin()->first
                     : "default";
  auto shared_core = std::make_shared<scheduler_core>(std::move(*core));
  return sys.spawn(scheduler, std::move(cli), std::move(pods_watch), std::move(nodes_watch), std::move(cfg),
                   std::move(spawn_group), std::move(shared_core), parsed->force_pod_bind_threshold,
                   std::move(default_vc));
}

} // namespace kozmo::scheduler
