// The GPU scheduler's Prometheus metrics (k8s/metrics/registry.hpp), counted the same way in
// direct mode (scheduler actor) and behind kube-scheduler (extender).
#pragma once

#include "actors/scheduler/scheduler_core.hpp"

#include <cstddef>

namespace kozmo::scheduler {

// kozmo_scheduler_decisions_total{kind="bind"|"preempt"|"wait"}
void count_decision(decision_kind kind);
// kozmo_scheduler_round_seconds: one scheduling round (scheduler_core::schedule()).
void observe_round(double seconds);
// kozmo_scheduler_pods_waiting, kozmo_scheduler_groups_allocated
void set_pods_waiting(std::size_t n);
void set_groups_allocated(std::size_t n);

} // namespace kozmo::scheduler
