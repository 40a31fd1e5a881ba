// The `kozmo`, `kozmo+opportunistic` and `kozmo+borrowing` policies and the private clusters: the trace replayed
// through the pure scheduler core (scheduler_core.hpp), as the scheduler actor drives it but
// with simulated time: at each instant the jobs that end are removed, the jobs that arrive
// are added, and schedule() runs until it decides nothing new. Preemption victims are deleted
// at once (as the controller does); the preemptor binds on the next schedule() at the same
// instant. A preempted job starts again from zero: it is queued anew, its pods created then.
#include "actors/scheduler/scheduler_core.hpp"
#include "bench/quality_recorder.hpp"
#include "bench/quality_replay.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <queue>
#include <string>
#include <unordered_map>

namespace kozmo::quality {

using namespace kozmo::scheduler;

namespace {

struct run_state {
  int attempt = 0;
  int priority = 0;
  std::int64_t waiting_since = 0;
  std::int64_t started = -1; // of the current attempt; -1 while waiting
  double waited = 0;
  int pods = 0, bound = 0;
  std::vector<std::pair<int, int>> held; // (node, GPUs) per bound pod
  bool finished = false;
};

class kozmo_replay {
public:
  kozmo_replay(scheduler_core core, const std::vector<vc_def>& vcs, const std::vector<job>& jobs,
               const replay_options& o, bool opportunistic)
      : core_(std::move(core)), vcs_(vcs), jobs_(jobs), o_(o), opportunistic_(opportunistic),
        rec_(vcs, total_nodes(vcs), o), state_(jobs.size()), waiting_guaranteed_(vcs.size(), 0) {
    scheduler_options options;
    options.shortcuts = o.shortcuts;
    options.reserve_after_ms = o.reserve_after_s * 1000;
    core_.set_options(options);
  }

  policy_result run() {
    std::size_t next = 0;
    while (next < jobs_.size() || !ends_.empty()) {
      std::int64_t t = next < jobs_.size() ? jobs_[next].submit : INT64_MAX;
      if (!ends_.empty()) t = std::min(t, ends_.top().first);
      // A reclaim of borrowed cells falls due (scheduler_core note 9): a decision instant.
      if (auto due = core_.next_wake_ms()) t = std::min(t, (*due + 999) / 1000);
      rec_.advance(t);
      while (!ends_.empty() && ends_.top().first == t) {
        const auto [when, key] = ends_.top();
        ends_.pop();
        finish(key);
      }
      for (; next < jobs_.size() && jobs_[next].submit == t; ++next) {
        rec_.submitted(jobs_[next].vc);
        queue(static_cast<int>(next), t);
      }
      decide(t);
    }
    rec_.advance(o_.to);
    for (std::size_t j = 0; j < jobs_.size(); ++j)
      if (!state_[j].finished) rec_.unfinished(jobs_[j].vc);
    return rec_.take();
  }

private:
  static int total_nodes(const std::vector<vc_def>& vcs) {
    int n = 0;
    for (const auto& v : vcs) n += v.nodes;
    return n;
  }
  std::string group_name(int j) const { return "j" + std::to_string(j) + "." + std::to_string(state_[j].attempt); }

  // Adds job j's pods (a new attempt), guaranteed or, under `kozmo+opportunistic` when its VC's
  // quota is taken by running and waiting guaranteed gangs, opportunistic.
  void queue(int j, std::int64_t t) {
    const job& jb = jobs_[j];
    run_state& s = state_[j];
    s.waiting_since = t;
    s.started = -1;
    s.bound = 0;
    s.held.clear();
    s.priority = 0;
    if (opportunistic_ && rec_.used(jb.vc) + waiting_guaranteed_[jb.vc] + jb.gpus > vcs_[jb.vc].nodes * 8)
      s.priority = -1;
    if (s.priority == 0) waiting_guaranteed_[jb.vc] += jb.gpus;
    const std::string group = group_name(j);
    groups_[group] = j;
    pod_view v;
    v.spec.virtual_cluster = "vc-" + vcs_[jb.vc].name;
    v.spec.priority = s.priority;
    v.spec.affinity_group = group;
    const int full = jb.gpus / 8, rest = jb.gpus % 8;
    if (full > 0) v.spec.members.push_back({full, 8});
    if (rest > 0) v.spec.members.push_back({1, rest});
    v.created_ms = t * 1000;
    s.pods = full + (rest > 0 ? 1 : 0);
    for (int p = 0; p < s.pods; ++p) {
      v.ref = {"q", group + "-" + std::to_string(p), group + "-" + std::to_string(p)};
      v.spec.leaf_cell_number = p < full ? 8 : rest;
      if (auto st = core_.add_pod(v); !st) {
        std::fprintf(stderr, "quality_bench: the core refused job %d: %s\n", j, st.err().message.c_str());
        std::exit(1);
      }
    }
    rec_.waiting(jb.vc, jb.gpus, +1);
  }

  // Removes the current attempt's pods and gives back what it held.
  void release(int j) {
    run_state& s = state_[j];
    const std::string group = group_name(j);
    for (int p = 0; p < s.pods; ++p) core_.remove_pod(group + "-" + std::to_string(p));
    groups_.erase(group);
    for (const auto& [node, gpus] : s.held) rec_.node_busy(node, -gpus);
    s.held.clear();
    const job& jb = jobs_[j];
    if (s.started >= 0) {
      rec_.running(jb.vc, jb.gpus, s.priority >= 0, -1);
    } else {
      rec_.waiting(jb.vc, jb.gpus, -1);
      if (s.priority == 0) waiting_guaranteed_[jb.vc] -= jb.gpus;
    }
  }

  void finish(std::int64_t key) {
    const int j = static_cast<int>(key >> 16), attempt = static_cast<int>(key & 0xffff);
    if (state_[j].attempt != attempt || state_[j].started < 0) return; // a preempted attempt
    release(j);
    state_[j].finished = true;
    rec_.finished(jobs_[j].vc, state_[j].waited);
  }

  void start(int j, std::int64_t t) {
    run_state& s = state_[j];
    const job& jb = jobs_[j];
    s.started = t;
    s.waited += static_cast<double>(t - s.waiting_since);
    rec_.waiting(jb.vc, jb.gpus, -1);
    if (s.priority == 0) waiting_guaranteed_[jb.vc] -= jb.gpus;
    rec_.running(jb.vc, jb.gpus, s.priority >= 0, +1);
    std::vector<int> nodes;
    for (const auto& h : s.held) nodes.push_back(h.first);
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    if (static_cast<int>(nodes.size()) > (jb.gpus + 7) / 8) rec_.scattered(jb.vc);
    const auto length = static_cast<std::int64_t>(std::llround(static_cast<double>(jb.duration) * o_.scale));
    ends_.push({t + std::max<std::int64_t>(1, length), (static_cast<std::int64_t>(j) << 16) | s.attempt});
  }

  void preempt(int j, std::int64_t t) {
    run_state& s = state_[j];
    if (s.started >= 0) rec_.preempted(jobs_[j].vc, static_cast<double>(jobs_[j].gpus) * static_cast<double>(t - s.started));
    if (s.started < 0) s.waited += static_cast<double>(t - s.waiting_since);
    release(j);
    ++s.attempt;
    queue(j, t);
  }

  void decide(std::int64_t t) {
    for (int pass = 0; pass < 16; ++pass) {
      bool again = false;
      for (const auto& d : core_.schedule(t * 1000)) {
        if (d.kind == decision_kind::bind) {
          const auto g = groups_.find(d.group);
          if (g == groups_.end()) continue;
          core_.pod_bound(d.pod.uid);
          const int j = g->second;
          const int node = std::atoi(d.node.c_str() + 1);
          const int gpus = static_cast<int>(d.leaf_indices.size());
          state_[j].held.emplace_back(node, gpus);
          rec_.node_busy(node, gpus);
          if (++state_[j].bound == state_[j].pods) start(j, t);
        } else if (d.kind == decision_kind::preempt) {
          for (const auto& victim : d.victims) {
            const auto g = groups_.find(core_.group_of(victim.uid));
            if (g == groups_.end()) continue; // already deleted for an earlier pod
            preempt(g->second, t);
            again = true;
          }
        }
      }
      (void)core_.take_notices();
      if (!again) return;
    }
  }

  scheduler_core core_;
  const std::vector<vc_def>& vcs_;
  const std::vector<job>& jobs_;
  replay_options o_;
  bool opportunistic_;
  recorder rec_;
  std::vector<run_state> state_;
  std::vector<int> waiting_guaranteed_; // per VC: GPUs of its waiting guaranteed gangs
  std::unordered_map<std::string, int> groups_;
  using end_event = std::pair<std::int64_t, std::int64_t>; // (time, job << 16 | attempt)
  std::priority_queue<end_event, std::vector<end_event>, std::greater<>> ends_;
};

scheduler_core load_core(const std::vector<vc_def>& vcs, int rack_nodes, std::int64_t reclaim_s = -1) {
  auto loaded = scheduler_core::load(hived_config(vcs, rack_nodes, reclaim_s));
  if (!loaded) {
    std::fprintf(stderr, "quality_bench: configuration: %s\n", loaded.err().message.c_str());
    std::exit(1);
  }
  return std::move(*loaded);
}

} // namespace

policy_result run_kozmo(const std::vector<vc_def>& vcs, const std::vector<job>& jobs, const replay_options& o,
                        overflow mode) {
  const bool borrowing = mode == overflow::borrowing;
  auto r = kozmo_replay(load_core(vcs, o.rack_nodes, borrowing ? o.reclaim_timeout_s : -1), vcs, jobs, o,
                        mode == overflow::opportunistic)
               .run();
  r.name = mode == overflow::opportunistic ? "kozmo+opportunistic" : borrowing ? "kozmo+borrowing" : "kozmo";
  return r;
}

// Each VC alone on a cluster of its quota, the same core and rules; the "all" row adds them up.
policy_result run_private(const std::vector<vc_def>& vcs, const std::vector<job>& jobs, const replay_options& o) {
  policy_result out;
  out.name = "private";
  for (std::size_t v = 0; v < vcs.size(); ++v) {
    const std::vector<vc_def> alone{vcs[v]};
    std::vector<job> own;
    for (const auto& j : jobs)
      if (j.vc == static_cast<int>(v)) own.push_back({j.submit, j.duration, j.gpus, 0});
    policy_result r = kozmo_replay(load_core(alone, o.rack_nodes), alone, own, o, false).run();
    vc_figures& f = r.vcs[0];
    out.all.jobs += f.jobs;
    out.all.unfinished += f.unfinished;
    out.all.delays.insert(out.all.delays.end(), f.delays.begin(), f.delays.end());
    out.all.busy_gpu_s += f.busy_gpu_s;
    out.all.violation_s += f.violation_s;
    out.all.fragmented_gpu_s += f.fragmented_gpu_s;
    out.all.scattered += f.scattered;
    out.vcs.push_back(std::move(f));
    out.quota_gpus.push_back(vcs[v].nodes * 8);
    out.total_gpus += vcs[v].nodes * 8;
    out.window_s = r.window_s;
  }
  return out;
}

} // namespace kozmo::quality
