#include "actors/training/training_metrics.hpp"

#include "k8s/metrics/registry.hpp"

namespace kozmo::training {
namespace {

struct training_metrics {
  metrics::outcome_counters jobs{"kozmo_training_jobs_finished_total",
                                 "Training jobs that reached a terminal condition, by outcome"};
  metrics::counter pods_created =
      metrics::counters("kozmo_training_pods_created_total", "Pods created by the training-job controller").series({});
};

training_metrics& get() {
  static training_metrics* m = new training_metrics;
  return *m;
}

// Registered at start-up, so the first scrape already lists them.
[[maybe_unused]] const bool registered = (get(), true);

} // namespace

void count_job_finished(bool succeeded) { get().jobs.count(succeeded); }
void count_pod_created() { get().pods_created.inc(); }

} // namespace kozmo::training
