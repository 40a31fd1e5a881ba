// Scheduler core under the regimes a GPU cluster lives in, one table per run.
//
// Cluster: N nodes x 8 GPUs in 2-node racks (switch/socket/node/rack cells); four VCs that own
// a share of the nodes (a quarter each, as racks and single nodes); the rest is free space
// that only opportunistic pods use. Workload: a random mix of gangs of 1-64 GPUs (priority 0-9,
// a share opportunistic) arriving one per iteration, each followed by one schedule() round;
// running gangs finish at random to hold the cluster at a target utilisation.
//
// Regimes (the default run prints them all; `--regime NAME` picks one):
//   room        5,000 nodes, VCs own 88 %, held at 80 % of all GPUs
//   full97      5,000 nodes, held at 97 %: most arrivals wait or preempt
//   backlog     5,000 nodes filled from 10,000 waiting gangs: those that cannot fit wait
//               (new arrivals refill the backlog) while one running gang finishes per round
//               (releases trickle in)
//   tenth       50,000 nodes whose VCs own 4,400 (a tenth), half the arrivals opportunistic
//   scale-N     N = 500, 5,000, 50,000 nodes, VCs growing with the cluster, held at 80 %
// `--nodes N --vc-share PCT --target PCT --opportunistic PCT --backlog GANGS --iterations I`
// runs one custom regime. `--borrowing on` turns borrowing on in each (scheduler_core.hpp note
// 9): every VC may lend all its cells and borrow as many of each type, reclaimTimeout 0s (the
// bench's clock is one millisecond per arrival, so 30 s would be 30,000 arrivals, and a gang
// that waits gives up: it would never see its reclaim; as the controller deletes victims at
// once here, a reclaim is a preemption).
//
// A decision is a bind, a wait or a preemption the core reports (a waiting pod is reported
// again only when its reason changes). Decisions/s = decisions per second of schedule() time;
// per-decision latency = a round's time shared by the decisions it made (a round that decided
// nothing counts as one decision); a round = one schedule() call.
#include "actors/scheduler/inspect_api.hpp"
#include "actors/scheduler/scheduler_core.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

using namespace kozmo::scheduler;
using bench_clock = std::chrono::steady_clock;

namespace {

struct regime {
  std::string name;
  int nodes = 5000;
  int vc_share = 88;      // % of the nodes the four VCs own
  int target = 80;        // % of all GPUs held busy
  int opportunistic = 10; // % of arrivals that are opportunistic
  int backlog = 0;        // gangs kept waiting
  int iterations = 100000;
  bool borrowing = false; // --borrowing on: each VC lends all its cells and may borrow as many
};

std::string config(const regime& r) {
  const int racks = r.nodes / 2;
  std::string y = R"(physicalCluster:
  cellTypes:
    V100-SWITCH: {childCellType: V100, childCellNumber: 2}
    V100-SOCKET: {childCellType: V100-SWITCH, childCellNumber: 2}
    V100-NODE: {childCellType: V100-SOCKET, childCellNumber: 2, isNodeLevel: true}
    V100-RACK: {childCellType: V100-NODE, childCellNumber: 2}
  physicalCells:
)";
  for (int k = 0; k < racks; ++k)
    y += "  - {cellType: V100-RACK, cellChildren: [{cellAddress: node-" + std::to_string(2 * k) +
         "}, {cellAddress: node-" + std::to_string(2 * k + 1) + "}]}\n";
  // Per VC: a quarter of the owned nodes, 5/11 of them as whole racks (as 250 racks + 600
  // nodes out of 1,100 at 5,000 nodes).
  const int per_vc = r.nodes * r.vc_share / 100 / 4;
  const int vc_racks = per_vc * 5 / 11 / 2;
  const int vc_nodes = per_vc - 2 * vc_racks;
  if (r.borrowing) y += "borrowing: {enabled: true, reclaimTimeout: 0s}\n";
  y += "virtualClusters:\n";
  for (int v = 0; v < 4; ++v) {
    y += "  vc" + std::to_string(v) + ":\n    virtualCells: [{cellType: V100-RACK, cellNumber: " +
         std::to_string(vc_racks) + "}, {cellType: V100-RACK.V100-NODE, cellNumber: " + std::to_string(vc_nodes) +
         "}]\n";
    if (r.borrowing) {
      const std::string limits = "{V100-RACK: " + std::to_string(vc_racks) + ", V100-NODE: " + std::to_string(vc_nodes) + "}";
      y += "    lendingLimit: " + limits + "\n    borrowingLimit: " + limits + "\n";
    }
  }
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
  long long used = 0;

  void add(const std::string& name, live_group g) {
    if (by_name.count(name)) return;
    used += g.gpus;
    position[name] = names.size();
    names.push_back(name);
    by_name.emplace(name, std::move(g));
  }
  void remove(scheduler_core& core, std::string name) { // by value: callers pass names[i]
    auto it = by_name.find(name);
    if (it == by_name.end()) return;
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

struct result {
  double load_ms = 0;
  long long rounds = 0, binds = 0, waits = 0, preempts = 0;
  double total_us = 0;
  std::vector<double> round_us, decision_us, gang64_us;
  std::size_t waiting_at_end = 0;
  double inspect_ms = 0;          // /v1/inspect/clusterstatus answered at the end
  std::size_t inspect_bytes = 0;
};

double pct(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

class workload {
public:
  workload(const regime& r, scheduler_core& core) : r_(r), core_(core), gpus_(static_cast<long long>(r.nodes) * 8) {}

  // One new gang; returns its name.
  std::string add_gang(int i) {
    static const int sizes[] = {1, 2, 4, 8, 16, 32, 64};
    static const int weights[] = {30, 20, 15, 15, 10, 6, 4};
    std::discrete_distribution<int> pick_size(std::begin(weights), std::end(weights));
    const int size = sizes[pick_size(rng_)];
    const int per_pod = std::min(size, 8);
    const int pods = size / per_pod;
    const bool opportunistic = static_cast<int>(rng_() % 100) < r_.opportunistic;
    live_group g;
    g.gpus = size;
    const std::string name = "g" + std::to_string(i);
    for (int p = 0; p < pods; ++p) {
      pod_view v;
      v.ref = {"bench", name + "-" + std::to_string(p), name + "-" + std::to_string(p)};
      v.spec.affinity_group = name;
      v.spec.virtual_cluster = "vc" + std::to_string(rng_() % 4);
      v.spec.priority = opportunistic ? -1 : static_cast<int>(rng_() % 10);
      v.spec.leaf_cell_number = per_pod;
      v.spec.members = {{pods, per_pod}};
      v.created_ms = i;
      (void)core_.add_pod(v);
      g.uids.push_back(v.ref.uid);
    }
    last_size_ = size;
    pending_.emplace(name, std::move(g));
    return name;
  }

  // One round; the gang `newest` gives up unless the regime keeps a backlog.
  void round(long long now, const std::string& newest, result* out) {
    const auto start = bench_clock::now();
    auto decisions = core_.schedule(now);
    const double us = std::chrono::duration<double, std::micro>(bench_clock::now() - start).count();
    std::vector<std::string> victims;
    long long decided = 0;
    for (const auto& d : decisions) {
      ++decided;
      if (d.kind == decision_kind::bind) {
        if (out) ++out->binds;
        core_.pod_bound(d.pod.uid);
        if (auto p = pending_.find(d.group); p != pending_.end()) {
          live_.add(d.group, std::move(p->second));
          pending_.erase(p);
          preempting_.erase(d.group);
          kept_.erase(d.group);
        }
      } else if (d.kind == decision_kind::preempt) {
        if (out) ++out->preempts;
        preempting_.insert(d.group);
        for (const auto& v : d.victims) victims.push_back(core_.group_of(v.uid));
      } else if (out) {
        ++out->waits;
      }
    }
    if (out) {
      ++out->rounds;
      out->total_us += us;
      out->round_us.push_back(us);
      const double share = us / static_cast<double>(std::max<long long>(decided, 1));
      for (long long k = 0; k < std::max<long long>(decided, 1); ++k) out->decision_us.push_back(share);
      if (!newest.empty() && last_size_ == 64) out->gang64_us.push_back(us);
    }
    // A gang that is neither placed nor preempting gives up (keeps the queue short), unless
    // the regime holds a backlog and it is not full yet.
    if (auto g = pending_.find(newest); g != pending_.end() && !preempting_.count(newest)) {
      if (static_cast<int>(kept_.size()) < r_.backlog) {
        kept_.insert(newest);
      } else {
        for (const auto& uid : g->second.uids) core_.remove_pod(uid);
        pending_.erase(g);
      }
    }
    // The controller deletes victims at once; the preemptor binds on a later round.
    for (const auto& v : victims) live_.remove(core_, v);
    hold_utilisation();
  }

  void hold_utilisation() {
    while (live_.used > gpus_ * r_.target / 100 && !live_.names.empty())
      live_.remove(core_, live_.names[rng_() % live_.names.size()]);
  }
  // One running gang finishes.
  void release_one() {
    if (!live_.names.empty()) live_.remove(core_, live_.names[rng_() % live_.names.size()]);
  }
  std::size_t waiting() const { return core_.waiting_pods(); }
  // A gang added without a round of its own joins the backlog.
  void keep(const std::string& name) { kept_.insert(name); }

private:
  const regime& r_;
  scheduler_core& core_;
  long long gpus_;
  std::mt19937 rng_{42};
  running live_;
  std::unordered_map<std::string, live_group> pending_; // added, not bound yet
  std::unordered_set<std::string> preempting_;
  std::unordered_set<std::string> kept_; // the backlog: waiting gangs that do not give up
  int last_size_ = 0;
};

result run(const regime& r) {
  result out;
  auto t0 = bench_clock::now();
  auto loaded = scheduler_core::load(config(r));
  if (!loaded) {
    std::fprintf(stderr, "config: %s\n", loaded.err().message.c_str());
    std::exit(1);
  }
  scheduler_core core = std::move(*loaded);
  out.load_ms = std::chrono::duration<double, std::milli>(bench_clock::now() - t0).count();
  workload w(r, core);
  int i = 0;
  // Warm-up (not measured): fill the cluster to its target, then build the backlog with all
  // its gangs added before one round (a round per gang would be quadratic in the backlog).
  const int warmup = std::max(2000, r.nodes / 2);
  for (; i < warmup; ++i) w.round(i, w.add_gang(i), nullptr);
  if (r.backlog > 0) {
    for (int k = 0; k < r.backlog; ++k, ++i) w.keep(w.add_gang(i));
    w.round(i, "", nullptr);
  }
  for (int k = 0; k < r.iterations; ++k, ++i) {
    if (r.backlog > 0) w.release_one();
    w.round(i, w.add_gang(i), &out);
  }
  out.waiting_at_end = w.waiting();
  const auto asked = bench_clock::now();
  const auto status = answer_inspect(core, "/v1/inspect/clusterstatus");
  out.inspect_ms = std::chrono::duration<double, std::milli>(bench_clock::now() - asked).count();
  out.inspect_bytes = status.body.size();
  return out;
}

void print_header() {
  std::printf("%-12s %7s %5s %5s %9s %8s %10s | %8s %8s %8s | %8s %8s %8s | %8s | %s\n", "regime", "nodes", "vc%",
              "full%", "waiting", "rounds", "decisions/s", "dec p50", "dec p99", "dec max", "rnd p50", "rnd p99",
              "rnd max", "64g p99", "binds/waits/preemptions");
}

void print_row(const regime& r, result& x) {
  const long long decisions = x.binds + x.waits + x.preempts;
  const double rate = x.total_us > 0 ? static_cast<double>(decisions) / (x.total_us / 1e6) : 0;
  char mix[64];
  std::snprintf(mix, sizeof mix, "%lld/%lld/%lld", x.binds, x.waits, x.preempts);
  std::printf("%-12s %7d %5d %5d %9zu %8lld %10.0f | %7.1fu %7.1fu %7.0fu | %7.1fu %7.1fu %7.0fu | %7.0fu | %s\n",
              r.name.c_str(), r.nodes, r.vc_share, r.target, x.waiting_at_end, x.rounds, rate, pct(x.decision_us, 0.5),
              pct(x.decision_us, 0.99), pct(x.decision_us, 1.0), pct(x.round_us, 0.5), pct(x.round_us, 0.99),
              pct(x.round_us, 1.0), pct(x.gang64_us, 0.99), mix);
  std::fflush(stdout);
}

std::vector<regime> standard_regimes(double scale) {
  auto n = [&](int iterations) { return std::max(10, static_cast<int>(iterations * scale)); };
  return {
      {"room", 5000, 88, 80, 10, 0, n(100000)},
      {"full97", 5000, 88, 97, 10, 0, n(100000)},
      {"backlog", 5000, 88, 100, 10, 10000, n(10)},
      {"tenth", 50000, 9, 80, 50, 0, n(20000)},
      {"scale-500", 500, 88, 80, 10, 0, n(100000)},
      {"scale-5000", 5000, 88, 80, 10, 0, n(100000)},
      {"scale-50000", 50000, 88, 80, 10, 0, n(20000)},
  };
}

int usage() {
  std::fprintf(stderr,
               "usage: scheduler_bench [--regime NAME] [--scale F] [--borrowing on|off]\n"
               "       scheduler_bench --nodes N [--vc-share PCT] [--target PCT] [--opportunistic PCT]\n"
               "                       [--backlog GANGS] [--iterations I]\n"
               "regimes: room full97 backlog tenth scale-500 scale-5000 scale-50000\n");
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  std::string only;
  double scale = 1.0;
  regime custom{"custom"};
  bool is_custom = false, borrowing = false;
  for (int a = 1; a < argc; ++a) {
    std::string flag = argv[a];
    if (a + 1 >= argc) return usage();
    const char* value = argv[++a];
    if (flag == "--regime") only = value;
    else if (flag == "--borrowing") {
      if (std::strcmp(value, "on") != 0 && std::strcmp(value, "off") != 0) return usage();
      borrowing = std::strcmp(value, "on") == 0;
    }
    else if (flag == "--scale") scale = std::atof(value);
    else {
      is_custom = true;
      const int v = std::atoi(value);
      if (flag == "--nodes") custom.nodes = v;
      else if (flag == "--vc-share") custom.vc_share = v;
      else if (flag == "--target") custom.target = v;
      else if (flag == "--opportunistic") custom.opportunistic = v;
      else if (flag == "--backlog") custom.backlog = v;
      else if (flag == "--iterations") custom.iterations = v;
      else return usage();
    }
  }
  std::vector<regime> regimes = is_custom ? std::vector<regime>{custom} : standard_regimes(scale);
  if (!only.empty()) {
    regimes.erase(std::remove_if(regimes.begin(), regimes.end(), [&](const regime& r) { return r.name != only; }),
                  regimes.end());
    if (regimes.empty()) return usage();
  }
  for (auto& r : regimes) r.borrowing = borrowing;
  std::printf("scheduler core, one thread; gangs of 1-64 GPUs; latencies in microseconds%s\n",
              borrowing ? "; borrowing on" : "");
  print_header();
  std::vector<std::pair<std::string, result>> done;
  for (const auto& r : regimes) {
    done.emplace_back(r.name, run(r));
    print_row(r, done.back().second);
  }
  std::printf("inspect /v1/inspect/clusterstatus at the end of each regime (answer_inspect, JSON body):\n");
  for (const auto& [name, x] : done)
    std::printf("  %-12s %8.1f ms %9.1f KiB\n", name.c_str(), x.inspect_ms, static_cast<double>(x.inspect_bytes) / 1024);
  return 0;
}
