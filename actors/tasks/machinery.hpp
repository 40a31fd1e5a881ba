// The task machinery: one round of a TaskExecution. Given the task as last seen, its pods, what
// the resource manager and the pod template store last answered, and the time, it decides the
// task's status, what to create and delete, which Events to record, what to ask the resource
// manager, and when to look again. Pure: no CAF, no I/O, no clock (the world carries `now`).
//
// Rules:
//  1. Level-based: a round reads only the world; running it twice on the same world decides
//     the same thing, and a round that finds nothing new asks for nothing.
//  2. A task whose spec is invalid fails at once (reason InvalidSpec, the message names the
//     field); nothing is created.
//  3. A task naming a ResourcePool holds one token of it from before its first pod is created
//     until it ends: the status says `pool.held` before the pod is asked for (the plan writes
//     the status first), so a restarted resource manager can count it. The token is given back
//     on every terminal phase and on delete.
//  4. Attempts: user failures are retried up to spec.retries, system failures up to the
//     platform's max-system-failures, counted apart (status.systemFailures); a permanent failure
//     ends the task. Each attempt is a fresh pod named after it; the round that ends an attempt
//     starts the next (an AttemptFailed Event says why), and its status names the next attempt
//     before its pod is asked for, so no attempt is started twice.
//  5. spec.timeout bounds each attempt from its start: past it the attempt fails (Timeout,
//     a user error, retried like one) and its pod is deleted.
//  6. Phases and versions follow phase.hpp; every new (phase, version) is an Event and a
//     history entry (the last 20 are kept).
//  7. A task being deleted is aborted: its pods are deleted, its token released, its phase set
//     to Aborted, and then the finalizer (added by the first round) is removed. A task that has
//     ended and let go of everything loses its finalizer too, so deleting it needs no
//     controller.
//  8. When the task ends, pods of earlier attempts are deleted; the last attempt's pod stays
//     (kubectl logs, describe) until the task is deleted, unless it still runs (a pod task's
//     sidecars), in which case it is deleted. Other objects (a training job) are treated alike:
//     earlier attempts' are deleted, the last one's stays. Pods another object controls (a
//     job's) are that object's to delete, never the machinery's.
//  9. spec.cache (cache.hpp): before anything is held or created, the cache store is asked
//     (lookup; `reserve` when serializable). Stored outputs complete the task at once
//     (Succeeded, reason CacheHit, no pod, no finalizer). Serializable: the task computes only
//     while it holds the key's reservation, extended every heartbeat; while another task holds
//     it, the task waits (WaitingForCache) and asks again when told the entry changed, at every
//     heartbeat and when the reservation expires. A success stores the outputs (releasing the
//     reservation); a final failure or a delete releases it, so a waiting task takes over. A
//     store that cannot be read is a miss (a Warning Event), never a failure. The annotation
//     kozmo.io/cache-overwrite=true skips the lookup, and on a Succeeded task starts a new run
//     (attempts counted from status.firstAttempt) whose outputs replace the stored ones.
#pragma once

#include "actors/tasks/cache.hpp"
#include "actors/tasks/plugin.hpp"
#include "actors/tasks/task_status.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kozmo::tasks {

// What the resource manager last said about this task's token.
struct pool_grant {
  enum class state { unasked, granted, waiting };
  state what = state::unasked;
  bool no_pool = false; // waiting because the pool does not exist
  std::string message;
};

// What the pod template store last said.
struct template_answer {
  std::string name;                 // the template asked for ("" = not asked)
  std::optional<json::value> found; // nullopt: it does not exist
};

// What the cache store last answered for this task.
struct cache_answer {
  bool known = false; // an answer is in hand (false: nothing asked yet, or told to ask again)
  std::string key;
  std::optional<cache_entry> entry; // the key's entry after the op (nullopt: none stored)
  time_point at;                    // when it was answered
  std::string error;                // the store could not be read ("" when it was)
};

// A question for the cache store. The first one of a task carries no key: the store derives it
// from the signature and the inputs' content digests.
struct cache_ask {
  cache_op op = cache_op::lookup;
  std::string key;
  std::string signature;
  std::map<std::string, std::string> inputs; // name → URI
  std::string owner;
  bool overwrite = false;
  cache_outputs outputs; // store
};

struct task_world {
  const k8s::custom_object* task = nullptr;
  // The task's status as decoded from task->document (a caller that keeps it decoded passes it;
  // null: decoded here).
  const task_status* status = nullptr;
  std::vector<const k8s::pod*> pods; // the task's pods, every attempt (a training job's too)
  std::vector<owned_object> owned;   // the task's other objects (training jobs)
  const platform_config* config = nullptr;
  const plugin_registry* plugins = nullptr;
  pool_grant grant;
  template_answer templ;
  cache_answer cache;
  bool cache_asking = false; // a question to the cache store is out: its answer brings a round
  time_point now;
};

struct task_event {
  std::string type; // "Normal" or "Warning"
  std::string reason;
  std::string message;
};

enum class finalizer_change { none, add, remove };
enum class pool_action { none, acquire, release };

struct task_round {
  std::optional<task_status> status; // the new status, when it changed
  std::vector<create_object> creates;
  std::vector<delete_object> deletes;
  std::vector<task_event> events;
  finalizer_change finalizer = finalizer_change::none;
  pool_action pool = pool_action::none;
  std::string pool_name;
  std::string need_template; // ask the store for this template, then run again
  std::vector<cache_ask> cache; // questions for the cache store, in order
  std::optional<time_point> wake_at;
};

task_round run_round(const task_world& world);

// Whether the next attempt of an interruptible task may run on interruptible nodes (the peer's
// interruptible-failure-threshold, counted in system failures; see platform_config.hpp).
bool attempt_interruptible(const task_spec& spec, const platform_config& config, int system_failures);

// A pod that has ended (Succeeded or Failed).
inline bool pod_finished(const k8s::pod& pod) { return pod.status.phase == "Succeeded" || pod.status.phase == "Failed"; }

// The pods of one attempt, by the kozmo.io/task-attempt label.
std::vector<const k8s::pod*> pods_of_attempt(const std::vector<const k8s::pod*>& pods, int attempt);

} // namespace kozmo::tasks
