// TrainJob bench (issue 42): N TrainJobs of 2 nodes created at once, then N PyTorchJobs of 2 pods
// (Master 1 + Worker 1) on the same in-process engine (embedded API server, simulated kubelets,
// the v1 training controller and the TrainJob controller side by side), each timed from its
// first create to all 2N pods Running. Prints both and the ratio PyTorchJob time / TrainJob time
// (>= 0.9: TrainJobs at most ~11 % slower). Asserts nothing.
//
//   build/bench/trainjob_bench [JOBS=1000] [REPS=3] [NODES=50] [cpu|gpu]
//
// The TrainJobs name a TrainingRuntime `torch-distributed` the bench creates in `default`: the
// built-in runtime of deploy/runtimes/torch-distributed.yaml with the simulated pods' annotations
// (run forever, 1 s in ContainerCreating, as training_bench's PyTorchJob pods) on its pod
// template; every pod of either kind asks for the same resources. cpu (the default): CPU pods
// bound first-fit by the binder. gpu: 2 GPUs a pod, so each job is one 2x2 gang that Kozmo's GPU
// scheduler places (pass NODES >= JOBS / 2 for room).
//
// A repetition runs both kinds, deleting each kind's jobs (and waiting until their pods are gone)
// before the other starts; the order alternates (TrainJobs first in odd repetitions), so neither
// kind always meets the fresher server. Names carry the repetition, so nothing a garbage
// collector has not yet removed meets a new job of the same name. Creates go through a client of
// their own, as a user's kubectl would.
//
// Besides the pods, the bench watches the jobs and prints when every job has its Running
// condition True (both kinds set it once all their pods run); the ratio is the pods' figure. Each
// kind's figures come with the CPU seconds the process spent and the API requests it made until
// every job ran. KOZMO_BENCH_ONLY=trainjobs (or pytorchjobs) runs one kind alone, for a profiler.
#include "bench/bench_support.hpp"
#include "bench/process_figures.hpp"
#include "actors/watch/object_traits.hpp"
#include "actors/watch/watch_actor.hpp"
#include "messages/watch_messages.hpp"
#include "runtime/engine_internal.hpp"
#include "runtime/hived_shape.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace kozmo;
using namespace std::chrono_literals;

namespace {

using progress_atom = caf::atom_constant<caf::atom("progress")>;

// What one phase watches: the pods and jobs whose name starts with the phase's prefix.
struct progress_state {
  std::string prefix;
  std::set<std::string> pods_seen, pods_live, pods_bound, pods_running; // by uid
  std::set<std::string> jobs_live, jobs_running;                        // by name
  std::uint64_t job_changes = 0; // MODIFIED events of the jobs: their status (and annotation) writes
};

struct progress {
  std::uint64_t pods_seen = 0, pods_live = 0, pods_bound = 0, pods_running = 0;
  std::uint64_t jobs_live = 0, jobs_running = 0, job_changes = 0;
};

bool running_condition(const json::value& job) {
  const auto* conds = job.at_path({"status", "conditions"});
  if (!conds || !conds->is_array())
    return false;
  for (const auto& c : conds->as_array())
    if (c.get_string("type") == "Running" && c.get_string("status") == "True")
      return true;
  return false;
}

void mark(std::set<std::string>& set, const std::string& key, bool on) {
  if (on)
    set.insert(key);
  else
    set.erase(key);
}

caf::behavior progress_counter(caf::stateful_actor<progress_state>* self, caf::actor pods_watch,
                               caf::actor jobs_watch, std::string prefix) {
  self->state.prefix = std::move(prefix);
  for (const auto& w : {pods_watch, jobs_watch})
    self->send(w, atoms::subscribe_atom::value, watch::index_kind::all, std::string(),
               caf::actor_cast<caf::actor>(self));
  return {
      [self](object_event<k8s::pod>& ev) {
        auto& st = self->state;
        if (!ev.object || !ev.object->metadata.name.starts_with(st.prefix))
          return;
        const auto& uid = ev.object->metadata.uid;
        const bool live = ev.type != watch::event_type::deleted;
        st.pods_seen.insert(uid);
        mark(st.pods_live, uid, live);
        mark(st.pods_bound, uid, live && !ev.object->spec.node_name.empty());
        mark(st.pods_running, uid, live && ev.object->status.phase == "Running");
      },
      [self](object_event<k8s::custom_object>& ev) {
        auto& st = self->state;
        if (!ev.object || !ev.object->metadata.name.starts_with(st.prefix))
          return;
        const auto& name = ev.object->metadata.name;
        const bool live = ev.type != watch::event_type::deleted;
        st.job_changes += ev.type == watch::event_type::modified ? 1 : 0;
        mark(st.jobs_live, name, live);
        mark(st.jobs_running, name, live && running_condition(ev.object->document));
      },
      [self](progress_atom) {
        const auto& st = self->state;
        return std::vector<std::uint64_t>{st.pods_seen.size(),  st.pods_live.size(), st.pods_bound.size(),
                                          st.pods_running.size(), st.jobs_live.size(), st.jobs_running.size(),
                                          st.job_changes};
      },
  };
}

progress ask(caf::actor_system& sys, const caf::actor& counter) {
  progress p;
  caf::scoped_actor self{sys};
  self->request(counter, 10s, progress_atom::value)
      .receive(
          [&](const std::vector<std::uint64_t>& v) {
            p = {v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
          },
          [&](caf::error&) {});
  return p;
}

std::string resources(bool gpu) {
  return gpu ? R"({"limits":{"nvidia.com/gpu":"2"}})" : R"({"requests":{"cpu":"10m","memory":"16Mi"}})";
}

const char* sim_annotations = R"({"kozmo.io/sim-duration":"forever","kozmo.io/sim-pull-duration":"1s"})";

// deploy/runtimes/torch-distributed.yaml as a TrainingRuntime of `default`, its pods simulated.
std::string runtime_json() {
  return std::string(R"({"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainingRuntime",)"
                     R"("metadata":{"name":"torch-distributed","namespace":"default","labels":{"trainer.kubeflow.org/framework":"torch"}},)"
                     R"("spec":{"mlPolicy":{"numNodes":1,"torch":{}},"template":{"spec":{"replicatedJobs":[{"name":"node",)"
                     R"("template":{"metadata":{"labels":{"trainer.kubeflow.org/trainjob-ancestor-step":"trainer"}},)"
                     R"("spec":{"template":{"metadata":{"labels":{"trainer.kubeflow.org/trainjob-ancestor-step":"trainer"},"annotations":)") +
         sim_annotations +
         R"(},"spec":{"containers":[{"name":"node","image":"pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime",)"
         R"("command":["/bin/sh","-c","echo torch-distributed node ${PET_NODE_RANK} of ${PET_NNODES}"]}]}}}}}]}}}})";
}

std::string trainjob_json(const std::string& name, bool gpu) {
  return R"({"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":")" + name +
         R"(","namespace":"default"},"spec":{"runtimeRef":{"name":"torch-distributed","kind":"TrainingRuntime"},)"
         R"("trainer":{"image":"bench:1","numNodes":2,"resourcesPerNode":)" +
         resources(gpu) + "}}}";
}

std::string pytorchjob_json(const std::string& name, bool gpu) {
  auto replica = [&](int n) {
    return R"({"replicas":)" + std::to_string(n) + R"(,"restartPolicy":"OnFailure","template":{"metadata":{"annotations":)" +
           sim_annotations + R"(},"spec":{"containers":[{"name":"pytorch","image":"bench:1","resources":)" +
           resources(gpu) + "}]}}}";
  };
  return R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":")" + name +
         R"(","namespace":"default"},"spec":{"pytorchReplicaSpecs":{"Master":)" + replica(1) + R"(,"Worker":)" +
         replica(1) + "}}}";
}

struct kind_setup {
  const char* label;   // "TrainJobs"
  const char* controller; // its label in controller_runtime_reconcile_total
  client::resource_ref where;
  std::string (*body)(const std::string&, bool);
};

const kind_setup trainjobs{"TrainJobs x 2 nodes", "controller=\"trainjob\"", {"trainer.kubeflow.org", "v1alpha1", "trainjobs", "default", "", ""},
                           trainjob_json};
const kind_setup pytorchjobs{"PyTorchJobs x 2 pods (Master 1 + Worker 1)", "controller=\"pytorchjob\"",
                             {"kubeflow.org", "v1", "pytorchjobs", "default", "", ""}, pytorchjob_json};

struct phase_figures {
  double created = -1, all_pods = -1, bound = -1, running = -1, jobs_running = -1;
};

// Creates `jobs` jobs of one kind at once and times them to all pods Running and every job's
// Running condition; then deletes them and waits until their pods and the jobs are gone.
phase_figures run_phase(engine& e, client::client& user, const kind_setup& kind, const std::string& prefix, int jobs,
                        bool gpu) {
  auto& sys = engine_internal::system(e);
  watch::watch_config wc;
  wc.resource = kind.where;
  auto jobs_watch = watch::spawn_watch<k8s::custom_object>(sys, engine_internal::api(e), wc);
  auto counter = sys.spawn(progress_counter, engine_internal::pods_watch(e), jobs_watch, prefix);
  {
    caf::scoped_actor self{sys};
    self->request(jobs_watch, 30s, atoms::synced_atom::value).receive([](caf::ok_atom) {}, [](caf::error&) {});
  }
  std::vector<json::value> bodies;
  for (int i = 0; i < jobs; ++i)
    bodies.push_back(*json::parse(kind.body(prefix + std::to_string(i), gpu)));

  using clock = std::chrono::steady_clock;
  const std::uint64_t want_pods = static_cast<std::uint64_t>(jobs) * 2;
  const std::uint64_t want_jobs = static_cast<std::uint64_t>(jobs);
  const auto requests_before = bench::requests_so_far();
  const double cpu_before = bench::cpu_seconds();
  const double passes_before = bench::metric_sum("controller_runtime_reconcile_total", kind.controller);
  bench::perf_control("enable");
  const auto start = clock::now();
  const std::size_t failed = bench::create_all(user, kind.where, bodies);
  auto since = [&](clock::time_point t) { return std::chrono::duration<double>(t - start).count(); };
  phase_figures f;
  f.created = since(clock::now());
  progress p;
  auto last_progress = clock::now();
  const bool timeline = std::getenv("KOZMO_BENCH_TIMELINE") != nullptr;
  double next_line = 0;
  // Until every job runs, or nothing moved for 15 s, or 300 s.
  while (f.jobs_running < 0 && clock::now() < start + 300s && clock::now() - last_progress < 15s) {
    std::this_thread::sleep_for(20ms);
    const progress now = ask(sys, counter);
    if (now.pods_seen != p.pods_seen || now.pods_bound != p.pods_bound || now.pods_running != p.pods_running ||
        now.jobs_running != p.jobs_running)
      last_progress = clock::now();
    p = now;
    const double t = since(clock::now());
    if (f.all_pods < 0 && p.pods_seen >= want_pods)
      f.all_pods = t;
    if (f.bound < 0 && p.pods_bound >= want_pods)
      f.bound = t;
    if (f.running < 0 && p.pods_running >= want_pods)
      f.running = t;
    if (f.jobs_running < 0 && p.jobs_running >= want_jobs)
      f.jobs_running = t;
    if (timeline && t >= next_line) {
      std::printf("    %5.2f s: pods created %llu, bound %llu, Running %llu; jobs Running %llu\n", t,
                  static_cast<unsigned long long>(p.pods_seen), static_cast<unsigned long long>(p.pods_bound),
                  static_cast<unsigned long long>(p.pods_running), static_cast<unsigned long long>(p.jobs_running));
      next_line = t + 0.25;
    }
  }
  bench::perf_control("disable");
  double requests = 0;
  const std::string per_job = bench::requests_per_job(requests_before, bench::requests_so_far(), jobs, requests);
  const double cpu = bench::cpu_seconds() - cpu_before;
  const double passes = bench::metric_sum("controller_runtime_reconcile_total", kind.controller) - passes_before;
  std::printf("  %d %s: creates answered %.2f s (%zu failed); all pods created %.2f s, bound %.2f s, "
              "Running %.2f s (%llu/%llu); every job's Running condition %.2f s (%llu/%llu)\n",
              jobs, kind.label, f.created, failed, f.all_pods, f.bound, f.running,
              static_cast<unsigned long long>(p.pods_running), static_cast<unsigned long long>(want_pods), f.jobs_running,
              static_cast<unsigned long long>(p.jobs_running), static_cast<unsigned long long>(want_jobs));
  std::printf("    until then: %.1f CPU s, %.0f API requests (per job: %s); per job %.1f controller passes and %.1f"
              " writes of the job seen\n",
              cpu, requests, per_job.c_str(), passes / jobs, static_cast<double>(p.job_changes) / jobs);
  if (auto pods = user.list({"", "v1", "pods", "default", "", ""}, {"", "", 1, "", ""}); pods && pods->find("items")) {
    const auto& items = pods->find("items")->as_array();
    for (const auto& pod : items)
      if (const auto* name = pod.at_path({"metadata", "name"}); name && name->as_string().starts_with(prefix))
        std::printf("    a pod (%s) is %zu bytes of JSON\n", name->as_string().c_str(), json::dump(pod).size());
  }
  std::fflush(stdout);

  // Teardown: background propagation, as kubectl delete does; the garbage collector removes the pods.
  std::atomic<int> answered{0};
  client::delete_options background;
  background.propagation_policy = "Background";
  for (int i = 0; i < jobs; ++i) {
    auto ref = kind.where;
    ref.name = prefix + std::to_string(i);
    user.remove(ref, background, [&](expected<json::value>) { ++answered; });
  }
  bench::seconds_until([&] { return answered == jobs; }, 120s);
  const double gone = bench::seconds_until(
      [&] {
        const progress q = ask(sys, counter);
        return q.pods_live == 0 && q.jobs_live == 0;
      },
      120s);
  if (gone < 0)
    std::printf("  (teardown: pods or jobs still there after 120 s)\n");
  caf::anon_send_exit(counter, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(jobs_watch, caf::exit_reason::user_shutdown);
  return f;
}

double median(std::vector<double> v) {
  if (v.empty())
    return -1;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A positive integer within [1, max], else nullopt (the whole argument must be the number).
std::optional<int> bounded(const char* arg, int max) {
  int v = 0;
  const char* end = arg + std::char_traits<char>::length(arg);
  auto [ptr, ec] = std::from_chars(arg, end, v);
  if (ec != std::errc() || ptr != end || v < 1 || v > max)
    return std::nullopt;
  return v;
}

int usage(const char* why) {
  std::cerr << "trainjob_bench: " << why << "\n"
            << "usage: trainjob_bench [JOBS=1000 (1..20000)] [REPS=3 (1..50)] [NODES=50 (1..20000)] [cpu|gpu]\n";
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  int jobs = 1000, reps = 3, nodes = 50;
  bool gpu = false;
  const char* names[] = {"JOBS", "REPS", "NODES"};
  int* slots[] = {&jobs, &reps, &nodes};
  const int maxima[] = {20000, 50, 20000};
  if (argc > 5)
    return usage("at most 4 arguments");
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i == 4 || a == "cpu" || a == "gpu") {
      if (a != "cpu" && a != "gpu")
        return usage(("the 4th argument must be cpu or gpu, not '" + a + "'").c_str());
      gpu = a == "gpu";
      continue;
    }
    auto v = bounded(argv[i], maxima[i - 1]);
    if (!v)
      return usage((std::string(names[i - 1]) + " must be an integer from 1 to " + std::to_string(maxima[i - 1]) +
                    ", not '" + a + "'")
                       .c_str());
    *slots[i - 1] = *v;
  }
  if (gpu && nodes * 4 < jobs)
    return usage("gpu: each job takes 4 GPUs, so NODES (of 8 GPUs) must be at least JOBS / 2");

  // KOZMO_BENCH_ONLY=trainjobs (or =pytorchjobs) runs one kind alone, e.g. under perf.
  std::optional<std::string> only;
  if (const char* env = std::getenv("KOZMO_BENCH_ONLY")) {
    only = env;
    if (*only != "trainjobs" && *only != "pytorchjobs")
      return usage("KOZMO_BENCH_ONLY must be trainjobs or pytorchjobs");
  }

  engine_options o = bench::local_cluster(nodes, false);
  o.parts.training = true;
  o.api.event_ttl_seconds = 5; // Events of past phases expire rather than pile up across repetitions
  if (gpu)
    o.parts.scheduler_config = runtime::hived_config_from_shape(kozmo::cluster_shape_of(o.parts.nodes));
  engine e(o);
  if (auto st = e.start(); !st) {
    std::cerr << "engine: " << st.err().message << "\n";
    return 1;
  }
  auto cli = engine_internal::api(e);
  for (int i = 0; i < 200; ++i) {
    auto list = cli->list({"", "v1", "nodes", "", "", ""});
    if (list && static_cast<int>(list->find("items")->as_array().size()) == nodes)
      break;
    std::this_thread::sleep_for(50ms);
  }
  auto user = bench::user_client(e);
  if (auto r = user->create({"trainer.kubeflow.org", "v1alpha1", "trainingruntimes", "default", "", ""},
                            *json::parse(runtime_json()));
      !r) {
    std::cerr << "creating the TrainingRuntime: " << r.err().message << "\n";
    return 1;
  }
  std::this_thread::sleep_for(1s); // the controller's runtime watch has it before the first TrainJob

  std::printf("trainjob_bench: %d jobs x 2 pods of each kind, %d repetitions, %d simulated nodes (%s, embedded server)\n",
              jobs, reps, nodes, gpu ? "2 GPUs a pod, one 2x2 gang a job, Kozmo's GPU scheduler" : "CPU pods, binder");
  std::vector<double> ratios, condition_ratios, tj_times, pj_times;
  for (int r = 1; r <= reps; ++r) {
    const bool trainjobs_first = r % 2 == 1;
    std::printf("repetition %d (%s):\n", r,
                only ? (*only == "trainjobs" ? "TrainJobs alone" : "PyTorchJobs alone")
                     : (trainjobs_first ? "TrainJobs first" : "PyTorchJobs first"));
    const std::string tj_prefix = "tj" + std::to_string(r) + "-", pj_prefix = "pj" + std::to_string(r) + "-";
    phase_figures tj, pj;
    if (only) { // profiling one kind: no ratio
      run_phase(e, *user, *only == "trainjobs" ? trainjobs : pytorchjobs, *only == "trainjobs" ? tj_prefix : pj_prefix,
                jobs, gpu);
      continue;
    }
    if (trainjobs_first) {
      tj = run_phase(e, *user, trainjobs, tj_prefix, jobs, gpu);
      pj = run_phase(e, *user, pytorchjobs, pj_prefix, jobs, gpu);
    } else {
      pj = run_phase(e, *user, pytorchjobs, pj_prefix, jobs, gpu);
      tj = run_phase(e, *user, trainjobs, tj_prefix, jobs, gpu);
    }
    if (tj.running <= 0 || pj.running <= 0) {
      std::printf("  ratio: - (a kind did not reach all pods Running)\n");
      continue;
    }
    tj_times.push_back(tj.running);
    pj_times.push_back(pj.running);
    ratios.push_back(pj.running / tj.running);
    if (tj.jobs_running > 0 && pj.jobs_running > 0)
      condition_ratios.push_back(pj.jobs_running / tj.jobs_running);
    std::printf("  all pods Running: PyTorchJobs %.2f s / TrainJobs %.2f s = ratio %.2f\n", pj.running, tj.running,
                ratios.back());
  }
  if (only) {
    e.stop();
    return 0;
  }
  std::printf("summary over %zu repetitions: all 2N pods Running, TrainJobs median %.2f s, PyTorchJobs median %.2f s;"
              " ratio PyTorchJob / TrainJob median %.2f (min %.2f, max %.2f; target >= 0.9), ratio of the medians %.2f;"
              " by the jobs' Running condition median %.2f\n",
              ratios.size(), median(tj_times), median(pj_times), median(ratios),
              ratios.empty() ? -1 : *std::min_element(ratios.begin(), ratios.end()),
              ratios.empty() ? -1 : *std::max_element(ratios.begin(), ratios.end()),
              ratios.empty() ? -1 : median(pj_times) / median(tj_times), median(condition_ratios));
  e.stop();
  return 0;
}
