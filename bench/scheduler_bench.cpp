// Scheduler core throughput: 5000 nodes × 8 GPUs in 2-node racks, 4 VCs, a churn of mixed
// gangs of 1-64 GPUs (guaranteed and opportunistic) kept around 70-80 % utilisation. Each
// iteration adds one group and calls schedule(); the figures are placements (pods bound) per
// second of scheduling time and the latency of one schedule() call (one decision round).
// Usage: scheduler_bench [iterations] [target utilisation %, default 80]
#include "actors/scheduler/scheduler_core.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <unordered_map>
#include <random>
#include <string>
#include <vector>

using namespace kozmo::scheduler;
using bench_clock = std::chrono::steady_clock;

namespace {

constexpr int nodes = 5000;
constexpr int racks = nodes / 2;
constexpr int gpus = nodes * 8;

std::string config() {
  std::string y = R"(physicalCluster:
  cellTypes:
    V100-SWITCH: {childCellType: V100, childCellNumber: 2}
    V100-SOCKET: {childCellType: V100-SWITCH, childCellNumber: 2}
    V100-NODE: {childCellType: V100-SOCKET, childCellNumber: 2, isNodeLevel: true}
    V100-RACK: {childCellType: V100-NODE, childCellNumber: 2}
  physicalCells:
)";
  for (int r = 0; r < racks; ++r)
    y += "  - {cellType: V100-RACK, cellChildren: [{cellAddress: node-" + std::to_string(2 * r) +
         "}, {cellAddress: node-" + std::to_string(2 * r + 1) + "}]}\n";
  y += "virtualClusters:\n";
  for (int v = 0; v < 4; ++v)
    y += "  vc" + std::to_string(v) +
         ":\n    virtualCells: [{cellType: V100-RACK, cellNumber: 250}, "
         "{cellType: V100-RACK.V100-NODE, cellNumber: 600}]\n";
  return y;
}

struct live_group {
  std::vector<std::string> uids;
  int gpus = 0;
};

// Running groups, removable by name (preemption victims) or at random (completion).
struct running {
  std::unordered_map<std::string, live_group> by_name;
  std::vector<std::string> names;
  std::unordered_map<std::string, std::size_t> position;
  int used = 0;

  void add(const std::string& name, live_group g) {
    if (by_name.count(name)) return;
    used += g.gpus;
    position[name] = names.size();
    names.push_back(name);
    by_name.emplace(name, std::move(g));
  }
  void remove(scheduler_core& core, std::string name) { // by value: callers pass names[i]
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      std::fprintf(stderr, "remove of unknown %s (names %zu, by_name %zu)\n", name.c_str(), names.size(), by_name.size());
      std::abort();
    }
    for (const auto& uid : it->second.uids) core.remove_pod(uid);
    used -= it->second.gpus;
    const std::size_t at = position[name];
    position[names.back()] = at;
    names[at] = names.back();
    names.pop_back();
    position.erase(name);
    by_name.erase(it);
  }
};

} // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 200000;
  const int target = argc > 2 ? std::atoi(argv[2]) : 80;
  auto t0 = bench_clock::now();
  auto loaded = scheduler_core::load(config());
  if (!loaded) {
    std::fprintf(stderr, "config: %s\n", loaded.err().message.c_str());
    return 1;
  }
  scheduler_core core = std::move(*loaded);
  std::printf("load: %.1f ms for %d nodes, %d GPUs\n",
              std::chrono::duration<double, std::milli>(bench_clock::now() - t0).count(), nodes, gpus);

  std::mt19937 rng(42);
  const int sizes[] = {1, 2, 4, 8, 16, 32, 64};
  const int weights[] = {30, 20, 15, 15, 10, 6, 4};
  std::discrete_distribution<int> pick_size(std::begin(weights), std::end(weights));
  running live;
  std::unordered_map<std::string, live_group> preempting; // groups waiting for their victims
  long long bound_pods = 0, waits = 0, preempts = 0;
  std::vector<double> latency_us;
  latency_us.reserve(iterations);
  std::vector<double> per_decision_us; // a round's time shared by the decisions it made
  double total_us = 0;
  std::map<int, std::pair<double, int>> by_size; // gang GPUs -> (summed round time, rounds)
  for (int i = 0; i < iterations; ++i) {
    const int size = sizes[pick_size(rng)];
    const int per_pod = std::min(size, 8);
    const int pods = size / per_pod;
    const bool opportunistic = rng() % 10 == 0;
    live_group g;
    g.gpus = size;
    const std::string name = "g" + std::to_string(i);
    for (int p = 0; p < pods; ++p) {
      pod_view v;
      v.ref = {"bench", name + "-" + std::to_string(p), name + "-" + std::to_string(p)};
      v.spec.affinity_group = name;
      v.spec.virtual_cluster = "vc" + std::to_string(rng() % 4);
      v.spec.priority = opportunistic ? -1 : static_cast<int>(rng() % 10);
      v.spec.leaf_cell_number = per_pod;
      v.spec.members = {{pods, per_pod}};
      v.created_ms = i;
      (void)core.add_pod(v);
      g.uids.push_back(v.ref.uid);
    }
    const auto start = bench_clock::now();
    auto decisions = core.schedule(i);
    const double us = std::chrono::duration<double, std::micro>(bench_clock::now() - start).count();
    latency_us.push_back(us);
    for (std::size_t k = 0; k < decisions.size(); ++k) per_decision_us.push_back(us / decisions.size());
    total_us += us;
    by_size[size].first += us;
    ++by_size[size].second;
    bool placed = false, preempting_now = false;
    std::vector<std::string> victims;
    for (const auto& d : decisions) {
      if (d.kind == decision_kind::bind) {
        ++bound_pods;
        core.pod_bound(d.pod.uid);
        placed = placed || d.group == name;
        if (auto p = preempting.find(d.group); p != preempting.end()) {
          live.add(d.group, std::move(p->second));
          preempting.erase(p);
        }
      } else if (d.kind == decision_kind::preempt) {
        ++preempts;
        preempting_now = preempting_now || d.group == name;
        for (const auto& v : d.victims) victims.push_back(core.group_of(v.uid));
      } else {
        ++waits;
      }
    }
    if (placed) {
      live.add(name, std::move(g));
    } else if (preempting_now) {
      preempting.emplace(name, std::move(g));
    } else {
      for (const auto& uid : g.uids) core.remove_pod(uid); // give up: keep the queue short
    }
    // The controller deletes victims at once; the preemptor binds on the next round.
    for (const auto& v : victims)
      if (live.by_name.count(v)) live.remove(core, v);
    while (live.used > gpus / 100 * target && !live.names.empty())
      live.remove(core, live.names[rng() % live.names.size()]);
  }
  std::sort(latency_us.begin(), latency_us.end());
  auto pct = [&](double q) { return latency_us[static_cast<std::size_t>(q * (latency_us.size() - 1))]; };
  std::printf("iterations: %d  pods bound: %lld  waits: %lld  preempt decisions: %lld\n", iterations,
              bound_pods, waits, preempts);
  std::printf("placements/s: %.0f (pods bound per second of schedule() time)\n",
              bound_pods / (total_us / 1e6));
  std::printf("schedule() round (one new group) latency: p50 %.1f us  p99 %.1f us  max %.1f us\n",
              pct(0.5), pct(0.99), latency_us.back());
  std::sort(per_decision_us.begin(), per_decision_us.end());
  if (!per_decision_us.empty())
    std::printf("per pod decision: p50 %.1f us  p99 %.1f us\n",
                per_decision_us[per_decision_us.size() / 2],
                per_decision_us[static_cast<std::size_t>(0.99 * (per_decision_us.size() - 1))]);
  std::printf("mean round by gang size:");
  for (const auto& [gpus, t] : by_size) std::printf("  %d GPUs %.1f us", gpus, t.first / t.second);
  std::printf("\n");
  return 0;
}
