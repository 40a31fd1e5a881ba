#include "actors/training/training_metrics.hpp"

#include "actors/controller/controller_metrics.hpp"
#include "actors/training/job_model.hpp"
#include "actors/training/job_status.hpp"

#include <cctype>

namespace kozmo::training {
namespace {

struct training_metrics {
  metrics::outcome_counters jobs{"kozmo_training_jobs_finished_total",
                                 "Training jobs that reached a terminal condition, by outcome"};
  metrics::counter pods_created =
      metrics::counters("kozmo_training_pods_created_total", "Pods created by the training-job controller").series({});
  metrics::gauge_family jobs_by_phase =
      metrics::gauges("kozmo_training_jobs", "Training jobs by kind and phase (the job's latest condition)");

  training_metrics() {
    // Every kind and phase at zero from the start, so a dashboard's sum never reads "no data".
    for (const auto& k : all_kinds()) {
      controller::series_for(controller_name(k.name)); // the controller's series, at zero too
      for (auto phase : {condition_type::created, condition_type::running, condition_type::restarting,
                         condition_type::suspended, condition_type::succeeded, condition_type::failed})
        jobs_by_phase.series({{"kind", k.name}, {"phase", phase}});
    }
  }
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

void count_job_in(metrics::gauge_slot& slot, std::string_view kind, std::string_view phase) {
  slot.move_to(get().jobs_by_phase, {{"kind", kind}, {"phase", phase}});
}

std::string controller_name(std::string_view kind) {
  std::string name(kind);
  for (auto& c : name)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

} // namespace kozmo::training
