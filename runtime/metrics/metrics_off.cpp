// Built with -Dmetrics=disabled (or without prometheus-cpp): every call does nothing.
#include "runtime/metrics/metrics.hpp"

namespace kozmo::metrics {

bool enabled() { return false; }
std::string render() { return {}; }
void scheduler_decision(decision) {}
void scheduler_round(double) {}
void scheduler_pods_waiting(std::size_t) {}
void scheduler_groups_allocated(std::size_t) {}
void bind_done(bool) {}
void training_job_finished(bool) {}
void training_pod_created() {}
void client_request(std::string_view, int) {}

} // namespace kozmo::metrics
