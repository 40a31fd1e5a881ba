// Messages of the GPU scheduler: between the scheduler actor and its cellgroup actors, and
// the inspect requests of the HTTP routes.
//
//   anyone ──inspect_request─▶ scheduler ──inspect_reply   (HiveD's /v1/inspect/... GET paths)
//   non-actor ──inspect_callback (anon_send)─▶ scheduler ──calls done(inspect_reply)
//
//   scheduler ──group_bind / group_preempt / group_pod_gone / group_release──▶ cellgroup
//   cellgroup ──group_bind_failed──▶ scheduler
//
// The scheduler answers no inspect before it has recovered the pods already bound (restart
// safety): requests that arrive earlier wait.
#pragma once

#include "messages/local_message.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kozmo {

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
  std::int64_t created_ms = 0; // the pod's creationTimestamp (kozmo_scheduling_latency_seconds); 0: unknown
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
// The group holds no cell any more: the cellgroup actor exits.
struct group_release {
  std::string group;
};

// The bind cannot succeed (pod deleted, recreated, or bound elsewhere by someone else).
struct group_bind_failed {
  std::string group;
  std::string ns;
  std::string name;
  std::string uid;
  std::string reason;
};

// Type names only: these messages never leave the process.
KOZMO_LOCAL_MESSAGE(inspect_request)
KOZMO_LOCAL_MESSAGE(inspect_reply)
KOZMO_LOCAL_MESSAGE(inspect_callback)
KOZMO_LOCAL_MESSAGE(group_bind)
KOZMO_LOCAL_MESSAGE(group_victim)
KOZMO_LOCAL_MESSAGE(group_preempt)
KOZMO_LOCAL_MESSAGE(group_pod_gone)
KOZMO_LOCAL_MESSAGE(group_release)
KOZMO_LOCAL_MESSAGE(group_bind_failed)

} // namespace kozmo
