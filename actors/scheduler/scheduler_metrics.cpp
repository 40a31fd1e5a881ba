#include "actors/scheduler/scheduler_metrics.hpp"

#include "k8s/metrics/registry.hpp"

#include <array>

namespace kozmo::scheduler {
namespace {

struct scheduler_metrics {
  std::array<metrics::counter, 3> decisions; // by decision_kind
  metrics::histogram round;
  metrics::gauge pods_waiting;
  metrics::gauge groups_allocated;

  scheduler_metrics() {
    auto dec = metrics::counters("kozmo_scheduler_decisions_total",
                                 "Scheduling decisions for pods, by kind (bind, preempt, wait)");
    decisions[static_cast<std::size_t>(decision_kind::bind)] = dec.series({{"kind", "bind"}});
    decisions[static_cast<std::size_t>(decision_kind::preempt)] = dec.series({{"kind", "preempt"}});
    decisions[static_cast<std::size_t>(decision_kind::wait)] = dec.series({{"kind", "wait"}});
    // From a single pod on a small cluster (tens of microseconds) to large gangs with
    // preemption on thousands of GPUs (a second or more).
    round = metrics::add_histogram("kozmo_scheduler_round_seconds",
                                   "Duration of one scheduling round over every waiting pod",
                                   {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                    1, 2.5, 5});
    pods_waiting = metrics::add_gauge("kozmo_scheduler_pods_waiting",
                                      "Pods the scheduler could not place yet (reported as Unschedulable)");
    groups_allocated = metrics::add_gauge("kozmo_scheduler_groups_allocated",
                                          "Affinity groups holding a placement (one cellgroup actor each)");
  }
};

scheduler_metrics& get() {
  static scheduler_metrics* m = new scheduler_metrics;
  return *m;
}

// Registered at start-up, so the first scrape already lists them.
[[maybe_unused]] const bool registered = (get(), true);

} // namespace

void count_decision(decision_kind kind) { get().decisions[static_cast<std::size_t>(kind)].inc(); }
void observe_round(double seconds) { get().round.observe(seconds); }
void set_pods_waiting(std::size_t n) { get().pods_waiting.set(static_cast<double>(n)); }
void set_groups_allocated(std::size_t n) { get().groups_allocated.set(static_cast<double>(n)); }

} // namespace kozmo::scheduler
