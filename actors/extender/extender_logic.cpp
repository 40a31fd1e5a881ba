#include "actors/extender/extender_logic.hpp"

#include "actors/scheduler/pod_scheduling_spec.hpp"
#include "actors/scheduler/scheduler_metrics.hpp"

#include <chrono>

namespace kozmo::extender {
namespace {

using scheduler::decision_kind;

std::string pod_key(const k8s::pod& p) { return p.metadata.namespace_ + "/" + p.metadata.name; }

} // namespace

extender_logic::extender_logic(scheduler::scheduler_core core, scheduler::intake_options intake)
    : core_(std::move(core)), intake_(std::move(intake)) {}

void extender_logic::on_node(const k8s::node& node, bool deleted) {
  if (deleted) {
    core_.set_node(node.metadata.name, false);
    core_.remove_node(node.metadata.name);
    return;
  }
  core_.set_node(node.metadata.name, scheduler::node_healthy(node));
}

status extender_logic::on_pod(const k8s::pod& pod, bool deleted) {
  const auto& uid = pod.metadata.uid;
  if (deleted || scheduler::finished(pod)) {
    core_.remove_pod(uid);
    chosen_.erase(uid);
    preempting_.erase(uid);
    pod_nodes_.erase(uid);
    if (deleted) {
      warned_.erase(uid);
      finished_.erase(uid);
    } else {
      finished_.insert(uid);
    }
    return ok;
  }
  if (finished_.count(uid)) return ok;
  if (!pod.spec.node_name.empty()) pod_nodes_[uid] = pod.spec.node_name;
  auto view = scheduler::pod_view_of(pod, intake_);
  if (!view) return ok; // not ours, or a spec error that filter reports to kube-scheduler
  if (!pod.spec.node_name.empty()) {
    if (!core_.group_of(uid).empty()) {
      core_.pod_bound(uid);
      chosen_.erase(uid);
      preempting_.erase(uid);
    } else if (!view->bind_info.empty()) {
      // A pod bound without bind-info was placed by another scheduler: not ours to count.
      if (auto st = core_.recover_pod(*view); !st)
        return error{"pod " + pod_key(pod) + ": cannot recover its GPUs from " + scheduler::bind_info_annotation + ": " +
                     st.err().message};
    }
    return ok;
  }
  // A waiting pod enters the core when kube-scheduler first filters it (admit), not here: by
  // then every bound pod of the first LIST has been recovered, whatever order the LIST had (the
  // core rebuilds a gang from bind-info only when the gang is new to it).
  return ok;
}

status extender_logic::admit(const k8s::pod& pod) {
  if (!core_.group_of(pod.metadata.uid).empty()) return ok;
  auto view = scheduler::pod_view_of(pod, intake_);
  if (!view) return error::bad_request("pod " + pod_key(pod) + ": " + view.err().message);
  view->node.clear(); // kube-scheduler only filters pods that are not bound yet
  if (auto st = core_.add_pod(*view); !st) return error::bad_request("pod " + pod_key(pod) + ": " + st.err().message);
  return ok;
}

filter_outcome extender_logic::filter(const filter_args& args, std::int64_t now_ms) {
  filter_outcome out;
  const auto& pod = args.pod;
  const auto& uid = pod.metadata.uid;
  if (auto st = admit(pod); !st) {
    out.result.error = st.err().message;
    auto& last = warned_[uid];
    if (last != out.result.error) {
      last = out.result.error;
      out.warning = pod_warning{pod.metadata.namespace_, pod.metadata.name, uid, "InvalidSchedulingSpec", last};
    }
    return out;
  }
  auto decision = core_.schedule_one(uid, args.node_names, now_ms);
  scheduler::count_decision(decision.kind);
  switch (decision.kind) {
  case decision_kind::bind:
    out.result.node_names = {decision.node};
    preempting_.erase(uid);
    chosen_[uid] = std::move(decision);
    return out;
  case decision_kind::preempt: {
    std::map<std::string, int> victims_on;
    for (const auto& v : decision.victims)
      if (auto it = pod_nodes_.find(v.uid); it != pod_nodes_.end()) ++victims_on[it->second];
    for (const auto& n : args.node_names)
      out.result.failed_nodes[n] = std::string(waiting_prefix) + decision.reason;
    for (const auto& [n, count] : victims_on)
      out.result.failed_nodes[n] = "Pod is waiting for the preemption of " + std::to_string(count) +
                                   " pod(s) on this node: " + decision.reason;
    preempting_[uid] = std::move(decision);
    return out;
  }
  case decision_kind::wait:
    for (const auto& n : args.node_names) out.result.failed_nodes[n] = std::string(waiting_prefix) + decision.reason;
    return out;
  }
  return out;
}

expected<preempt_result> extender_logic::preempt(const preempt_args& args, std::int64_t now_ms) {
  const auto& uid = args.pod.metadata.uid;
  if (auto st = admit(args.pod); !st) return st.err();
  // As HiveD does, decide again: the cluster may have changed since filter.
  std::vector<std::string> suggested;
  for (const auto& [node, _] : args.node_victims) suggested.push_back(node);
  auto decision = core_.schedule_one(uid, suggested, now_ms);
  preempt_result out;
  if (decision.kind == decision_kind::bind) {
    chosen_[uid] = std::move(decision); // nothing to evict: the next filter binds it
    return out;
  }
  if (decision.kind != decision_kind::preempt) return out;
  for (const auto& v : decision.victims)
    if (auto it = pod_nodes_.find(v.uid); it != pod_nodes_.end())
      out.node_victims[it->second].pod_uids.push_back(v.uid);
  preempting_[uid] = std::move(decision);
  return out;
}

expected<client::binding> extender_logic::bind(const bind_args& args) {
  std::string who = args.pod_namespace + "/" + args.pod_name;
  auto it = chosen_.find(args.pod_uid);
  if (it == chosen_.end())
    return error::bad_request("pod " + who + " has no placement from the GPU scheduler: it must pass filter first");
  const auto& d = it->second;
  if (d.node != args.node)
    return error::bad_request("cannot bind pod " + who + " to node " + args.node +
                              ": the GPU scheduler placed it on node " + d.node);
  return client::binding{args.pod_namespace, args.pod_name, d.node, args.pod_uid,
                         std::map<std::string, std::string>(d.annotations.begin(), d.annotations.end())};
}

void extender_logic::bind_done(const std::string& uid, bool succeeded) {
  if (succeeded) core_.pod_bound(uid);
}

scheduler::inspect_answer extender_logic::inspect(std::string_view path) const {
  return scheduler::answer_inspect(core_, path);
}

} // namespace kozmo::extender
