// The `quota-baseline` policy (YARN capacity scheduler-like): a scalar GPU quota per VC and no
// cells, no topology. A VC's jobs start in submit order (strict FIFO: the first that cannot
// start stops its VC's queue) when the VC's used GPUs + G <= its quota and the cluster has G
// free GPUs anywhere; they take them first fit in node order, as many as each node has free,
// so a gang may be scattered over more nodes than it needs (counted, not slowed down).
#include "bench/quality_recorder.hpp"
#include "bench/quality_replay.hpp"

#include <cmath>
#include <deque>
#include <queue>

namespace kozmo::quality {

namespace {

struct running_job {
  int job = 0;
  std::vector<std::pair<int, int>> held; // (node, GPUs)
};

} // namespace

policy_result run_quota_baseline(const std::vector<vc_def>& vcs, const std::vector<job>& jobs,
                                 const replay_options& o) {
  int nodes = 0;
  for (const auto& v : vcs) nodes += v.nodes;
  recorder rec(vcs, nodes, o);
  std::vector<int> free(static_cast<std::size_t>(nodes), 8);
  int free_total = nodes * 8;
  std::vector<std::deque<int>> queues(vcs.size());
  std::vector<std::int64_t> started(jobs.size(), -1);
  std::vector<running_job> running(jobs.size());
  using end_event = std::pair<std::int64_t, int>;
  std::priority_queue<end_event, std::vector<end_event>, std::greater<>> ends;

  auto try_start = [&](std::int64_t t) {
    for (std::size_t v = 0; v < vcs.size(); ++v) {
      auto& q = queues[v];
      while (!q.empty()) {
        const int j = q.front();
        const job& jb = jobs[static_cast<std::size_t>(j)];
        if (rec.used(jb.vc) + jb.gpus > vcs[v].nodes * 8 || free_total < jb.gpus) break;
        q.pop_front();
        int need = jb.gpus;
        auto& held = running[static_cast<std::size_t>(j)].held;
        for (int n = 0; n < nodes && need > 0; ++n) {
          const int take = std::min(need, free[static_cast<std::size_t>(n)]);
          if (take == 0) continue;
          free[static_cast<std::size_t>(n)] -= take;
          need -= take;
          held.emplace_back(n, take);
          rec.node_busy(n, take);
        }
        free_total -= jb.gpus;
        if (static_cast<int>(held.size()) > (jb.gpus + 7) / 8) rec.scattered(jb.vc);
        rec.waiting(jb.vc, jb.gpus, -1);
        rec.running(jb.vc, jb.gpus, true, +1);
        started[static_cast<std::size_t>(j)] = t;
        rec.finished(jb.vc, static_cast<double>(t - jb.submit));
        const auto length = static_cast<std::int64_t>(std::llround(static_cast<double>(jb.duration) * o.scale));
        ends.push({t + std::max<std::int64_t>(1, length), j});
      }
    }
  };

  std::size_t next = 0;
  while (next < jobs.size() || !ends.empty()) {
    std::int64_t t = next < jobs.size() ? jobs[next].submit : INT64_MAX;
    if (!ends.empty()) t = std::min(t, ends.top().first);
    rec.advance(t);
    while (!ends.empty() && ends.top().first == t) {
      const int j = ends.top().second;
      ends.pop();
      const job& jb = jobs[static_cast<std::size_t>(j)];
      for (const auto& [n, g] : running[static_cast<std::size_t>(j)].held) {
        free[static_cast<std::size_t>(n)] += g;
        rec.node_busy(n, -g);
      }
      free_total += jb.gpus;
      rec.running(jb.vc, jb.gpus, true, -1);
    }
    for (; next < jobs.size() && jobs[next].submit == t; ++next) {
      rec.submitted(jobs[next].vc);
      rec.waiting(jobs[next].vc, jobs[next].gpus, +1);
      queues[static_cast<std::size_t>(jobs[next].vc)].push_back(static_cast<int>(next));
    }
    try_start(t);
  }
  rec.advance(o.to);
  for (std::size_t j = 0; j < jobs.size(); ++j)
    if (started[j] < 0) rec.unfinished(jobs[j].vc);
  policy_result r = rec.take();
  r.name = "quota-baseline";
  return r;
}

} // namespace kozmo::quality
