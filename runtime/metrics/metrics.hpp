// Kozmo's Prometheus metrics: one process-wide registry, served as text at GET /metrics by the
// embedded API server (`kozmo local`) and by the extender.
//
//   kozmo::metrics::scheduler_decision(kozmo::metrics::decision::bind);
//   std::string text = kozmo::metrics::render(); // Prometheus text exposition, format 0.0.4
//
// The metric families and every labelled series are created once, on first use: a call on a
// hot path is an atomic add, with no lookup by name. prometheus-cpp stays inside metrics.cpp;
// built with -Dmetrics=disabled the calls do nothing and render() returns "".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kozmo::metrics {

// The Content-Type of render()'s text.
inline constexpr const char* content_type = "text/plain; version=0.0.4; charset=utf-8";

// False when built without prometheus-cpp.
bool enabled();

// The text exposition of every metric below.
std::string render();

// ---- scheduler (actors/scheduler) ---------------------------------------------------------
enum class decision { bind, preempt, wait };
// kozmo_scheduler_decisions_total{kind}
void scheduler_decision(decision kind);
// kozmo_scheduler_round_seconds: one scheduling round (scheduler_core::schedule()).
void scheduler_round(double seconds);
// kozmo_scheduler_pods_waiting, kozmo_scheduler_groups_allocated
void scheduler_pods_waiting(std::size_t n);
void scheduler_groups_allocated(std::size_t n);

// ---- cellgroup (actors/cellgroup) ---------------------------------------------------------
// kozmo_cellgroup_binds_total{outcome="succeeded"|"failed"}
void bind_done(bool succeeded);

// ---- training (actors/training) -----------------------------------------------------------
// kozmo_training_jobs_finished_total{outcome="succeeded"|"failed"}
void training_job_finished(bool succeeded);
// kozmo_training_pods_created_total
void training_pod_created();

// ---- Kubernetes client (k8s/client) -------------------------------------------------------
// kozmo_client_requests_total{method, code}: one per attempt. `method` is the HTTP method
// (GET, POST, PUT, PATCH, DELETE; anything else: "other"); `status` the HTTP status, giving
// code="2xx" | "3xx" | "4xx" | "5xx", or 0 when no answer came (connection, TLS, timeout):
// code="error".
void client_request(std::string_view method, int status);

} // namespace kozmo::metrics
