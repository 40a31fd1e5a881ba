// The task controller's Prometheus metrics (k8s/metrics/registry.hpp).
#pragma once

namespace kozmo::tasks {

// kozmo_task_rounds_total: rounds the task actors ran (each a run of the machinery)
void count_round();
// kozmo_tasks_finished_total{outcome="succeeded"|"failed"}: tasks that reached Succeeded or Failed
void count_task_finished(bool succeeded);
// kozmo_task_pods_created_total
void count_pod_created();
// kozmo_task_attempts_failed_total{kind="user"|"system"}: attempts that failed (retried or not)
void count_attempt_failed(bool system);

} // namespace kozmo::tasks
