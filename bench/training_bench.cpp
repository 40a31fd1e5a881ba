// Training controller bench: N concurrent PyTorchJobs of 4 pods (1 master + 3 workers) on an
// in-process engine (embedded API server, simulated kubelets, training supervisor), from the
// first create to every pod Running; then the memory an idle job actor costs. Prints figures,
// asserts nothing.
//
//   build-*/bench/training_bench [JOBS=1000] [NODES=50] [IDLE_ACTORS=10000] [cpu|gpu] [preempt=N] [cordon=N] [cycles=N] [restart]
//
// After every pod runs: `preempt=N` (gpu, with JOBS = NODES so the cluster is full) creates N
// jobs of priority 10 that must preempt; `cordon=N` cordons N nodes (their GPUs turn bad, and
// the scheduler re-dooms as gangs go); `restart` stops the engine and starts a new one on the same data
// (the server's --data-dir) and times the scheduler's recovery; then every job is deleted and
// the garbage collection of its pods timed, and the heap compared with its size before the
// jobs. `cycles=N` runs the same jobs N times on the same engine (without restart), printing
// the heap after each teardown. KOZMO_BENCH_COUNT_OBJECTS=1 also lists what is left in the
// server after the teardown.
//
// cpu (the default): CPU-only pods, bound first-fit by the binder, NODES nodes.
// gpu: every pod asks for 2 GPUs, so each job is one gang of 4x2 that Kozmo's GPU scheduler
// (direct mode, the configuration `kozmo local` derives from the nodes) places all at once
// and its cellgroup actor binds; NODES nodes of 8 GPUs (pass JOBS nodes for room for all).
//
// Memory per idle job actor: N job actors are spawned directly (no supervisor), each told
// about 4 pods and 4 services (objects made beforehand, as the watch caches hold them and the
// actors only share them), for a job managed by someone else so that no pass writes anything.
// The figure is the growth of the allocator's in-use bytes (mallinfo2().uordblks) across the
// spawn, divided by N; the RSS growth is printed beside it. Both include CAF's per-actor cost
// (actor control block, mailbox, behavior) and the actor's own state.
#include "bench/bench_support.hpp"
#include "actors/controller/executor_actor.hpp"
#include "actors/training/training_job_actor.hpp"
#include "actors/watch/object_traits.hpp"
#include "actors/watch/watch_actor.hpp"
#include "k8s/client/client.hpp"
#include "messages/atoms.hpp"
#include "messages/scheduler_messages.hpp"
#include "messages/watch_messages.hpp"
#include "runtime/engine_internal.hpp"
#include "runtime/hived_shape.hpp"

#include <caf/all.hpp>

#include <malloc.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>
#include <unistd.h>

using namespace kozmo;
using namespace std::chrono_literals;

namespace {

using count_atom = caf::atom_constant<caf::atom("count")>;

// Counts the pods bound to a node and those in phase Running (by uid) from a pods watch; only
// the pods whose name starts with `prefix`.
struct counter_state {
  std::set<std::string> seen;
  std::set<std::string> live; // not deleted
  std::set<std::string> bound;
  std::set<std::string> running;
};

caf::behavior running_counter(caf::stateful_actor<counter_state>* self, caf::actor pods_watch,
                             std::string prefix) {
  self->send(pods_watch, atoms::subscribe_atom::value, watch::index_kind::all, std::string(),
             caf::actor_cast<caf::actor>(self));
  return {
      [self, prefix](object_event<k8s::pod>& ev) {
        if (!ev.object->metadata.name.starts_with(prefix))
          return;
        const auto& uid = ev.object->metadata.uid;
        bool live = ev.type != watch::event_type::deleted;
        self->state.seen.insert(uid);
        if (live)
          self->state.live.insert(uid);
        else
          self->state.live.erase(uid);
        if (live && ev.object->status.phase == "Running")
          self->state.running.insert(uid);
        else
          self->state.running.erase(uid);
        if (live && !ev.object->spec.node_name.empty())
          self->state.bound.insert(uid);
        else
          self->state.bound.erase(uid);
      },
      [self](count_atom) -> caf::result<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t> {
        return {self->state.seen.size(), self->state.bound.size(), self->state.running.size(),
                self->state.live.size()};
      },
  };
}

std::string job_json(int i, bool gpu = false, const std::string& name = "bench-", int priority = 0) {
  const std::string resources = gpu ? R"({"limits":{"nvidia.com/gpu":"2"}})" : R"({"requests":{"cpu":"10m","memory":"16Mi"}})";
  auto replica = [&](int n) {
    return R"({"replicas":)" + std::to_string(n) +
           R"(,"restartPolicy":"OnFailure","template":{"metadata":{"annotations":{"kozmo.io/sim-duration":"forever","kozmo.io/sim-pull-duration":"1s"}},"spec":{"containers":[{"name":"pytorch","image":"bench:1","resources":)" +
           resources + "}]}}}";
  };
  std::string policy = priority ? R"("runPolicy":{"schedulingPolicy":{"priorityClass":")" + std::to_string(priority) + R"("}},)" : "";
  return R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":")" + name + std::to_string(i) +
         R"(","namespace":"default"},"spec":{)" + policy + R"("pytorchReplicaSpecs":{"Master":)" + replica(1) +
         R"(,"Worker":)" + replica(3) + "}}}";
}

// Counts from the counter: seen, bound, Running, live (not deleted).
struct counts {
  std::uint64_t seen = 0, bound = 0, running = 0, live = 0;
};
counts count(caf::actor_system& sys, const caf::actor& counter) {
  counts c;
  caf::scoped_actor self{sys};
  self->request(counter, 10s, count_atom::value)
      .receive([&](std::uint64_t s, std::uint64_t b, std::uint64_t r, std::uint64_t l) { c = {s, b, r, l}; },
               [&](caf::error&) {});
  return c;
}

// The affinity groups the scheduler holds (its inspect answer, which waits for recovery).
int scheduler_groups(engine& e) {
  caf::scoped_actor self{engine_internal::system(e)};
  int groups = -1;
  self->request(engine_internal::scheduler(e), 120s, inspect_request{"/v1/inspect/affinitygroups"})
      .receive(
          [&](const inspect_reply& r) {
            auto body = json::parse(r.body);
            const auto* items = body ? body->find("items") : nullptr;
            if (r.status == 200 && items && items->is_array())
              groups = static_cast<int>(items->as_array().size());
          },
          [&](caf::error&) {});
  return groups;
}

using bench::seconds_until;

// Deletes every job (background propagation, as kubectl does) and times the garbage collection
// of their pods, and the scheduler letting go of their gangs.
void teardown(engine& e, const std::vector<std::string>& jobs, bool gpu) {
  auto counter = engine_internal::system(e).spawn(running_counter, engine_internal::pods_watch(e), std::string());
  auto cli = engine_internal::api(e);
  const int n = static_cast<int>(jobs.size());
  seconds_until([&] { return count(engine_internal::system(e), counter).live >= static_cast<std::uint64_t>(n) * 4; }, 60s);
  std::atomic<int> answered{0}, failed{0};
  auto t0 = std::chrono::steady_clock::now();
  for (const auto& name : jobs)
    cli->remove({"kubeflow.org", "v1", "pytorchjobs", "default", name, ""}, {}, [&](expected<json::value> r) {
      failed += r ? 0 : 1;
      ++answered;
    });
  seconds_until([&] { return answered == n; }, 60s);
  double deleted = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double pods_gone = seconds_until([&] { return count(engine_internal::system(e), counter).live == 0; }, 120s);
  if (pods_gone >= 0)
    pods_gone += deleted;
  std::printf("  delete all jobs: answered      %.2f s (%d failed)\n", deleted, failed.load());
  std::printf("  delete -> all pods gone:       %.2f s (-1 = not within 120 s)\n", pods_gone);
  if (gpu) {
    double released = -1;
    if (seconds_until([&] { return scheduler_groups(e) == 0; }, 60s) >= 0)
      released = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("  delete -> scheduler holds no gang: %.2f s\n", released);
  }
  caf::anon_send_exit(counter, caf::exit_reason::user_shutdown);
}

using bench::heap_mib;

long rss_kib() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// On a cluster full of priority-0 gangs, `urgent` jobs of priority 10 arrive: each preempts a
// gang (its pods deleted; the training controller recreates them, and they wait) and runs in
// its GPUs. Times the urgent jobs from create to every pod Running.
void preempt(engine& e, int urgent) {
  auto counter = engine_internal::system(e).spawn(running_counter, engine_internal::pods_watch(e), std::string("urgent-"));
  auto cli = engine_internal::api(e);
  const std::uint64_t want = static_cast<std::uint64_t>(urgent) * 4;
  for (int i = 0; i < urgent; ++i)
    cli->create({"kubeflow.org", "v1", "pytorchjobs", "default", "", ""},
                *json::parse(job_json(i, true, "urgent-", 10)), [](expected<json::value>) {});
  double bound = seconds_until([&] { return count(engine_internal::system(e), counter).bound >= want; }, 120s);
  double running = seconds_until([&] { return count(engine_internal::system(e), counter).running >= want; }, 120s);
  if (running >= 0 && bound >= 0)
    running += bound;
  std::printf("  %d priority-10 jobs on the full cluster (each preempts a gang):\n", urgent);
  std::printf("    create -> all their pods bound:   %.2f s (-1 = not within 120 s)\n", bound);
  std::printf("    create -> all their pods Running: %.2f s\n", running);
  caf::anon_send_exit(counter, caf::exit_reason::user_shutdown);
}

// Cordons the first `n` nodes (spec.unschedulable, as kubectl cordon does): to the GPU scheduler
// their GPUs are bad from then on.
void cordon(engine& e, int n) {
  auto cli = engine_internal::api(e);
  json::value body;
  body["spec"]["unschedulable"] = true;
  int failed = 0;
  for (int i = 0; i < n; ++i)
    failed += cli->patch({"", "v1", "nodes", "", "node-" + std::to_string(i), ""}, client::patch_type::merge, body)
                  ? 0
                  : 1;
  std::printf("  cordoned %d nodes (%d failed)\n", n, failed);
}

// The heap once every job is gone, which is what a long-running controller would accumulate.
// Events expire with the first write after their TTL: wait it out, then write something.
double heap_after_teardown(engine& e) {
  std::this_thread::sleep_for(6s);
  json::value cm = *json::parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"tick"}})");
  (void)engine_internal::api(e)->create({"", "v1", "configmaps", "default", "", ""}, cm);
  (void)engine_internal::api(e)->remove({"", "v1", "configmaps", "default", "tick", ""});
  std::this_thread::sleep_for(1s);
  return heap_mib();
}

void throughput(int jobs, int nodes, bool gpu, bool restart, int urgent, int cordoned, int cycles) {
  engine_options o;
  char dir_template[] = "/tmp/kozmo-training-bench-XXXXXX";
  if (restart && mkdtemp(dir_template))
    o.api.data_dir = dir_template; // the server keeps its objects, so that a second engine finds them
  o.api.embedded = true;
  o.parts.nodes = kozmo::uniform_nodes(nodes, 8, "node");
  for (auto& n : o.parts.nodes)
    n.pods = "500";
  o.parts.binder = true;
  // Events expire 5 s after their last write (kube-apiserver keeps them 1 h), so that the heap
  // after the teardown shows what else stays behind.
  o.api.event_ttl_seconds = 5;
  if (gpu)
    o.parts.scheduler_config = runtime::hived_config_from_shape(kozmo::cluster_shape_of(o.parts.nodes));
  o.parts.training = true;
  o.performance.client_qps = 50000;
  engine e(o);
  if (auto st = e.start(); !st) {
    std::cerr << "engine: " << st.err().message << "\n";
    return;
  }
  auto cli = engine_internal::api(e);
  std::fprintf(stderr, "training_bench: API server at %s\n", e.url().c_str());
  for (int i = 0; i < 200; ++i) {
    auto list = cli->list({"", "v1", "nodes", "", "", ""});
    if (list && static_cast<int>(list->find("items")->as_array().size()) == nodes)
      break;
    std::this_thread::sleep_for(50ms);
  }
  // The counter follows the engine's own pods watch: a second watch would double the
  // watch-decoding work the bench is measuring the controllers under.
  const double heap_before = heap_mib(); // nodes registered, no job yet
  auto pods_watch = engine_internal::pods_watch(e);
  auto counter = engine_internal::system(e).spawn(running_counter, pods_watch, std::string("bench-"));
  std::vector<json::value> bodies;
  for (int i = 0; i < jobs; ++i)
    bodies.push_back(*json::parse(job_json(i, gpu)));

  auto start = std::chrono::steady_clock::now();
  const std::size_t failed = bench::create_all(*cli, {"kubeflow.org", "v1", "pytorchjobs", "default", "", ""}, bodies);
  auto created = std::chrono::steady_clock::now();
  std::uint64_t seen = 0, bound = 0, running = 0;
  const std::uint64_t want = static_cast<std::uint64_t>(jobs) * 4;
  using clock = std::chrono::steady_clock;
  std::optional<clock::time_point> all_created, all_bound, most_running, all_running;
  auto last_progress = clock::now();
  {
    // Until every pod runs, or nothing moved for 15 s once all are bound, or 300 s.
    while (!all_running && clock::now() < start + 300s && !(all_bound && clock::now() - last_progress > 15s)) {
      std::this_thread::sleep_for(20ms);
      const counts c = count(engine_internal::system(e), counter);
      seen = c.seen;
      if (c.bound != bound || c.running != running)
        last_progress = clock::now();
      bound = c.bound;
      running = c.running;
      auto now = clock::now();
      if (!all_created && seen >= want)
        all_created = now;
      if (!all_bound && bound >= want)
        all_bound = now;
      if (!most_running && running * 100 >= want * 99)
        most_running = now;
      if (!all_running && running >= want)
        all_running = now;
    }
  }
  auto secs = [&](std::optional<clock::time_point> t) { return t ? std::chrono::duration<double>(*t - start).count() : -1.0; };
  std::printf("training_bench: %d PyTorchJobs x 4 pods on %d simulated nodes (%s, embedded server)\n", jobs, nodes,
              gpu ? "2 GPUs per pod, one 4x2 gang per job, Kozmo's GPU scheduler" : "CPU pods, binder");
  std::printf("  creates answered:            %.2f s (%zu failed)\n", secs(created), failed);
  std::printf("  create -> all pods created:  %.2f s (%llu/%llu, by the job actors)\n", secs(all_created),
              static_cast<unsigned long long>(seen), static_cast<unsigned long long>(want));
  std::printf("  create -> all pods bound:    %.2f s (%llu/%llu)\n", secs(all_bound),
              static_cast<unsigned long long>(bound), static_cast<unsigned long long>(want));
  std::printf("  create -> 99%% pods Running:  %.2f s\n", secs(most_running));
  std::printf("  create -> all pods Running:  %.2f s (%llu/%llu Running at the end; -1 = not reached)\n",
              secs(all_running), static_cast<unsigned long long>(running), static_cast<unsigned long long>(want));

  std::vector<std::string> names;
  for (int i = 0; i < jobs; ++i)
    names.push_back("bench-" + std::to_string(i));
  if (gpu && urgent > 0) {
    preempt(e, urgent);
    for (int i = 0; i < urgent; ++i)
      names.push_back("urgent-" + std::to_string(i));
  }

  if (cordoned > 0)
    cordon(e, cordoned);

  if (restart) {
    // Stop everything and start again on the same data: the server reloads the objects, the
    // scheduler recovers every gang from the bind-info annotations of the bound pods.
    caf::anon_send_exit(counter, caf::exit_reason::user_shutdown);
    e.stop();
    engine again(o);
    auto t0 = clock::now();
    if (auto st = again.start(); !st) {
      std::cerr << "engine (restart): " << st.err().message << "\n";
      return;
    }
    double started = std::chrono::duration<double>(clock::now() - t0).count();
    int groups = gpu ? scheduler_groups(again) : 0;
    double recovered = std::chrono::duration<double>(clock::now() - t0).count();
    std::printf("  restart: engine started:      %.2f s (the server reloaded %s)\n", started, o.api.data_dir.c_str());
    if (gpu)
      std::printf("  restart -> scheduler ready:   %.2f s (%d affinity groups recovered)\n", recovered, groups);
    teardown(again, names, gpu);
    again.stop();
    std::filesystem::remove_all(o.api.data_dir);
    return;
  }
  caf::anon_send_exit(counter, caf::exit_reason::user_shutdown);
  const double heap_peak = heap_mib();
  std::this_thread::sleep_for(3s);
  std::printf("  heap in use with the jobs, 3 s after the last pod started: %.1f MiB\n", heap_mib());
  teardown(e, names, gpu);
  std::printf("  heap in use: %.1f MiB before the jobs, %.1f MiB with them, %.1f MiB after the teardown"
              " (and the Events' 5 s TTL)\n",
              heap_before, heap_peak, heap_after_teardown(e));
  // The same jobs again, on the same engine: a leak shows as a heap that keeps growing.
  for (int c = 2; c <= cycles; ++c) {
    auto again = engine_internal::system(e).spawn(running_counter, engine_internal::pods_watch(e), std::string("bench-"));
    for (auto& b : bodies)
      cli->create({"kubeflow.org", "v1", "pytorchjobs", "default", "", ""}, b, [](expected<json::value>) {});
    double up = seconds_until([&] { return count(engine_internal::system(e), again).running >= want; }, 300s);
    caf::anon_send_exit(again, caf::exit_reason::user_shutdown);
    std::vector<std::string> same(names.begin(), names.begin() + jobs);
    teardown(e, same, gpu);
    std::printf("  cycle %d: all pods Running in %.2f s; heap after its teardown %.1f MiB\n", c, up,
                heap_after_teardown(e));
  }
  if (std::getenv("KOZMO_BENCH_COUNT_OBJECTS")) {
    for (const char* r : {"events", "pods", "services", "configmaps"}) {
      auto l = engine_internal::api(e)->list({"", "v1", r, "", "", ""});
      std::printf("    %s left: %zu\n", r, l ? l->find("items")->as_array().size() : 0);
    }
  }
  e.stop();
}

void idle_memory(int actors) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto jcfg = std::make_shared<training::job_actor_config>();
  client::config ccfg;
  ccfg.server = "http://127.0.0.1:1"; // never called: every job is managed elsewhere
  jcfg->cli = std::make_shared<client::client>(ccfg);
  std::shared_ptr<const training::job_actor_config> shared_cfg = jcfg;
  // Every job is managed elsewhere (skipped): the executor is never asked for anything.
  controller::child_tools tools{controller::spawn_executor(sys, jcfg->cli, nullptr), nullptr,
                                controller::real_clock()};

  // Objects first (they belong to the watch caches, not to the actors).
  std::vector<std::shared_ptr<const k8s::custom_object>> jobs;
  std::vector<std::vector<std::shared_ptr<const k8s::pod>>> pods;
  std::vector<std::vector<std::shared_ptr<const k8s::service>>> services;
  for (int i = 0; i < actors; ++i) {
    auto text = job_json(i);
    text.replace(text.find(R"("spec":{)"), 8, R"("spec":{"runPolicy":{"managedBy":"example.com/other"},)");
    k8s::custom_object job;
    job.api_version = "kubeflow.org/v1";
    job.kind = "PyTorchJob";
    job.metadata.name = "bench-" + std::to_string(i);
    job.metadata.namespace_ = "default";
    job.metadata.uid = "uid-" + std::to_string(i);
    job.document = *json::parse(text);
    jobs.push_back(std::make_shared<const k8s::custom_object>(std::move(job)));
    pods.emplace_back();
    services.emplace_back();
    for (int r = 0; r < 4; ++r) {
      k8s::pod p;
      p.metadata.name = "bench-" + std::to_string(i) + (r == 0 ? "-master-0" : "-worker-" + std::to_string(r - 1));
      p.metadata.namespace_ = "default";
      p.metadata.uid = p.metadata.name + "-uid";
      p.metadata.resource_version = "1";
      k8s::service s;
      s.metadata = p.metadata;
      pods.back().push_back(std::make_shared<const k8s::pod>(std::move(p)));
      services.back().push_back(std::make_shared<const k8s::service>(std::move(s)));
    }
  }
  std::this_thread::sleep_for(200ms);
  malloc_trim(0);
  auto before = mallinfo2().uordblks;
  long rss_before = rss_kib();
  std::vector<caf::actor> spawned;
  spawned.reserve(actors);
  for (int i = 0; i < actors; ++i) {
    auto a = training::spawn_training_job(sys, nullptr, shared_cfg, tools, jobs[i]);
    for (auto& p : pods[i])
      caf::anon_send(a, object_event<k8s::pod>{watch::event_type::added, p, nullptr});
    for (auto& s : services[i])
      caf::anon_send(a, object_event<k8s::service>{watch::event_type::added, s, nullptr});
    spawned.push_back(std::move(a));
  }
  std::this_thread::sleep_for(2s); // every mailbox drained, every pass run (skipped)
  auto after = mallinfo2().uordblks;
  long rss_after = rss_kib();
  std::printf("  idle job actors:             %d actors, each holding 4 pods + 4 services (shared)\n", actors);
  std::printf("  memory per idle job actor:   %.0f B allocator in-use, %.0f B RSS (target <= 8192 B)\n",
              static_cast<double>(after - before) / actors, (rss_after - rss_before) * 1024.0 / actors);
  for (auto& a : spawned)
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  spawned.clear();
  caf::anon_send_exit(tools.executor, caf::exit_reason::user_shutdown);
}

} // namespace

int main(int argc, char** argv) {
  int jobs = argc > 1 ? std::atoi(argv[1]) : 1000;
  int nodes = argc > 2 ? std::atoi(argv[2]) : 50;
  int idle = argc > 3 ? std::atoi(argv[3]) : 10000;
  bool gpu = argc > 4 && std::string(argv[4]) == "gpu";
  bool restart = false;
  int urgent = 0, cordoned = 0, cycles = 1;
  for (int i = 5; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "restart")
      restart = true;
    else if (a.starts_with("preempt="))
      urgent = std::atoi(a.c_str() + 8);
    else if (a.starts_with("cordon="))
      cordoned = std::atoi(a.c_str() + 7);
    else if (a.starts_with("cycles="))
      cycles = std::atoi(a.c_str() + 7);
  }
  if (jobs > 0)
    throughput(jobs, nodes, gpu, restart, urgent, cordoned, cycles);
  if (idle > 0)
    idle_memory(idle);
  return 0;
}
