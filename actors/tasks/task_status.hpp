// A TaskExecution's status: what the machinery records between rounds and what users read
// (`kubectl get tx` shows phase, attempt and reason). Pure: read from and written to JSON.
//
//   status:
//     phase: Running            phaseVersion: 1        attempt: 0        systemFailures: 0
//     reason: ImagePullBackOff  message: "..."
//     startTime / completionTime / lastTransitionTime
//     pool: {name, held}         the ResourcePool token, while the task holds it
//     attempts: [{attempt, pod, phase, reason, message, interruptible, startTime, endTime}]
//     history:  [{phase, version, attempt, reason, time}]    the last `history_limit` entries
//     pluginState: {version, ...}                             the plugin's own, between rounds
//     cache: {key, result, source, reserved, overwrite}      spec.cache's bookkeeping
//     outputs: URI                                            where the task's outputs are
//     firstAttempt: N         the attempt this run started at (0; later after a cache overwrite)
#pragma once

#include "actors/tasks/phase.hpp"
#include "k8s/json/value.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kozmo::tasks {

inline constexpr std::size_t history_limit = 20;

struct attempt_record {
  int attempt = 0;
  std::string pod; // what the attempt created (a pod's name)
  std::string phase; // "Running", "Failed", ...
  std::string reason;
  std::string message;
  bool interruptible = false;
  std::optional<time_point> start_time;
  std::optional<time_point> end_time;
  std::string job; // a training task's job ("PyTorchJob/<name>")
  friend bool operator==(const attempt_record&, const attempt_record&) = default;
};

struct history_entry {
  task_phase phase = task_phase::queued;
  std::uint32_t version = 0;
  int attempt = 0;
  std::string reason;
  time_point time;
  friend bool operator==(const history_entry&, const history_entry&) = default;
};

// spec.cache's bookkeeping (cache.hpp).
struct cache_status {
  std::string key;
  // "": not decided yet; "Hit": completed from stored outputs; "Miss": computing; "Overwrite":
  // recomputing on kozmo.io/cache-overwrite; "Populated": computed and stored.
  std::string result;
  std::string source;    // Hit: "namespace/name" of the task that computed the outputs
  bool reserved = false; // serializable: this task holds the key's reservation
  std::string overwrite; // the kozmo.io/cache-overwrite value already honoured
  bool empty() const { return key.empty() && result.empty() && !reserved && overwrite.empty(); }
  friend bool operator==(const cache_status&, const cache_status&) = default;
};

struct task_status {
  std::optional<task_phase> phase; // nullopt: never handled
  std::uint32_t phase_version = 0;
  int attempt = 0;
  int system_failures = 0;
  std::string reason;
  std::string message;
  std::optional<time_point> start_time;
  std::optional<time_point> completion_time;
  std::optional<time_point> last_transition_time;
  std::string pool;       // the ResourcePool the token is (or was) asked from
  bool pool_held = false; // the token is held: the pool counts it, also after a restart
  std::optional<time_point> waiting_since; // first asked for the token
  std::vector<attempt_record> attempts;
  std::vector<history_entry> history;
  json::value plugin_state; // {version: N, ...}; null when none
  cache_status cache;
  std::string outputs; // where the outputs are (spec.outputPrefix, or a cache hit's source's)
  int first_attempt = 0; // attempts before it belong to an earlier run (a cache overwrite)

  friend bool operator==(const task_status&, const task_status&) = default;

  const attempt_record* current_attempt() const;
  attempt_record* current_attempt();
  std::optional<recorded_phase> last_recorded() const;
};

task_status status_from_json(const json::value& status);
json::value status_to_json(const task_status& s);

} // namespace kozmo::tasks
