#include "actors/tasks/task_metrics.hpp"

#include "actors/controller/controller_metrics.hpp"
#include "actors/tasks/phase.hpp"

namespace kozmo::tasks {
namespace {

struct task_metrics {
  metrics::counter rounds =
      metrics::counters("kozmo_task_rounds_total", "Rounds of the task machinery run by the task actors").series({});
  metrics::outcome_counters finished{"kozmo_tasks_finished_total",
                                     "TaskExecutions that reached Succeeded or Failed, by outcome"};
  metrics::counter pods_created =
      metrics::counters("kozmo_task_pods_created_total", "Pods created for task attempts").series({});
  metrics::counter user_failures =
      metrics::counters("kozmo_task_attempts_failed_total", "Task attempts that failed, by whose failure it was")
          .series({{"kind", "user"}});
  metrics::counter system_failures =
      metrics::counters("kozmo_task_attempts_failed_total", "Task attempts that failed, by whose failure it was")
          .series({{"kind", "system"}});
  metrics::gauge_family by_phase =
      metrics::gauges("kozmo_task_executions", "TaskExecutions by phase (status.phase; Pending: none written yet)");

  task_metrics() {
    // Every phase at zero from the start, so a dashboard's sum never reads "no data".
    controller::series_for(controller_name); // the controller's series, at zero too
    by_phase.series({{"phase", pending_phase}});
    for (auto p : {task_phase::queued, task_phase::waiting_for_resources, task_phase::initializing,
                   task_phase::running, task_phase::succeeded, task_phase::failed, task_phase::aborted,
                   task_phase::waiting_for_cache})
      by_phase.series({{"phase", to_string(p)}});
  }
};

task_metrics& get() {
  static task_metrics* m = new task_metrics;
  return *m;
}

// Registered at start-up, so the first scrape already lists them.
[[maybe_unused]] const bool registered = (get(), true);

} // namespace

void count_round() { get().rounds.inc(); }
void count_task_finished(bool succeeded) { get().finished.count(succeeded); }
void count_pod_created() { get().pods_created.inc(); }
void count_attempt_failed(bool system) { (system ? get().system_failures : get().user_failures).inc(); }

void count_task_in(metrics::gauge_slot& slot, std::optional<task_phase> phase) {
  slot.move_to(get().by_phase, {{"phase", phase ? to_string(*phase) : pending_phase}});
}

} // namespace kozmo::tasks
