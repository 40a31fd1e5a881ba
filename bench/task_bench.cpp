// Task controller bench: prints figures, asserts nothing.
//
//   build-*/bench/task_bench [TASKS=10000] [NODES=50] [IDLE=100000] [FLOOD_TASKS=1000] [FLOOD_EVENTS=10]
//
// 1. Memory per idle TaskExecution actor: IDLE task actors spawned directly (no supervisor)
//    for tasks that have ended (objects made beforehand, as the watch cache holds them and the
//    actors only share them). The figure is the growth of the allocator's in-use bytes
//    (mallinfo2().uordblks) across the spawn, divided by IDLE: CAF's per-actor cost (control
//    block, mailbox, behaviour) and the actor's state. Target: ≤ 4 KiB.
// 2. TASKS container tasks created at once on an in-process `kozmo local` (embedded server,
//    binder, NODES simulated nodes), pods of 1 s: create to all Succeeded; beside it the time
//    the same kind of server takes for TASKS bare pods asking for what a task pod asks for (the
//    platform's default 1 cpu, 1Gi), through the same nodes. Ratio bare / tasks; target ≥ 0.8.
//    Each side also prints the CPU seconds and context switches the process spent on it.
//    KOZMO_BENCH_ONLY=tasks (or =bare) runs one side alone, for a profile.
// 3. Rounds under a flood of pod events: FLOOD_TASKS tasks whose pods run forever, then every
//    pod is patched FLOOD_EVENTS times (a label: a MODIFIED event through the API server, the
//    pods watch, the supervisor's routing, the task actor) as fast as the client sends them.
//    Rounds per second is what the task actors ran meanwhile (kozmo_task_rounds_total; a round
//    may take in several events). Beside it, the pure machinery's rounds per second on one
//    thread (run_round on a running task's world), the ceiling.
#include "bench/bench_support.hpp"
#include "actors/controller/clock.hpp"
#include "actors/controller/executor_actor.hpp"
#include "actors/tasks/machinery.hpp"
#include "actors/tasks/task_actor.hpp"
#include "k8s/client/client.hpp"
#include "k8s/metrics/registry.hpp"
#include "k8s/model/codec.hpp"
#include "messages/atoms.hpp"
#include "messages/watch_messages.hpp"
#include "runtime/engine_internal.hpp"

#include <caf/all.hpp>

#include <malloc.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>
#include <sys/resource.h>
#include <unistd.h>

using namespace kozmo;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

using count_atom = caf::atom_constant<caf::atom("count")>;

// CPU seconds this process has used (user + system).
double cpu_seconds() {
  std::ifstream stat("/proc/self/stat");
  std::string field;
  double ticks = 0;
  for (int i = 1; i <= 15 && stat >> field; ++i)
    if (i == 14 || i == 15)
      ticks += std::strtod(field.c_str(), nullptr);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Context switches this process has made (voluntary + involuntary, summed over its threads): a
// cost whose price is set by the kernel and the hypervisor, so one way two hosts can differ.
long context_switches() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_nvcsw + ru.ru_nivcsw;
}

long rss_kib() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// A series' value from the process's metrics text ("kozmo_task_rounds_total ").
double metric(const std::string& series) {
  std::string text = metrics::render();
  auto at = text.find("\n" + series);
  if (at == std::string::npos)
    return 0;
  return std::strtod(text.c_str() + at + 1 + series.size(), nullptr);
}

double rounds_so_far() { return metric("kozmo_task_rounds_total "); }

// Requests every client of the process has had answered (or failed), all methods and codes: in
// kozmo local each costs the embedded server and a client alike, so where a run is CPU-bound its
// time follows this count.
double requests_so_far() {
  const std::string series = "\nkozmo_client_requests_total{";
  std::string text = metrics::render();
  double sum = 0;
  for (auto at = text.find(series); at != std::string::npos; at = text.find(series, at + 1)) {
    auto value = text.find("} ", at);
    if (value != std::string::npos)
      sum += std::strtod(text.c_str() + value + 2, nullptr);
  }
  return sum;
}

using bench::heap_mib;
using bench::seconds_until;

// --- 1. idle actors -------------------------------------------------------------------------------

void idle_memory(int n) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto tcfg = std::make_shared<tasks::task_actor_config>();
  tcfg->platform = std::make_shared<const tasks::platform_config>();
  tcfg->plugins = std::make_shared<const tasks::plugin_registry>(tasks::plugin_registry::with_builtins());
  controller::child_tools tools{caf::actor{}, caf::actor{}, controller::real_clock()};
  std::vector<std::shared_ptr<const k8s::custom_object>> objects;
  objects.reserve(n);
  for (int i = 0; i < n; ++i) {
    auto doc = json::parse(R"({"apiVersion":"kozmo.io/v1alpha1","kind":"TaskExecution","metadata":{"name":"t)" +
                           std::to_string(i) + R"(","namespace":"bench","uid":"u)" + std::to_string(i) +
                           R"(","resourceVersion":"5"},"spec":{"type":"container","container":{"image":"x"}},
      "status":{"phase":"Succeeded","phaseVersion":0,"attempt":0,"systemFailures":0,"reason":"","message":"done",
      "attempts":[],"history":[]}})");
    objects.push_back(std::make_shared<const k8s::custom_object>(*k8s::from_json<k8s::custom_object>(*doc)));
  }
  double rounds_before = rounds_so_far();
  double before = heap_mib();
  long rss_before = rss_kib();
  std::vector<caf::actor> actors;
  actors.reserve(n);
  for (int i = 0; i < n; ++i)
    actors.push_back(tasks::spawn_task_actor(sys, nullptr, tcfg, tools, objects[i]));
  // Each actor runs its first round (which finds nothing to do) and then idles.
  seconds_until([&] { return rounds_so_far() - rounds_before >= n; }, 120s);
  std::this_thread::sleep_for(200ms);
  double after = heap_mib();
  long rss_after = rss_kib();
  std::printf("task_bench: %d idle TaskExecution actors\n", n);
  std::printf("  heap per actor:  %.2f KiB (target <= 4 KiB)\n", (after - before) * 1024.0 / n);
  std::printf("  RSS per actor:   %.2f KiB\n", static_cast<double>(rss_after - rss_before) / n);
  for (auto& a : actors)
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

// --- 2. throughput --------------------------------------------------------------------------------

// Pods by name prefix: seen, bound to a node, Succeeded (the timeline of a run).
struct progress_state {
  std::set<std::string> seen, bound, done;
};
caf::behavior pod_progress(caf::stateful_actor<progress_state>* self, caf::actor watch, std::string prefix) {
  self->send(watch, atoms::subscribe_atom::value, watch::index_kind::all, std::string(),
             caf::actor_cast<caf::actor>(self));
  return {
      [self, prefix](object_event<k8s::pod>& ev) {
        if (!ev.object || !ev.object->metadata.name.starts_with(prefix) || ev.type == watch::event_type::deleted)
          return;
        const auto& uid = ev.object->metadata.uid;
        self->state.seen.insert(uid);
        if (!ev.object->spec.node_name.empty())
          self->state.bound.insert(uid);
        if (ev.object->status.phase == "Succeeded")
          self->state.done.insert(uid);
      },
      [self](count_atom) -> caf::result<std::uint64_t, std::uint64_t, std::uint64_t> {
        return {self->state.seen.size(), self->state.bound.size(), self->state.done.size()};
      },
  };
}

struct pod_counts {
  std::uint64_t seen = 0, bound = 0, done = 0;
};
pod_counts count(caf::actor_system& sys, const caf::actor& progress) {
  pod_counts c;
  caf::scoped_actor self{sys};
  self->request(progress, 10s, count_atom::value)
      .receive([&](std::uint64_t seen, std::uint64_t bound, std::uint64_t done) { c = {seen, bound, done}; },
               [&](caf::error&) {});
  return c;
}

using bench::local_cluster;

void wait_for_nodes(engine& e, int nodes) {
  for (int i = 0; i < 200; ++i) {
    auto list = engine_internal::api(e)->list({"", "v1", "nodes", "", "", ""});
    if (list && static_cast<int>(list->find("items")->as_array().size()) == nodes)
      return;
    std::this_thread::sleep_for(50ms);
  }
}

// Creates `bodies` at once; returns the seconds from the first create until `done` (given the
// counts of the pods named `prefix`) reaches their number. KOZMO_BENCH_TIMELINE=1 prints the
// pods seen / bound / Succeeded every second, and the client's requests at the end.
double run_to_succeeded(engine& e, const client::resource_ref& where, std::vector<json::value>& bodies,
                        const std::string& prefix, const std::function<std::uint64_t(const pod_counts&)>& done,
                        double& answered_at, double& requests) {
  const char* tl = std::getenv("KOZMO_BENCH_TIMELINE");
  const bool timeline = tl && std::string(tl) == "1";
  auto progress = engine_internal::system(e).spawn(pod_progress, engine_internal::pods_watch(e), prefix);
  auto start = steady::now();
  double cpu_start = cpu_seconds();
  long switches_start = context_switches();
  double requests_start = requests_so_far();
  // Created as a user does, on a client of its own (bench::user_client).
  const std::size_t failed = bench::create_all(*bench::user_client(e), where, bodies);
  answered_at = std::chrono::duration<double>(steady::now() - start).count();
  if (failed)
    std::printf("  (%zu creates failed)\n", failed);
  auto next_line = steady::now();
  double t = seconds_until(
      [&] {
        auto c = count(engine_internal::system(e), progress);
        if (timeline && steady::now() >= next_line) {
          next_line += 1s;
          std::printf("    %5.1f s: pods %llu seen, %llu bound, %llu Succeeded; %llu objects done\n",
                      std::chrono::duration<double>(steady::now() - start).count(),
                      static_cast<unsigned long long>(c.seen), static_cast<unsigned long long>(c.bound),
                      static_cast<unsigned long long>(c.done), static_cast<unsigned long long>(done(c)));
        }
        return done(c) >= bodies.size();
      },
      600s);
  caf::anon_send_exit(progress, caf::exit_reason::user_shutdown);
  double wall = std::chrono::duration<double>(steady::now() - start).count();
  if (timeline) {
    std::string text = metrics::render();
    std::size_t at = 0;
    while ((at = text.find("\nkozmo_client_requests_total{", at)) != std::string::npos) {
      auto end = text.find('\n', at + 1);
      std::printf("    %s\n", text.substr(at + 1, end - at - 1).c_str());
      at = end;
    }
  }
  requests = requests_so_far() - requests_start;
  std::printf("    (%s: %.1f CPU seconds in %.1f s, %ld context switches, %.0f requests)\n", where.resource.c_str(),
              cpu_seconds() - cpu_start, wall, context_switches() - switches_start, requests);
  return t < 0 ? -1 : wall;
}

void throughput(int n, int nodes) {
  const std::string annotations = R"({"kozmo.io/sim-duration":"1s"})";
  double bare = -1, tasks = -1, bare_created = 0, tasks_created = 0, bare_requests = 0, tasks_requests = 0;
  // KOZMO_BENCH_ONLY=tasks or =bare: one side alone (to profile it).
  const char* only_env = std::getenv("KOZMO_BENCH_ONLY");
  const std::string only = only_env ? only_env : "";
  if (only != "tasks") {
    engine e(local_cluster(nodes, false));
    if (auto st = e.start(); !st) {
      std::cerr << "engine: " << st.err().message << "\n";
      return;
    }
    wait_for_nodes(e, nodes);
    std::vector<json::value> bodies;
    for (int i = 0; i < n; ++i)
      bodies.push_back(*json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"bare-)" + std::to_string(i) +
                                    R"(","annotations":)" + annotations + R"(},"spec":{"restartPolicy":"Never",
        "containers":[{"name":"primary","image":"busybox","resources":{"requests":{"cpu":"1","memory":"1Gi"},
        "limits":{"cpu":"1","memory":"1Gi"}}}]}})"));
    bare = run_to_succeeded(e, {"", "v1", "pods", "default", "", ""}, bodies, "bare-",
                            [](const pod_counts& c) { return c.done; }, bare_created, bare_requests);
  }
  if (only != "bare") {
    engine e(local_cluster(nodes, true));
    if (auto st = e.start(); !st) {
      std::cerr << "engine: " << st.err().message << "\n";
      return;
    }
    wait_for_nodes(e, nodes);
    // Counted from the task controller's metric: a task counts when the status write that made it
    // Succeeded is answered (a second watch of the tasks would add its decoding to the figure).
    const double finished_before = metric("kozmo_tasks_finished_total{outcome=\"succeeded\"} ");
    std::vector<json::value> bodies;
    for (int i = 0; i < n; ++i)
      bodies.push_back(*json::parse(R"({"apiVersion":"kozmo.io/v1alpha1","kind":"TaskExecution","metadata":{"name":"task-)" +
                                    std::to_string(i) + R"(","annotations":)" + annotations +
                                    R"(},"spec":{"type":"container","container":{"image":"busybox"}}})"));
    double rounds_before = rounds_so_far();
    tasks = run_to_succeeded(
        e, {"kozmo.io", "v1alpha1", "taskexecutions", "default", "", ""}, bodies, "task-",
        [&](const pod_counts&) {
          return static_cast<std::uint64_t>(metric("kozmo_tasks_finished_total{outcome=\"succeeded\"} ") - finished_before);
        },
        tasks_created, tasks_requests);
    double rounds = rounds_so_far() - rounds_before;
    std::printf("task_bench: %d container tasks at once on %d simulated nodes (pods of 1 s, 1 cpu / 1Gi each)\n", n,
                nodes);
    std::printf("  bare pods:  creates answered %.2f s, create -> all Succeeded %.2f s\n", bare_created, bare);
    std::printf("  tasks:      creates answered %.2f s, create -> all Succeeded %.2f s (%.1f rounds per task)\n",
                tasks_created, tasks, rounds / n);
    if (bare > 0 && tasks > 0)
      std::printf("  ratio bare / tasks: %.2f (target >= 0.8)\n", bare / tasks);
    // Where both runs are CPU-bound, the ratio above follows this one (docs/benchmarks.md, "Task executions").
    if (bare > 0 && tasks > 0 && tasks_requests > 0)
      std::printf("  requests in each run: %.1f per bare pod, %.1f per task (ratio %.2f)\n", bare_requests / n,
                  tasks_requests / n, bare_requests / tasks_requests);
  }
}

// --- 3. a flood of pod events ---------------------------------------------------------------------

void flood(int n, int events, int nodes) {
  engine e(local_cluster(nodes, true));
  if (auto st = e.start(); !st) {
    std::cerr << "engine: " << st.err().message << "\n";
    return;
  }
  wait_for_nodes(e, nodes);
  auto cli = engine_internal::api(e);
  for (int i = 0; i < n; ++i)
    cli->create({"kozmo.io", "v1alpha1", "taskexecutions", "default", "", ""},
                *json::parse(R"({"apiVersion":"kozmo.io/v1alpha1","kind":"TaskExecution","metadata":{"name":"flood-)" +
                             std::to_string(i) +
                             R"(","annotations":{"kozmo.io/sim-duration":"forever"}},"spec":{"type":"container",
                               "container":{"image":"busybox","resources":{"requests":{"cpu":"10m","memory":"16Mi"}}}}})"),
                [](expected<json::value>) {});
  auto running = [&] {
    client::list_options lo;
    lo.label_selector = "kozmo.io/task-name";
    auto list = cli->list({"", "v1", "pods", "default", "", ""}, lo);
    int r = 0;
    if (list)
      for (const auto& p : list->find("items")->as_array())
        r += p.at_path({"status"}) && p.at_path({"status"})->get_string("phase") == "Running";
    return r;
  };
  if (seconds_until([&] { return running() >= n; }, 300s) < 0) {
    std::printf("task_bench: flood: the tasks' pods did not all run\n");
    return;
  }
  std::this_thread::sleep_for(2s); // the task actors' own writes settle
  double rounds_before = rounds_so_far();
  std::atomic<int> answered{0};
  auto start = steady::now();
  for (int k = 0; k < events; ++k)
    for (int i = 0; i < n; ++i) {
      json::value patch;
      patch["metadata"]["labels"]["flood"] = std::to_string(k);
      cli->patch({"", "v1", "pods", "default", "flood-" + std::to_string(i) + "-0", ""}, client::patch_type::merge,
                 patch, {}, [&](expected<json::value>) { ++answered; });
    }
  seconds_until([&] { return answered == n * events; }, 600s);
  double sent = std::chrono::duration<double>(steady::now() - start).count();
  // The rounds the events cause follow within a moment of the last write.
  double last = rounds_so_far(), quiet_since = 0;
  auto settle_start = steady::now();
  while (std::chrono::duration<double>(steady::now() - settle_start).count() < 30) {
    std::this_thread::sleep_for(100ms);
    double now = rounds_so_far();
    if (now == last) {
      if ((quiet_since += 0.1) >= 0.5)
        break;
    } else {
      quiet_since = 0;
      last = now;
    }
  }
  double took = std::chrono::duration<double>(steady::now() - start).count() - quiet_since;
  double rounds = rounds_so_far() - rounds_before;
  std::printf("task_bench: a flood of %d pod events (%d running tasks x %d label patches)\n", n * events, n, events);
  std::printf("  events written in %.2f s (%.0f/s, the API server's pace)\n", sent, n * events / sent);
  std::printf("  task rounds: %.0f in %.2f s = %.0f rounds/s (%.2f events per round)\n", rounds, took, rounds / took,
              rounds > 0 ? n * events / rounds : 0.0);
}

// The machinery alone: one running task's round, again and again, on one thread.
void pure_rounds() {
  auto task = k8s::from_json<k8s::custom_object>(*json::parse(
      R"({"apiVersion":"kozmo.io/v1alpha1","kind":"TaskExecution","metadata":{"name":"t","namespace":"bench","uid":"u",
      "resourceVersion":"5","finalizers":["kozmo.io/task-execution"]},"spec":{"type":"container","container":{"image":"x"}}})"));
  tasks::platform_config cfg;
  auto plugins = tasks::plugin_registry::with_builtins();
  std::vector<std::shared_ptr<k8s::pod>> pods;
  // Settle the task as the actor would: apply each round's status and pod until nothing changes.
  auto world = [&] {
    tasks::task_world w;
    w.task = &*task;
    for (const auto& p : pods)
      w.pods.push_back(p.get());
    w.config = &cfg;
    w.plugins = &plugins;
    w.now = std::chrono::system_clock::now();
    return w;
  };
  for (int i = 0; i < 5; ++i) {
    auto r = tasks::run_round(world());
    if (r.status)
      task->document["status"] = tasks::status_to_json(*r.status);
    for (auto& c : r.creates) {
      auto p = k8s::from_json<k8s::pod>(c.object);
      p->metadata.uid = "pod-uid";
      p->status.phase = "Running";
      k8s::container_status cs;
      cs.name = "primary";
      cs.state.running = k8s::container_state_running{};
      p->status.container_statuses = {cs};
      pods.push_back(std::make_shared<k8s::pod>(std::move(*p)));
    }
  }
  const int rounds = 200000;
  auto start = steady::now();
  std::size_t decided = 0;
  for (int i = 0; i < rounds; ++i) {
    auto r = tasks::run_round(world());
    decided += r.status ? 1 : 0;
  }
  double took = std::chrono::duration<double>(steady::now() - start).count();
  std::printf("  the machinery alone: %.0f rounds/s on one thread (%zu of %d rounds decided a change)\n",
              rounds / took, decided, rounds);
}

} // namespace

int main(int argc, char** argv) {
  int tasks = argc > 1 ? std::atoi(argv[1]) : 10000;
  int nodes = argc > 2 ? std::atoi(argv[2]) : 50;
  int idle = argc > 3 ? std::atoi(argv[3]) : 100000;
  int flood_tasks = argc > 4 ? std::atoi(argv[4]) : 1000;
  int flood_events = argc > 5 ? std::atoi(argv[5]) : 10;
  if (idle > 0)
    idle_memory(idle);
  if (tasks > 0)
    throughput(tasks, nodes);
  if (flood_tasks > 0) {
    flood(flood_tasks, flood_events, nodes);
    pure_rounds();
  }
  return 0;
}
