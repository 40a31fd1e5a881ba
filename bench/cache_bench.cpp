// Output cache bench (issue 12): prints figures, asserts nothing.
//
//   build/bench/cache_bench [TASKS=1000] [NODES=50] [SEQUENTIAL=100]
//
// On an in-process `kozmo local` (embedded server, binder, NODES simulated nodes, the task
// controller with its cache store):
// 1. Warm-up: TASKS/2 cached container tasks with distinct keys (pods of 1 s) run to Succeeded,
//    which stores their outputs as TaskCacheEntry objects.
// 2. Burst: TASKS tasks created at once, every second one identical to a warm-up task (a hit),
//    the others new keys (they compute). Figure: create → all Succeeded, and the hits' latency.
// 3. One by one: SEQUENTIAL hits, each created after the previous one ended: a hit's latency with
//    nothing else running.
// KOZMO_BENCH_HITS_ONLY=1 makes every task of the burst a hit (to tell the hits' own cost from
// the misses' writes they queue behind).
// A hit's latency is the time from the bench's tasks watch showing its ADDED event to the same
// watch showing it Succeeded (target: ≤ 50 ms). The controller's own watch sees the create at
// the same moment as the bench's.
#include "bench/bench_support.hpp"
#include "actors/watch/watch_actor.hpp"
#include "k8s/client/client.hpp"
#include "k8s/model/custom_object.hpp"
#include "messages/atoms.hpp"
#include "messages/watch_messages.hpp"
#include "runtime/engine_internal.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

using namespace kozmo;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

// When the bench's watch first showed each task, and when it showed it Succeeded (and why).
struct seen_log {
  std::mutex mu;
  std::map<std::string, steady::time_point> added, done;
  std::map<std::string, std::string> reason;
};

caf::behavior task_watcher(caf::event_based_actor* self, caf::actor watch, std::shared_ptr<seen_log> log) {
  self->send(watch, atoms::subscribe_atom::value, watch::index_kind::all, std::string(),
             caf::actor_cast<caf::actor>(self));
  return {
      [log](object_event<k8s::custom_object>& ev) {
        if (!ev.object || ev.type == watch::event_type::deleted)
          return;
        auto now = steady::now();
        const auto& name = ev.object->metadata.name;
        std::lock_guard<std::mutex> lock(log->mu);
        log->added.emplace(name, now);
        const auto* status = ev.object->document.find("status");
        if (status && status->get_string("phase") == "Succeeded" && !log->done.count(name)) {
          log->done.emplace(name, now);
          log->reason.emplace(name, status->get_string("reason"));
        }
      },
  };
}

json::value cached_task(const std::string& name, int key) {
  return *json::parse(R"({"apiVersion":"kozmo.io/v1alpha1","kind":"TaskExecution","metadata":{"name":")" + name +
                      R"(","annotations":{"kozmo.io/sim-duration":"1s"}},"spec":{"type":"container",
    "container":{"image":"busybox","command":["sh","-c","tr a-z A-Z"],"resources":{"requests":{"cpu":"10m","memory":"16Mi"}}},
    "inputs":{"text":"s3://bench/in/)" + std::to_string(key) + R"("},"outputPrefix":"s3://bench/out/)" + name +
                      R"(/","cache":{"enabled":true,"version":"1"}}})");
}

struct latencies {
  std::vector<double> ms;
  void print(const char* what) {
    if (ms.empty()) {
      std::printf("  %s: none\n", what);
      return;
    }
    std::sort(ms.begin(), ms.end());
    auto at = [&](double q) { return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * ms.size()))]; };
    std::printf("  %s: %zu hits, latency p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms (target <= 50 ms)\n", what,
                ms.size(), at(0.5), at(0.9), at(0.99), ms.back());
  }
};

std::size_t done_count(seen_log& log, const std::vector<std::string>& names) {
  std::lock_guard<std::mutex> lock(log.mu);
  return std::count_if(names.begin(), names.end(), [&](const std::string& n) { return log.done.count(n) > 0; });
}

latencies hit_latencies(seen_log& log, const std::vector<std::string>& hits) {
  latencies l;
  std::lock_guard<std::mutex> lock(log.mu);
  for (const auto& n : hits)
    if (log.done.count(n) && log.added.count(n) && log.reason[n] == "CacheHit")
      l.ms.push_back(std::chrono::duration<double, std::milli>(log.done[n] - log.added[n]).count());
  return l;
}

} // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  int nodes = argc > 2 ? std::atoi(argv[2]) : 50;
  int sequential = argc > 3 ? std::atoi(argv[3]) : 100;
  engine e(bench::local_cluster(nodes, true));
  if (auto st = e.start(); !st) {
    std::cerr << "engine: " << st.err().message << "\n";
    return 1;
  }
  auto user = bench::user_client(e); // the bench creates and watches as a user does
  auto log = std::make_shared<seen_log>();
  watch::watch_config wc;
  wc.resource = {"kozmo.io", "v1alpha1", "taskexecutions", "", "", ""};
  auto tasks_watch = watch::spawn_watch<k8s::custom_object>(engine_internal::system(e), user, wc);
  auto watcher = engine_internal::system(e).spawn(task_watcher, tasks_watch, log);
  const client::resource_ref where{"kozmo.io", "v1alpha1", "taskexecutions", "default", "", ""};

  // 1. Warm-up.
  std::vector<json::value> bodies;
  std::vector<std::string> names;
  for (int i = 0; i < n / 2; ++i) {
    names.push_back("warm-" + std::to_string(i));
    bodies.push_back(cached_task(names.back(), i));
  }
  auto start = steady::now();
  bench::create_all(*user, where, bodies);
  double warm = bench::seconds_until([&] { return done_count(*log, names) >= names.size(); }, 600s);
  std::printf("cache_bench: %d simulated nodes\n", nodes);
  std::printf("  warm-up: %zu cached tasks with distinct keys (pods of 1 s) -> all Succeeded %.2f s\n", names.size(),
              warm < 0 ? -1.0 : std::chrono::duration<double>(steady::now() - start).count());

  // 2. Burst: every second one a hit.
  bodies.clear();
  names.clear();
  std::vector<std::string> hits;
  for (int i = 0; i < n; ++i) {
    bool hit = std::getenv("KOZMO_BENCH_HITS_ONLY") ? true : i % 2 == 0;
    names.push_back((hit ? "hit-" : "miss-") + std::to_string(i));
    if (hit)
      hits.push_back(names.back());
    bodies.push_back(cached_task(names.back(), hit ? i % (n / 2) : n + i));
  }
  start = steady::now();
  bench::create_all(*user, where, bodies);
  double answered = std::chrono::duration<double>(steady::now() - start).count();
  double burst = bench::seconds_until([&] { return done_count(*log, names) >= names.size(); }, 600s);
  double wall = std::chrono::duration<double>(steady::now() - start).count();
  double hits_wall = 0;
  {
    std::lock_guard<std::mutex> lock(log->mu);
    for (const auto& h : hits)
      if (log->done.count(h))
        hits_wall = std::max(hits_wall, std::chrono::duration<double>(log->done[h] - start).count());
  }
  std::printf("  burst: %d tasks at once, %s: creates answered %.2f s, create -> all Succeeded "
              "%.2f s%s; the %zu hits all Succeeded after %.2f s\n",
              n, std::getenv("KOZMO_BENCH_HITS_ONLY") ? "every one a hit" : "every second one a hit", answered, wall, burst < 0 ? " (TIMED OUT)" : "", hits.size(), hits_wall);
  hit_latencies(*log, hits).print("burst");

  // 3. One by one.
  std::vector<std::string> seq;
  for (int i = 0; i < sequential; ++i) {
    std::string name = "seq-" + std::to_string(i);
    seq.push_back(name);
    (void)user->create(where, cached_task(name, i % (n / 2)));
    bench::seconds_until([&] { return done_count(*log, {name}) == 1; }, 30s);
  }
  hit_latencies(*log, seq).print("one by one");
  caf::anon_send_exit(watcher, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(tasks_watch, caf::exit_reason::user_shutdown);
  return 0;
}
