// The GPU scheduler's Prometheus metrics (k8s/metrics/registry.hpp), counted the same way in
// direct mode (scheduler actor) and behind kube-scheduler (extender).
#pragma once

#include "actors/scheduler/scheduler_core.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::scheduler {

// kozmo_scheduler_decisions_total{kind="bind"|"preempt"|"wait"}
void count_decision(decision_kind kind);
// kozmo_scheduler_round_seconds: one scheduling round (scheduler_core::schedule()).
void observe_round(double seconds);
// kozmo_scheduler_pods_waiting, kozmo_scheduler_groups_allocated
void set_pods_waiting(std::size_t n);
void set_groups_allocated(std::size_t n);

// waiting_gang::reason_kind's fixed set: the reason label of kozmo_waiting_gangs.
inline constexpr std::array<std::string_view, 5> wait_reasons{"VirtualClusterFull", "ClusterFull", "Preempting",
                                                              "Reserving", "Opportunistic"};
struct waiting_count {
  std::string vc; // "" for gangs outside any VC (physical mode)
  std::string_view reason;
  int gangs = 0;
  friend bool operator==(const waiting_count&, const waiting_count&) = default;
};
// Waiting gangs counted by VC and reason: every VC of `vcs` with every reason (zeros included,
// so a gang that stops waiting brings its series back to 0 instead of leaving it stale), plus
// the VCs only a waiting gang names. A reason outside the fixed set counts as ClusterFull or
// VirtualClusterFull (by whether the gang has a VC). Pure.
std::vector<waiting_count> count_waiting(const std::vector<vc_usage>& vcs, const std::vector<waiting_gang>& waiting);

// kozmo_virtual_cluster_gpus{virtual_cluster,state="guaranteed"|"used"|"free"|"borrowed"} and
// kozmo_waiting_gangs{virtual_cluster,reason}, from the core's vc_usages() and waiting_gangs().
// Label values are VC names from the configuration and the fixed reasons: bounded.
void set_virtual_clusters(const std::vector<vc_usage>& vcs, const std::vector<waiting_gang>& waiting);

} // namespace kozmo::scheduler
