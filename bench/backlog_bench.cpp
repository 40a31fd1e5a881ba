// A small gang behind a backlog, in `kozmo local` (in-process engine: embedded API server,
// simulated nodes of 8 GPUs, Kozmo's GPU scheduler in direct mode). Prints figures, asserts
// nothing.
//
//   build-*/bench/backlog_bench [NODES=100] [BACKLOG=5000] [TRIALS=5]
//
// The cluster is filled with 4-GPU pods, then every second one is deleted: most nodes keep 4
// free GPUs (a node that lost both of its pods is whole again and takes one backlog pod). A small gang (2 pods x 2 GPUs) is created and timed from its creates to both pods
// bound, TRIALS times (each deleted again). Then BACKLOG pods of 8 GPUs are created — they can
// never fit while every node is half used, though their VC's quota says otherwise — and the
// small gang is timed again behind them.
#include "bench/bench_support.hpp"
#include "runtime/engine_internal.hpp"
#include "runtime/hived_shape.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

using namespace kozmo;
using namespace std::chrono_literals;
using bench_clock = std::chrono::steady_clock;

namespace {

const client::resource_ref pods_ref{"", "v1", "pods", "default", "", ""};

std::string pod_json(const std::string& name, int gpus, const std::string& gang, const std::string& members) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","annotations":{"kozmo.io/sim-duration":"forever","kozmo.io/gang":")" + gang +
         R"(","kozmo.io/gang-members":")" + members +
         R"("}},"spec":{"schedulerName":"kozmo","containers":[{"name":"c","image":"bench:1","resources":{"limits":{"nvidia.com/gpu":")" +
         std::to_string(gpus) + R"("}}}]}})";
}

bool bound(client::client& cli, const std::string& name) {
  auto r = cli.get({"", "v1", "pods", "default", name, ""});
  return r && r->at_path({"spec", "nodeName"}) && r->at_path({"spec", "nodeName"})->is_string() &&
         !r->at_path({"spec", "nodeName"})->as_string().empty();
}

int count_bound(client::client& cli, const std::string& prefix) {
  auto list = cli.list(pods_ref);
  int n = 0;
  if (!list) return -1;
  for (const auto& p : list->find("items")->as_array()) {
    const json::value* node = p.at_path({"spec", "nodeName"});
    const json::value* name = p.at_path({"metadata", "name"});
    if (name && name->as_string().rfind(prefix, 0) == 0 && node && node->is_string() && !node->as_string().empty()) ++n;
  }
  return n;
}

// Create -> both pods bound, in ms; -1 when not within 60 s.
double small_gang(client::client& cli, int trial) {
  const std::string gang = "small-" + std::to_string(trial);
  const auto start = bench_clock::now();
  for (int p = 0; p < 2; ++p)
    (void)cli.create(pods_ref, *json::parse(pod_json(gang + "-" + std::to_string(p), 2, gang, "2x2")));
  double ms = -1;
  while (bench_clock::now() - start < 60s) {
    if (bound(cli, gang + "-0") && bound(cli, gang + "-1")) {
      ms = std::chrono::duration<double, std::milli>(bench_clock::now() - start).count();
      break;
    }
    std::this_thread::sleep_for(2ms);
  }
  for (int p = 0; p < 2; ++p) (void)cli.remove({"", "v1", "pods", "default", gang + "-" + std::to_string(p), ""});
  std::this_thread::sleep_for(300ms);  // the deletes reach the scheduler
  return ms;
}

void report(const char* what, std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  std::printf("  %-34s median %7.1f ms  min %7.1f  max %7.1f  (", what, ms[ms.size() / 2], ms.front(), ms.back());
  for (double m : ms) std::printf(" %.0f", m);
  std::printf(" )\n");
}

} // namespace

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 100;
  const int backlog = argc > 2 ? std::atoi(argv[2]) : 5000;
  const int trials = argc > 3 ? std::atoi(argv[3]) : 5;
  engine_options o;
  o.api.embedded = true;
  o.parts.nodes = kozmo::uniform_nodes(nodes, 8, "node");
  for (auto& n : o.parts.nodes) n.pods = "500";
  o.parts.scheduler_config = runtime::hived_config_from_shape(kozmo::cluster_shape_of(o.parts.nodes));
  o.performance.client_qps = 50000;
  engine e(o);
  if (auto st = e.start(); !st) {
    std::cerr << "engine: " << st.err().message << "\n";
    return 1;
  }
  auto cli = engine_internal::api(e);
  for (int i = 0; i < 400; ++i) {
    auto list = cli->list({"", "v1", "nodes", "", "", ""});
    if (list && static_cast<int>(list->find("items")->as_array().size()) == nodes) break;
    std::this_thread::sleep_for(50ms);
  }
  // Half of every node: fill with 4-GPU pods, then delete every second one.
  std::vector<json::value> fill;
  for (int i = 0; i < 2 * nodes; ++i)
    fill.push_back(*json::parse(pod_json("fill-" + std::to_string(i), 4, "fill-" + std::to_string(i), "1x4")));
  std::size_t failed = bench::create_all(*cli, pods_ref, fill);
  const auto fill_start = bench_clock::now();
  while (count_bound(*cli, "fill-") < 2 * nodes && bench_clock::now() - fill_start < 120s) std::this_thread::sleep_for(50ms);
  for (int i = 0; i < 2 * nodes; i += 2) (void)cli->remove({"", "v1", "pods", "default", "fill-" + std::to_string(i), ""});
  std::this_thread::sleep_for(1s);
  std::printf("backlog_bench: %d nodes x 8 GPUs, each half used (%zu fill creates failed)\n", nodes, failed);

  std::vector<double> alone, behind;
  for (int t = 0; t < trials; ++t) alone.push_back(small_gang(*cli, t));

  std::vector<json::value> waiting;
  for (int i = 0; i < backlog; ++i)
    waiting.push_back(*json::parse(pod_json("wait-" + std::to_string(i), 8, "wait-" + std::to_string(i), "1x8")));
  const auto backlog_start = bench_clock::now();
  failed = bench::create_all(*cli, pods_ref, waiting);
  const double create_s = std::chrono::duration<double>(bench_clock::now() - backlog_start).count();
  std::this_thread::sleep_for(3s);  // the scheduler has seen them and answered their waits
  for (int t = 0; t < trials; ++t) behind.push_back(small_gang(*cli, trials + t));

  std::printf("  backlog: %d pods of 8 GPUs created in %.1f s (%zu failed), %d of them bound (a node left whole)\n", backlog, create_s,
              failed, count_bound(*cli, "wait-"));
  std::printf("  a gang of 2 pods x 2 GPUs, create -> both bound:\n");
  report("without the backlog", alone);
  report("behind the backlog", behind);
  std::printf("  ratio of the medians: %.2f (target <= 2)\n",
              [&] {
                auto a = alone, b = behind;
                std::sort(a.begin(), a.end());
                std::sort(b.begin(), b.end());
                return b[b.size() / 2] / a[a.size() / 2];
              }());
  e.stop();
  return 0;
}
