// The training controller's Prometheus metrics (k8s/metrics/registry.hpp).
#pragma once

#include "k8s/metrics/registry.hpp"

#include <string>
#include <string_view>

namespace kozmo::training {

// kozmo_training_jobs_finished_total{outcome="succeeded"|"failed"}
void count_job_finished(bool succeeded);
// kozmo_training_pods_created_total
void count_pod_created();
// kozmo_training_jobs{kind,phase}: the job's actor counts its job in its kind and phase
// (job_phase(), job_status.hpp); the slot leaves the count when the actor stops.
void count_job_in(metrics::gauge_slot& slot, std::string_view kind, std::string_view phase);
// The controller's name in controller_runtime_* and workqueue_* metrics: the kind in lower case
// ("pytorchjob"), as controller-runtime names a controller after the kind it reconciles.
std::string controller_name(std::string_view kind);

} // namespace kozmo::training
