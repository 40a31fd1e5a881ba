// The scheduler actor's intake: pods and nodes from the watches into the core. Our waiting pods
// are admitted, our bound ones recovered from their bind-info, other schedulers' pods counted
// as GPUs held on their nodes, and nodes reported healthy or not.
#include "actors/scheduler/scheduler_actor_state.hpp"

#include "actors/scheduler/scheduler_metrics.hpp"

#include <spdlog/spdlog.h>

namespace kozmo::scheduler::shell {

void admit(scheduler_actor* self, const k8s::pod& p) {
  auto& st = self->state;
  pod_ref ref{p.metadata.namespace_, p.metadata.name, p.metadata.uid};
  auto view = pod_view_of(p, st.intake);
  if (!view)
    return st.report->bad_spec(ref, view.err().message);
  if (auto added = st.core->add_pod(*view); !added)
    return st.report->bad_spec(ref, added.err().message);
  st.report->forget(ref.uid);
  st.created_ms[ref.uid] = view->created_ms;
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

// A change of what other schedulers' pods hold on a node.
void shift_other_gpus(scheduler_actor* self, const std::vector<other_pods::change>& changes) {
  auto& core = *self->state.core;
  for (const auto& [node, delta] : changes)
    if (core.set_other_pods_gpus(node, core.other_pods_gpus(node) + delta))
      queue_pass(self); // GPUs freed may let a waiting pod in; taken ones change wait reasons
}

void apply_pod(scheduler_actor* self, watch::event_type type, const pod_ptr& pod) {
  auto& st = self->state;
  const auto& p = *pod;
  const auto& uid = p.metadata.uid;
  if (p.spec.scheduler_name != st.cfg.scheduler_name)
    return shift_other_gpus(self, st.others->apply(type, p));
  if (type == watch::event_type::deleted || finished(p)) {
    st.report->forget(uid);
    st.given_up.erase(uid);
    if (st.follow)
      st.follow->pod_gone(uid);
    return untrack(self, uid);
  }
  if (st.follow)
    st.follow->pod_seen(pod);
  if (!st.core->group_of(uid).empty()) {
    if (!p.spec.node_name.empty()) {
      if (st.follow)
        st.follow->bind_over(uid);
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

void apply_node(scheduler_actor* self, watch::event_type type, const node_ptr& node) {
  if (self->state.follow)
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

} // namespace kozmo::scheduler::shell
