// A TrainJob's status: conditions (metav1.Condition) and one jobsStatus entry per replicated job.
//
// Condition rules:
//   1. A condition is set in place: the same status and reason again changes nothing; the
//      lastTransitionTime moves only when the status changes; a new type goes to the end of the
//      list, and False conditions move before the True ones, so `kubectl get trainjob`'s STATE
//      (the last condition's type) is the newest condition that holds: Created while pods wait,
//      Running, then Complete or Failed (never "Running" for a job whose Running is False).
//   2. Complete or Failed True is final: nothing is created for the job any more (the peer's
//      re-creation loop after pods are cleaned up cannot happen).
//   3. Kozmo adds `Created` and `Running` beside the peer's Suspended, Complete and Failed:
//      Running False says why the trainer's pods wait (reason Pending, demystified message),
//      Created False why they could not be created.
#pragma once

#include "k8s/json/value.hpp"
#include "k8s/model/time.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::trainer {

using k8s::time_point;

namespace condition {
inline constexpr std::string_view created = "Created";
inline constexpr std::string_view running = "Running";
inline constexpr std::string_view suspended = "Suspended";
inline constexpr std::string_view complete = "Complete";
inline constexpr std::string_view failed = "Failed";
} // namespace condition

struct train_condition {
  std::string type;
  std::string status; // "True" / "False"
  std::string reason;
  std::string message;
  std::optional<time_point> last_transition_time;
  friend bool operator==(const train_condition&, const train_condition&) = default;
};

struct jobs_status {
  std::string name;
  int ready = 0;
  int succeeded = 0;
  int failed = 0;
  int active = 0;
  int suspended = 0;
  friend bool operator==(const jobs_status&, const jobs_status&) = default;
};

struct train_status {
  std::vector<train_condition> conditions;
  std::vector<jobs_status> jobs;
  friend bool operator==(const train_status&, const train_status&) = default;
};

train_status status_from_json(const json::value* status);
json::value to_json(const train_status& s);

const train_condition* find_condition(const train_status& s, std::string_view type);
bool has_true(const train_status& s, std::string_view type);
inline bool is_finished(const train_status& s) {
  return has_true(s, condition::complete) || has_true(s, condition::failed);
}
// Rule 1. Returns true when the list changed.
bool set_condition(train_status& s, std::string_view type, bool status, std::string reason, std::string message,
                   time_point now);

// The job's phase in one word (kozmo status, metrics): Complete, Failed, Suspended, Running,
// Pending (created, not all running) or Created.
std::string_view phase(const train_status& s);

} // namespace kozmo::trainer
