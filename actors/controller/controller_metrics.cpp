#include "actors/controller/controller_metrics.hpp"

namespace kozmo::controller {

std::string_view to_string(reconcile_result r) {
  switch (r) {
  case reconcile_result::success: return "success";
  case reconcile_result::error: return "error";
  case reconcile_result::requeue: return "requeue";
  case reconcile_result::requeue_after: return "requeue_after";
  }
  return "error";
}

reconcile_result result_of_pass(bool plan_failed, int code, bool wake_set) {
  if (plan_failed)
    return code == 409 ? reconcile_result::requeue : reconcile_result::error;
  return wake_set ? reconcile_result::requeue_after : reconcile_result::success;
}

controller_series series_for(std::string_view controller) {
  // controller-runtime's buckets (0.005 s to 60 s) reach down further here: a pass whose plan is
  // empty takes microseconds.
  static const auto time = metrics::histograms(
      "controller_runtime_reconcile_time_seconds", "Length of time per reconciliation per controller",
      {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60});
  static const auto total =
      metrics::counters("controller_runtime_reconcile_total", "Total number of reconciliations per controller");
  static const auto depth = metrics::gauges("workqueue_depth", "Current depth of workqueue");
  controller_series s;
  s.time = time.series({{"controller", controller}});
  for (auto r : {reconcile_result::success, reconcile_result::error, reconcile_result::requeue,
                 reconcile_result::requeue_after})
    s.results[static_cast<std::size_t>(r)] = total.series({{"controller", controller}, {"result", to_string(r)}});
  s.depth = depth.series({{"name", controller}});
  return s;
}

} // namespace kozmo::controller
