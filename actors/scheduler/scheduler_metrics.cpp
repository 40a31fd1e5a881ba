#include "actors/scheduler/scheduler_metrics.hpp"

#include "k8s/metrics/registry.hpp"

#include <algorithm>
#include <array>
#include <map>

namespace kozmo::scheduler {
namespace {

struct scheduler_metrics {
  std::array<metrics::counter, 3> decisions; // by decision_kind
  metrics::histogram round;
  metrics::gauge pods_waiting;
  metrics::gauge groups_allocated;
  metrics::gauge_family vc_gpus =
      metrics::gauges("kozmo_virtual_cluster_gpus",
                      "GPUs of a virtual cluster: guaranteed (its quota), used (by its guaranteed gangs), free, "
                      "borrowed (held by its gangs outside its quota: opportunistic, or in cells borrowed from other VCs), "
                      "lent (of its quota, held by other VCs' gangs that borrowed its idle cells)");
  metrics::gauge_family waiting_gangs =
      metrics::gauges("kozmo_waiting_gangs", "Gangs waiting for GPUs, by virtual cluster and reason");

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

std::vector<waiting_count> count_waiting(const std::vector<vc_usage>& vcs, const std::vector<waiting_gang>& waiting) {
  std::map<std::string, std::array<int, wait_reasons.size()>> by_vc;
  for (const auto& v : vcs)
    by_vc[v.name].fill(0);
  for (const auto& w : waiting) {
    auto it = std::find(wait_reasons.begin(), wait_reasons.end(), w.reason_kind);
    if (it == wait_reasons.end())
      it = std::find(wait_reasons.begin(), wait_reasons.end(), w.vc.empty() ? "ClusterFull" : "VirtualClusterFull");
    auto [row, fresh] = by_vc.try_emplace(w.vc);
    if (fresh)
      row->second.fill(0);
    ++row->second[static_cast<std::size_t>(it - wait_reasons.begin())];
  }
  std::vector<waiting_count> out;
  for (const auto& [vc, counts] : by_vc)
    for (std::size_t r = 0; r < wait_reasons.size(); ++r)
      out.push_back({vc, wait_reasons[r], counts[r]});
  return out;
}

void set_virtual_clusters(const std::vector<vc_usage>& vcs, const std::vector<waiting_gang>& waiting) {
  auto& m = get();
  for (const auto& v : vcs) {
    m.vc_gpus.series({{"virtual_cluster", v.name}, {"state", "guaranteed"}}).set(v.guaranteed);
    m.vc_gpus.series({{"virtual_cluster", v.name}, {"state", "used"}}).set(v.used);
    m.vc_gpus.series({{"virtual_cluster", v.name}, {"state", "free"}}).set(v.free);
    m.vc_gpus.series({{"virtual_cluster", v.name}, {"state", "borrowed"}}).set(v.borrowed);
    m.vc_gpus.series({{"virtual_cluster", v.name}, {"state", "lent"}}).set(v.lent);
  }
  for (const auto& c : count_waiting(vcs, waiting))
    m.waiting_gangs.series({{"virtual_cluster", c.vc}, {"reason", c.reason}}).set(c.gangs);
}

} // namespace kozmo::scheduler
