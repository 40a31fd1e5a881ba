// The figures of one replay, kept as the policies report changes (quality_replay.hpp's notes
// 3-6 define them). A policy calls advance(t) before it changes anything at time t; the
// integrals then cover [last t, t) with the state as it was.
#pragma once

#include "bench/quality_replay.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <vector>

namespace kozmo::quality {

class recorder {
public:
  recorder(const std::vector<vc_def>& vcs, int nodes, const replay_options& o)
      : from_(o.from), to_(o.to), waiting_(vcs.size()), smallest_(vcs.size()), used_(vcs.size(), 0),
        busy_(vcs.size(), 0), free_(static_cast<std::size_t>(nodes), 8) {
    result_.vcs.resize(vcs.size());
    for (const auto& v : vcs) result_.quota_gpus.push_back(v.nodes * 8);
    result_.total_gpus = nodes * 8;
    result_.window_s = static_cast<double>(o.to - o.from);
    hist_[8] = nodes;
    for (auto& s : smallest_) s.fill(0);
  }

  void advance(std::int64_t t) {
    const double dt = static_cast<double>(std::min(t, to_) - std::max(last_, from_));
    last_ = std::max(last_, t);
    if (dt <= 0) return;
    int smallest_all = 9;
    for (std::size_t v = 0; v < waiting_.size(); ++v) {
      vc_figures& f = result_.vcs[v];
      f.busy_gpu_s += busy_[v] * dt;
      result_.all.busy_gpu_s += busy_[v] * dt;
      if (waiting_[v].empty()) continue;
      if (*waiting_[v].begin() <= result_.quota_gpus[v] - used_[v]) {
        f.violation_s += dt;
        result_.all.violation_s += dt;
      }
      const int s = smallest_pod(v);
      smallest_all = std::min(smallest_all, s);
      f.fragmented_gpu_s += fragmented_below(s) * dt;
    }
    if (smallest_all <= 8) result_.all.fragmented_gpu_s += fragmented_below(smallest_all) * dt;
  }

  // A node's busy GPUs changed by `delta` (positive: taken).
  void node_busy(int node, int delta) {
    int& f = free_[static_cast<std::size_t>(node)];
    --hist_[f];
    f -= delta;
    ++hist_[f];
  }
  // A gang starts or stops waiting (sign +1 / -1).
  void waiting(int vc, int gpus, int sign) {
    const int pod = gpus % 8 != 0 ? gpus % 8 : 8;
    smallest_[vc][pod] += sign;
    if (sign > 0) waiting_[vc].insert(gpus);
    else waiting_[vc].erase(waiting_[vc].find(gpus));
  }
  // A job starts or stops running; guaranteed ones count against the VC's quota.
  void running(int vc, int gpus, bool guaranteed, int sign) {
    busy_[vc] += sign * gpus;
    if (guaranteed) used_[vc] += sign * gpus;
  }
  void finished(int vc, double delay) {
    result_.vcs[vc].delays.push_back(delay);
    result_.all.delays.push_back(delay);
  }
  void preempted(int vc, double wasted_gpu_s) {
    ++result_.vcs[vc].preemptions;
    ++result_.all.preemptions;
    result_.vcs[vc].wasted_gpu_s += wasted_gpu_s;
    result_.all.wasted_gpu_s += wasted_gpu_s;
  }
  void scattered(int vc) {
    ++result_.vcs[vc].scattered;
    ++result_.all.scattered;
  }
  void submitted(int vc) {
    ++result_.vcs[vc].jobs;
    ++result_.all.jobs;
  }
  void unfinished(int vc) {
    ++result_.vcs[vc].unfinished;
    ++result_.all.unfinished;
  }
  int used(int vc) const { return used_[vc]; }
  policy_result take() { return std::move(result_); }

private:
  int smallest_pod(std::size_t v) const {
    for (int s = 1; s <= 8; ++s)
      if (smallest_[v][s] > 0) return s;
    return 9;
  }
  // Free GPUs on nodes with fewer than `s` free.
  double fragmented_below(int s) const {
    double sum = 0;
    for (int k = 1; k < s && k <= 8; ++k) sum += k * hist_[k];
    return sum;
  }

  std::int64_t from_, to_, last_ = INT64_MIN;
  std::vector<std::multiset<int>> waiting_;       // per VC: GPUs of each waiting gang
  std::vector<std::array<int, 9>> smallest_;      // per VC: waiting gangs by smallest pod
  std::vector<int> used_, busy_;                  // per VC: guaranteed GPUs held, all GPUs held
  std::vector<int> free_;                         // per node
  std::array<int, 9> hist_{};                     // nodes by free GPUs
  policy_result result_;
};

} // namespace kozmo::quality
