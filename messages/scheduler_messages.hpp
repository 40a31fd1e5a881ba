// Messages of the GPU scheduler: between the scheduler actor, its cellgroup actors and the
// extender (kube-scheduler mode). Every request is a plain struct answered with a plain struct,
// so a caller writes `self->request(scheduler, timeout, filter_request{...}).then(
// [](const filter_reply&) {...})` and needs no atom.
//
//   extender ──filter_request──▶ scheduler ──filter_reply
//   extender ──preempt_request─▶ scheduler ──preempt_reply
//   extender ──bind_request────▶ scheduler ──(delegated)──▶ cellgroup ──bind_reply
//   anyone   ──inspect_request─▶ scheduler ──inspect_reply   (HiveD's /v1/inspect/... GET paths)
//   non-actor ──inspect_callback (anon_send)─▶ scheduler ──calls done(inspect_reply)
//
//   scheduler ──group_bind / group_preempt / group_pod_gone / group_release──▶ cellgroup
//   cellgroup ──group_pod_bound / group_bind_failed / group_released──▶ scheduler
//
// The scheduler answers nothing before it has recovered the pods already bound (restart
// safety): requests that arrive earlier wait in its mailbox.
#pragma once

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kozmo {

// The parts of a pod the scheduler reads (the extender decodes them from ExtenderArgs.Pod).
struct sched_pod {
  std::string ns;
  std::string name;
  std::string uid;
  std::map<std::string, std::string> annotations;
  std::string node;            // spec.nodeName; empty while waiting
  std::int64_t created_ms = 0; // metadata.creationTimestamp in ms since the epoch
  int gpu_request = 0;         // sum of nvidia.com/gpu limits: the leafCellNumber when no spec says it
};

// --- extender verbs ---------------------------------------------------------------------

// kube-scheduler's filter: may this pod go to one of `nodes`?
struct filter_request {
  sched_pod pod;
  std::vector<std::string> nodes; // ExtenderArgs.NodeNames (nodeCacheCapable)
};
// `nodes`: where it may go (one node when placed). `failed_nodes`: node -> reason (the reason
// for every node when the pod waits). `error`: a user error (HTTP 400 / ExtenderFilterResult.Error).
struct filter_reply {
  std::vector<std::string> nodes;
  std::map<std::string, std::string> failed_nodes;
  std::string error;
};

// kube-scheduler's preempt: which pods must go so that this pod fits?
struct preempt_request {
  sched_pod pod;
  std::vector<std::string> nodes; // candidate nodes (NodeNameToMetaVictims keys)
};
// Victim pod uids per node; empty when no preemption helps.
struct preempt_reply {
  std::map<std::string, std::vector<std::string>> victims; // node -> uids
  std::string error;
};

// kube-scheduler's bind: `node` must be the node chosen by the filter.
struct bind_request {
  std::string ns;
  std::string name;
  std::string uid;
  std::string node;
};
// code 0: bound. Otherwise an HTTP status (400 wrong node / unknown pod, 500 bind failed).
struct bind_reply {
  int code = 0;
  std::string error;
};

// GET /v1/inspect/... : `path` is the request path (query ignored).
struct inspect_request {
  std::string path;
};
// `status` is the HTTP status, `body` the JSON text (HiveD's {code, message} on errors).
struct inspect_reply {
  int status = 200;
  std::string body;
};

// The same for callers outside the actor system (an HTTP handler thread): send it with
// caf::anon_send; the scheduler calls `done` (on its own thread) with the answer.
struct inspect_callback {
  std::string path;
  std::function<void(inspect_reply)> done;
};

// --- scheduler <-> cellgroup ------------------------------------------------------------

// Bind `pod` to `node` writing `annotations` (bind-info, leaf-cell isolation) with the binding.
struct group_bind {
  std::string group;
  std::string ns;
  std::string name;
  std::string uid;
  std::string node;
  std::vector<int> leaf_indices;
  std::map<std::string, std::string> annotations;
};

// Delete `victims` (ns/name/uid triples) so that `uid`'s group can be placed.
struct group_victim {
  std::string ns;
  std::string name;
  std::string uid;
};
struct group_preempt {
  std::string group;
  std::string ns;
  std::string name;
  std::string uid;
  std::vector<group_victim> victims;
  std::string reason;
};

// The pod is gone (deleted, finished or no longer the group's): stop working on it.
struct group_pod_gone {
  std::string uid;
};
// The group holds no cell any more: the cellgroup actor answers group_released and exits.
struct group_release {
  std::string group;
};

struct group_pod_bound {
  std::string group;
  std::string uid;
  std::string node;
};
// The bind cannot succeed (pod deleted, recreated, or bound elsewhere by someone else).
struct group_bind_failed {
  std::string group;
  std::string uid;
  std::string reason;
};
struct group_released {
  std::string group;
};

// Type names only: these messages never leave the process.
#define KOZMO_SCHEDULER_MESSAGE(type)                                                                                \
  template <class Inspector>                                                                                         \
  typename Inspector::result_type inspect(Inspector& f, type& x) {                                                   \
    (void)x;                                                                                                         \
    return f(caf::meta::type_name(#type));                                                                           \
  }
KOZMO_SCHEDULER_MESSAGE(sched_pod)
KOZMO_SCHEDULER_MESSAGE(filter_request)
KOZMO_SCHEDULER_MESSAGE(filter_reply)
KOZMO_SCHEDULER_MESSAGE(preempt_request)
KOZMO_SCHEDULER_MESSAGE(preempt_reply)
KOZMO_SCHEDULER_MESSAGE(bind_request)
KOZMO_SCHEDULER_MESSAGE(bind_reply)
KOZMO_SCHEDULER_MESSAGE(inspect_request)
KOZMO_SCHEDULER_MESSAGE(inspect_reply)
KOZMO_SCHEDULER_MESSAGE(inspect_callback)
KOZMO_SCHEDULER_MESSAGE(group_bind)
KOZMO_SCHEDULER_MESSAGE(group_victim)
KOZMO_SCHEDULER_MESSAGE(group_preempt)
KOZMO_SCHEDULER_MESSAGE(group_pod_gone)
KOZMO_SCHEDULER_MESSAGE(group_release)
KOZMO_SCHEDULER_MESSAGE(group_pod_bound)
KOZMO_SCHEDULER_MESSAGE(group_bind_failed)
KOZMO_SCHEDULER_MESSAGE(group_released)
#undef KOZMO_SCHEDULER_MESSAGE

} // namespace kozmo
