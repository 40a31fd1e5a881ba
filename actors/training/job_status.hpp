// A training job's status (the peer's JobStatus) and its condition rules.
//
// Condition rules, as the peer applies them (set_condition):
//   1. once Failed=True, no condition changes any more;
//   2. the same status and reason again is a no-op;
//   3. lastTransitionTime changes only when the status changes;
//   4. Running and Restarting replace each other; Succeeded or Failed flips Running to False.
// Reasons are the kind's name followed by the reason: "PyTorchJobRunning".
//
// Kozmo adds three things the peer does not have:
//   - condition "Stuck": pods that cannot start (image pull errors, config errors, a gang
//     that cannot be scheduled); its lastTransitionTime starts the grace period, and it is
//     removed (not set to False) once the pods start;
//   - condition "ReplicaFailure" (as a ReplicaSet has it): the API server refused to create
//     one of the job's pods or services; removed once a create succeeds;
//   - the count of pods deleted and recreated to restart a replica, so that backoffLimit
//     counts them (the peer only counts in-place container restarts). It is kept in the
//     job's annotation keys::recreated_pods, not in status: the peer's CRDs, when
//     installed instead of Kozmo's, would prune a status field they do not declare.
#pragma once

#include "k8s/json/value.hpp"
#include "k8s/model/time.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::training {

using k8s::time_point;

namespace condition_type {
inline constexpr std::string_view created = "Created";
inline constexpr std::string_view running = "Running";
inline constexpr std::string_view restarting = "Restarting";
inline constexpr std::string_view succeeded = "Succeeded";
inline constexpr std::string_view suspended = "Suspended";
inline constexpr std::string_view failed = "Failed";
inline constexpr std::string_view stuck = "Stuck";
inline constexpr std::string_view replica_failure = "ReplicaFailure";
} // namespace condition_type

struct job_condition {
  std::string type;
  std::string status; // "True" / "False"
  std::string reason;
  std::string message;
  std::optional<time_point> last_update_time;
  std::optional<time_point> last_transition_time;
  friend bool operator==(const job_condition&, const job_condition&) = default;
};

struct replica_status {
  int active = 0;
  int succeeded = 0;
  int failed = 0;
  std::string selector; // "training.kubeflow.org/job-name=x,..."
  friend bool operator==(const replica_status&, const replica_status&) = default;
};

struct job_status {
  std::vector<job_condition> conditions;
  std::map<std::string, replica_status> replica_statuses;
  std::optional<time_point> start_time;
  std::optional<time_point> completion_time;
  std::optional<time_point> last_reconcile_time;
  int recreated_pods = 0;
  friend bool operator==(const job_status&, const job_status&) = default;
};

// Reads status from a job's JSON ("status" member of the document); tolerant: a missing or
// mistyped field reads as absent.
job_status status_from_json(const json::value& status);
json::value to_json(const job_status& s);
// `after` as the "status" of a JSON merge patch over `before`: fields `before` had and
// `after` has not (startTime after a suspend, a removed replica type) are null.
json::value status_patch(const job_status& before, const job_status& after);

const job_condition* find_condition(const job_status& s, std::string_view type);
// True when the condition exists with status "True".
bool has_true(const job_status& s, std::string_view type);
inline bool is_failed(const job_status& s) { return has_true(s, condition_type::failed); }
inline bool is_succeeded(const job_status& s) { return has_true(s, condition_type::succeeded); }
inline bool is_finished(const job_status& s) { return is_failed(s) || is_succeeded(s); }

// The job's phase in one word, for kozmo_training_jobs{phase}: Failed, Succeeded, Suspended,
// Restarting, Running, or Created (no condition says more yet, or only Created).
std::string_view job_phase(const job_status& s);

// Removes a condition (Kozmo's Stuck, once pods start): a False entry left at the end of the
// list would show as the job's State in `kubectl get`. Returns true when one was removed.
bool clear_condition(job_status& s, std::string_view type);

// Applies the rules above. Returns true when the conditions changed.
bool set_condition(job_status& s, std::string_view type, bool status, std::string reason, std::string message,
                   time_point now);

} // namespace kozmo::training
