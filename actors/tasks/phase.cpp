#include "actors/tasks/phase.hpp"

namespace kozmo::tasks {
namespace {

phase_info make(plugin_phase p, std::string reason, std::string message) {
  phase_info i;
  i.phase = p;
  i.reason = std::move(reason);
  i.message = std::move(message);
  return i;
}

} // namespace

phase_info queued(std::string reason, std::string message) {
  return make(plugin_phase::queued, std::move(reason), std::move(message));
}
phase_info initializing(std::string reason, std::string message) {
  return make(plugin_phase::initializing, std::move(reason), std::move(message));
}
phase_info running(std::string reason, std::string message) {
  return make(plugin_phase::running, std::move(reason), std::move(message));
}
phase_info success(std::string message) { return make(plugin_phase::success, "", std::move(message)); }

phase_info retryable_failure(error_kind kind, std::string code, std::string message, bool cleanup) {
  auto i = make(plugin_phase::retryable_failure, std::move(code), std::move(message));
  i.kind = kind;
  i.cleanup = cleanup;
  return i;
}

phase_info permanent_failure(error_kind kind, std::string code, std::string message, bool cleanup) {
  auto i = make(plugin_phase::permanent_failure, std::move(code), std::move(message));
  i.kind = kind;
  i.cleanup = cleanup;
  return i;
}

std::string_view to_string(task_phase p) {
  switch (p) {
  case task_phase::queued: return "Queued";
  case task_phase::waiting_for_resources: return "WaitingForResources";
  case task_phase::initializing: return "Initializing";
  case task_phase::running: return "Running";
  case task_phase::succeeded: return "Succeeded";
  case task_phase::failed: return "Failed";
  case task_phase::aborted: return "Aborted";
  case task_phase::waiting_for_cache: return "WaitingForCache";
  }
  return "Queued";
}

std::optional<task_phase> task_phase_from(std::string_view s) {
  for (auto p : {task_phase::queued, task_phase::waiting_for_resources, task_phase::initializing, task_phase::running,
                 task_phase::succeeded, task_phase::failed, task_phase::aborted, task_phase::waiting_for_cache})
    if (to_string(p) == s)
      return p;
  return std::nullopt;
}

bool is_terminal(task_phase p) {
  return p == task_phase::succeeded || p == task_phase::failed || p == task_phase::aborted;
}

task_phase shown_as(plugin_phase p) {
  switch (p) {
  case plugin_phase::waiting_for_resources: return task_phase::waiting_for_resources;
  case plugin_phase::initializing: return task_phase::initializing;
  case plugin_phase::running: return task_phase::running;
  case plugin_phase::success: return task_phase::succeeded;
  case plugin_phase::permanent_failure: return task_phase::failed;
  case plugin_phase::aborted: return task_phase::aborted;
  case plugin_phase::waiting_for_cache: return task_phase::waiting_for_cache;
  default: return task_phase::queued;
  }
}

stamped stamp(const std::optional<recorded_phase>& last, task_phase phase, const std::string& reason, int attempt) {
  if (!last || last->phase != phase)
    return {0, true};
  if (last->reason == reason && last->attempt == attempt)
    return {last->version, false};
  return {last->version + 1, true};
}

} // namespace kozmo::tasks
