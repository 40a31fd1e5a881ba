// Phases: what a plugin says of the attempt it runs (plugin_phase, the peer's PhaseInfo), and
// what the task says of itself (task_phase, status.phase). Pure.
//
// Rules (the peer's, kept):
//  1. A plugin answers every round with a phase_info: a phase, a version, a short reason code
//     and a message for users. Failures say whose fault they are (user or system) and whether
//     the attempt's objects must be deleted ("with clean-up").
//  2. Versions: the version starts at 0 in each phase; within a phase it rises by one when the
//     reason changes, so (phase, version) names one distinct situation. `stamp` applies this.
//  3. An Event (and a history entry) is recorded only for a (phase, version) not seen before:
//     a round that finds nothing new writes nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kozmo::tasks {

using time_point = std::chrono::system_clock::time_point;

enum class plugin_phase {
  undefined,
  not_ready,
  waiting_for_resources,
  queued,
  initializing,
  running,
  success,
  retryable_failure,
  permanent_failure,
  waiting_for_cache,
  aborted,
};

enum class error_kind { user, system };

struct phase_info {
  plugin_phase phase = plugin_phase::undefined;
  std::uint32_t version = 0;
  std::string reason;  // a short code: "Scheduling", "ImagePullBackOff", "OOMKilled"
  std::string message; // what happened and what to do
  error_kind kind = error_kind::user;
  bool cleanup = false; // failures: delete what the attempt created
  // When the plugin must look again even if nothing changes (a grace period runs out).
  std::optional<time_point> wake_at;

  bool is_failure() const {
    return phase == plugin_phase::retryable_failure || phase == plugin_phase::permanent_failure;
  }
  bool is_terminal() const { return is_failure() || phase == plugin_phase::success || phase == plugin_phase::aborted; }
};

phase_info queued(std::string reason, std::string message);
phase_info initializing(std::string reason, std::string message);
phase_info running(std::string reason = {}, std::string message = {});
phase_info success(std::string message = {});
phase_info retryable_failure(error_kind kind, std::string code, std::string message, bool cleanup = false);
phase_info permanent_failure(error_kind kind, std::string code, std::string message, bool cleanup = false);

// The task's phase (status.phase).
enum class task_phase {
  queued,
  waiting_for_resources,
  initializing,
  running,
  succeeded,
  failed,
  aborted,
  waiting_for_cache,
};

std::string_view to_string(task_phase p);
std::optional<task_phase> task_phase_from(std::string_view s);
bool is_terminal(task_phase p);

// The task phase an attempt's non-terminal plugin phase shows as.
task_phase shown_as(plugin_phase p);

// Rule 2: the version of `next` given the (phase, version, reason) last recorded.
struct recorded_phase {
  task_phase phase = task_phase::queued;
  std::uint32_t version = 0;
  std::string reason;
  int attempt = 0;
};
// Returns the version `next` gets, and whether it is new (rule 3).
struct stamped {
  std::uint32_t version = 0;
  bool changed = false;
};
stamped stamp(const std::optional<recorded_phase>& last, task_phase phase, const std::string& reason, int attempt);

} // namespace kozmo::tasks
