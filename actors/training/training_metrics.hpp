// The training controller's Prometheus metrics (k8s/metrics/registry.hpp).
#pragma once

namespace kozmo::training {

// kozmo_training_jobs_finished_total{outcome="succeeded"|"failed"}
void count_job_finished(bool succeeded);
// kozmo_training_pods_created_total
void count_pod_created();

} // namespace kozmo::training
