// The quality bench's replay: a public job log (jobs with a submit time, a duration, a GPU count
// and a virtual cluster) played in simulated time through one placement policy, with the
// figures a cluster's users notice. Pure: no clock, no I/O except reading the trace text.
//
// Notes:
//  1. Time is whole simulated seconds. Jobs arrive at their submit time; once a job's gang is
//     placed it runs for its duration (times --scale) and its GPUs are freed. The cluster
//     starts empty at the window's start and the replay runs until every job has finished;
//     time-weighted figures (utilization, fragmentation, violations) cover the window only,
//     delays cover every job submitted in it.
//  2. A job of G GPUs is one gang of floor(G/8) pods of 8 GPUs plus, when G % 8 != 0, one pod
//     of G % 8 (the core takes members of different sizes; 12 GPUs = 8 + 4, not 2 x 8).
//  3. Queueing delay = all the time a job spent waiting: submit to start, plus, after each
//     preemption, requeue to restart. Percentiles are nearest-rank (p-th: the ceil(p*n)-th
//     smallest).
//  4. Fragmentation at time t = the free GPUs on nodes whose free GPUs are fewer than the
//     smallest pod of every waiting gang (no waiting pod fits there); 0 when no gang waits.
//     Quotas are ignored: it measures the shape of the free space against the queue. Per VC,
//     the same with that VC's waiting gangs only. Reported as a time mean in GPUs.
//  5. Guarantee violation: a VC has a waiting gang whose GPUs fit, by count, in its unused
//     quota (quota - GPUs its guaranteed jobs hold), so it is below its quota while a gang it
//     could run waits. Reported as the time it lasts, in VC-hours.
//  6. Utilization: mean busy GPUs / GPUs (per VC: its jobs' busy GPUs / its quota's GPUs, so
//     a VC running opportunistic jobs can exceed 100 %).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::quality {

struct vc_def {
  std::string name; // the trace's VC hash
  int nodes = 0;    // 8-GPU nodes of its quota
};

struct job {
  std::int64_t submit = 0;   // seconds since the epoch of the trace's clock
  std::int64_t duration = 0; // seconds
  int gpus = 0;
  int vc = 0; // index into the VC list
};

// Reading the trace: errors are a message naming the line.
struct trace_result {
  std::vector<job> jobs; // in the window, ordered by submit time (stable)
  int outside_window = 0;
  int unmapped = 0;       // their VC is not in the VC list: dropped
  int too_large = 0;      // more GPUs than their VC's quota: they could never run, dropped
  int zero_length = 0;    // duration 0 or GPUs 0: dropped
  std::string error;      // non-empty: the trace is unusable
};

// "YYYY-MM-DD" or "YYYY-MM-DD HH:MM:SS" to seconds since 1970-01-01 (the clock is naive: the
// trace's own time zone). False when it is not a valid date.
bool parse_time(std::string_view text, std::int64_t* seconds);

// philly_vc.csv: "vc,node num" then one "name,nodes" a line.
std::vector<vc_def> parse_vcs(std::string_view csv, std::string* error);
// philly.csv: "timestamp,duration,num_gpus,gpu_time,cluster"; keeps jobs submitted in [from, to).
trace_result parse_jobs(std::string_view csv, const std::vector<vc_def>& vcs, std::int64_t from, std::int64_t to);

struct vc_figures {
  int jobs = 0;
  int unfinished = 0;         // still waiting when the replay gave up (should be 0)
  std::vector<double> delays; // seconds, one per finished job
  double busy_gpu_s = 0;      // integrals over the window
  double violation_s = 0;
  double fragmented_gpu_s = 0;
  int preemptions = 0;        // runs killed by a preemption
  double wasted_gpu_s = 0;    // GPU-seconds those runs had done
  int scattered = 0;          // gangs spread over more nodes than ceil(G/8)
};

struct policy_result {
  std::string name;
  std::vector<vc_figures> vcs; // as the VC list
  vc_figures all;
  std::vector<int> quota_gpus; // per VC
  int total_gpus = 0;
  double window_s = 0;
  double wall_s = 0; // filled by the caller
};

struct replay_options {
  std::int64_t from = 0; // window [from, to)
  std::int64_t to = 0;
  double scale = 1.0;    // durations x scale
  int rack_nodes = 8;    // nodes per rack (the largest divisor of the node count up to this)
  bool shortcuts = true; // scheduler_options::shortcuts (off: the core's oracle mode, slower)
  std::int64_t reserve_after_s = 300; // scheduler_options::reserve_after_ms / 1000; 0: never
  std::int64_t reclaim_timeout_s = 30; // kozmo+borrowing's borrowing.reclaimTimeout
};

// The policies (the bench's header says what each does).
enum class overflow { none, opportunistic, borrowing };
policy_result run_kozmo(const std::vector<vc_def>& vcs, const std::vector<job>& jobs, const replay_options& o,
                        overflow mode);
policy_result run_quota_baseline(const std::vector<vc_def>& vcs, const std::vector<job>& jobs,
                                 const replay_options& o);
policy_result run_private(const std::vector<vc_def>& vcs, const std::vector<job>& jobs, const replay_options& o);

// HiveD-format configuration: `nodes` 8-GPU nodes n0.. in racks, one VC per entry owning its
// nodes as RACK.NODE cells. VC names are prefixed "vc-" (a hash like 6214e9 reads as a number).
// `reclaim_s` >= 0: borrowing on, every VC lends all its nodes and may borrow any, with that
// reclaimTimeout (seconds).
std::string hived_config(const std::vector<vc_def>& vcs, int rack_nodes, std::int64_t reclaim_s = -1);

// The p-th percentile, nearest rank (note 3); 0 for no values.
double percentile(std::vector<double> values, double p);

// The one table: per VC and all, every policy; then the sharing anomalies.
std::string format_table(const std::vector<vc_def>& vcs, const std::vector<policy_result>& results);
// Sharing anomalies of `shared` against `alone`: VCs whose p50 or p95 delay is worse shared.
int sharing_anomalies(const policy_result& shared, const policy_result& alone);

} // namespace kozmo::quality
