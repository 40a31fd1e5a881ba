// The controller kit's Prometheus metrics, under the names controller-runtime gives them, so the
// dashboards operators already have for Go controllers read Kozmo's too:
//   controller_runtime_reconcile_time_seconds{controller}        one pass: the core, then its plan
//   controller_runtime_reconcile_total{controller,result}        result = success | error | requeue | requeue_after
//   workqueue_depth{name}                                        objects with a pass due that has not started
// `controller` / `name` is the controller's name ("pytorchjob", "taskexecution"): a short fixed
// set, never an object's name. Pure apart from the registry: no CAF.
#pragma once

#include "k8s/metrics/registry.hpp"

#include <array>
#include <cstddef>
#include <string_view>

namespace kozmo::controller {

// controller-runtime's result label values.
enum class reconcile_result { success, error, requeue, requeue_after };
std::string_view to_string(reconcile_result r);

// How a pass ended, in controller-runtime's terms: a failed plan is an error except a 409
// (controller-runtime requeues a conflict), and a pass that asked to look again later is a
// requeue_after.
reconcile_result result_of_pass(bool plan_failed, int code, bool wake_set);

// The series of one controller, looked up once (when a child starts), then atomic adds only.
struct controller_series {
  metrics::histogram time;
  std::array<metrics::counter, 4> results; // by reconcile_result
  metrics::gauge depth;

  void observe(reconcile_result r, double seconds) const {
    time.observe(seconds);
    results[static_cast<std::size_t>(r)].inc();
  }
};
controller_series series_for(std::string_view controller);

} // namespace kozmo::controller
