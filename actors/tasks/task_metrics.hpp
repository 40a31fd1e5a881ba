// The task controller's Prometheus metrics (k8s/metrics/registry.hpp).
#pragma once

#include "actors/tasks/phase.hpp"
#include "k8s/metrics/registry.hpp"

#include <optional>
#include <string_view>

namespace kozmo::tasks {

// kozmo_task_rounds_total: rounds the task actors ran (each a run of the machinery)
void count_round();
// kozmo_tasks_finished_total{outcome="succeeded"|"failed"}: tasks that reached Succeeded or Failed
void count_task_finished(bool succeeded);
// kozmo_task_pods_created_total
void count_pod_created();
// kozmo_task_attempts_failed_total{kind="user"|"system"}: attempts that failed (retried or not)
void count_attempt_failed(bool system);
// kozmo_task_executions{phase}: the task's actor counts its task in its status.phase ("Pending"
// while none is written); the slot leaves the count when the actor stops.
inline constexpr std::string_view pending_phase = "Pending";
// The task controller's name in controller_runtime_* and workqueue_* metrics.
inline constexpr const char* controller_name = "taskexecution";
void count_task_in(metrics::gauge_slot& slot, std::optional<task_phase> phase);

} // namespace kozmo::tasks
