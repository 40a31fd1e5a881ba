// A plan: the API writes one reconcile pass decided, in the order they must happen. Pure data;
// the executor (executor_actor.hpp) carries it out and answers with a plan_outcome.
//
// Rules the executor keeps (a pure core may rely on them):
//  1. Steps run in order. Consecutive creates go out together, so do consecutive deletes
//     (distinct objects: their order does not matter); any other step waits for everything
//     before it and is alone on the wire.
//  2. The first failure drops the rest of the plan; the outcome says which step failed and
//     why. A level-based caller simply plans again later (after a back-off).
//  3. A 409 Conflict (a stale resourceVersion, an object that already exists) makes the
//     executor re-read the object: the outcome carries it as it is now, so the caller's view
//     catches up before the next plan.
//  4. A delete that finds nothing (404) succeeded: the object is gone, as asked.
//  5. A guard re-reads an owner (GET, never a cache) and goes on only if it still has `uid`
//     and no deletionTimestamp. Otherwise the plan stops there: quietly (outcome `stopped`)
//     unless `fail_if_gone`, which makes it a failure.
//  6. An event step goes to the event recorder once every step before it has succeeded, and
//     the steps after it wait until the recorder has handed it to the client: an Event is
//     queued before the status that follows it. (Events wait in the client's last lane, so
//     a busy client writes that status first, as with Kubernetes' own recorder.) An Event
//     that cannot be written never fails the plan.
#pragma once

#include "actors/controller/event_note.hpp"
#include "k8s/client/resource.hpp"
#include "k8s/json/value.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kozmo::controller {

// POST `object` to the collection of `where` (its name is ignored).
struct create_step {
  client::resource_ref where;
  json::value object;
};
// PATCH `ref` (ref.subresource "status" for the status subresource).
struct patch_step {
  client::resource_ref ref;
  client::patch_type type = client::patch_type::merge;
  json::value patch;
  // A merge patch whose metadata.resourceVersion precondition is the resourceVersion that the
  // last earlier step of this plan on the same object answered with (a controller that changes
  // an object's metadata, then its status, in one plan). Without such a step it goes as written.
  bool chain_resource_version = false;
};
// DELETE `ref`; `uid` (when set) is a precondition, so a recreated namesake is never hit.
struct delete_step {
  client::resource_ref ref;
  std::string uid;
  std::string propagation; // "Background", "Foreground", "Orphan" or "" (the server's default)
};
// Re-read `owner` and go on only while it is the object with `uid` and is not being deleted.
struct guard_step {
  client::resource_ref owner;
  std::string uid;
  bool fail_if_gone = false;
  std::string what; // for the failure message: "adopt pods job-worker-0"
};
struct event_step {
  event_note note;
};

using step = std::variant<create_step, patch_step, delete_step, guard_step, event_step>;

struct plan {
  std::vector<step> steps;
  // The plan ends its object's work (a task's last status, nothing created): its calls wait in
  // the client's lane::closing, before the other plans' background writes. A write that ends a
  // task (a cache hit's only one) then does not queue behind the writes that start others,
  // which have seconds of running ahead of them anyway.
  bool closing = false;
};

struct plan_outcome {
  enum class result { done, failed, stopped };
  result what = result::done;
  // The plan itself, handed back, so the caller need not keep a copy while it runs.
  controller::plan plan;
  // Per step, the API's answer when the call succeeded (the created / patched object; a
  // delete's answer; empty for guards and events). Steps after a failure have none.
  std::vector<std::optional<json::value>> answers;
  // failed: which step, the message ("create pods job-worker-0: <server message>") and the
  // HTTP status (0: no answer). On 409, `reread` is the object as the server has it now
  // (when the re-read worked).
  std::size_t failed_step = 0;
  std::string failure;
  std::string message; // the failure's own words (the server's message), without the step
  int code = 0;
  std::optional<json::value> reread;
};

// "create pods job-worker-0", "patch pytorchjobs/status job", "delete services job-worker-0".
std::string describe(const step& s);

// The resource a step writes or reads ("pods", "pytorchjobs"; "" for an event).
std::string resource_of(const step& s);

// Whether two references name the same object (its subresource aside).
bool same_object(const client::resource_ref& a, const client::resource_ref& b);

// The plan failed because `object` itself is gone: a write to it (or its status) answered 404.
// The caller stops writing rather than retrying: the watch's delete follows.
bool object_gone(const plan_outcome& out, const client::resource_ref& object);

} // namespace kozmo::controller
