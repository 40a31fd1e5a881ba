// What the extender decides, without I/O: it owns a scheduler_core, is fed pods and nodes,
// and turns kube-scheduler's filter / preempt / bind calls into the core's decisions and back.
// The extender actor calls it serially (one actor, one core); tests call it directly. Pods and
// nodes are read by pod_intake.hpp and inspect is answered by inspect_api.hpp, as in direct
// mode: both front doors accept the same pods and answer the same JSON.
//
// Rules (HiveD's extender behaviour):
//  1. filter: a pod the core has not seen yet is added from the request itself (the pods watch
//     may lag behind kube-scheduler). Then schedule_one with the request's node names:
//       bind    -> NodeNames [node]; the decision is kept for bind
//       preempt -> FailedNodes naming every suggested node, the nodes with victims saying so
//                  (kube-scheduler then calls preempt)
//       wait    -> FailedNodes: every suggested node "Pod is waiting for preemptible or free
//                  resource to appear: <reason>"
//     A scheduling spec that cannot be read or does not match the configuration -> the result's
//     Error carries the message, and a Warning event for the pod is asked for (once per message).
//  2. preempt: the victims' UIDs per node from the core's preempt decision.
//  3. bind: the node must be the one decided in filter (else a 400 error); the answer is the
//     binding to POST, with the bind-info and leaf-cell-isolation annotations.
//  4. Pods bound with a bind-info annotation are recovered into the core (restart safety); call
//     on_pod for every pod of the first LIST before the first filter. Waiting pods enter the
//     core on their first filter (rule 1), so recovery never meets a half-known gang.
#pragma once

#include "actors/extender/extender_backend.hpp"
#include "actors/extender/extender_codec.hpp"
#include "actors/scheduler/pod_intake.hpp"
#include "actors/scheduler/scheduler_core.hpp"
#include "k8s/client/resource.hpp"
#include "k8s/model/node.hpp"
#include "k8s/model/pod.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace kozmo::extender {

// A Warning Event the caller should post about a pod.
struct pod_warning {
  std::string ns;
  std::string name;
  std::string uid;
  std::string reason;
  std::string message;
};

struct filter_outcome {
  filter_result result;
  std::optional<pod_warning> warning;
};

// The message kube-scheduler shows for a pod that waits (HiveD's wording).
inline constexpr const char* waiting_prefix = "Pod is waiting for preemptible or free resource to appear: ";

class extender_logic {
public:
  explicit extender_logic(scheduler::scheduler_core core, scheduler::intake_options intake = {});

  // Watch events. `deleted` for a DELETED event. on_pod's error says why a bound pod's
  // bind-info could not be recovered (its GPUs are then not counted as used: worth a log line).
  void on_node(const k8s::node& node, bool deleted);
  status on_pod(const k8s::pod& pod, bool deleted);

  filter_outcome filter(const filter_args& args, std::int64_t now_ms);
  expected<preempt_result> preempt(const preempt_args& args, std::int64_t now_ms);
  // The binding to write, or a 400 error (unknown pod, node other than the one decided).
  expected<client::binding> bind(const bind_args& args);
  // The binding write's outcome: success marks the pod bound in the core.
  void bind_done(const std::string& uid, bool succeeded);
  scheduler::inspect_answer inspect(std::string_view path) const;
  // What the core noticed since the last call (lazy preemptions, downgrades after a
  // reconfiguration): the caller logs them and posts an Event on each pod.
  std::vector<scheduler::group_notice> take_notices() { return core_.take_notices(); }

  const scheduler::scheduler_core& core() const { return core_; }

private:
  // Adds a pod the core does not know; an error when its spec is unreadable or refused.
  status admit(const k8s::pod& pod);

  scheduler::scheduler_core core_;
  scheduler::intake_options intake_;
  std::map<std::string, scheduler::pod_decision> chosen_;   // uid -> bind decision from filter
  std::map<std::string, scheduler::pod_decision> preempting_; // uid -> preempt decision
  std::map<std::string, std::string> warned_;                // uid -> last warning posted
  std::set<std::string> finished_;                           // uids removed because they ended
  std::map<std::string, std::string> pod_nodes_;             // uid -> node, for victims' nodes
};

} // namespace kozmo::extender
