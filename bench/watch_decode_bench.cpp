// Watch decoding throughput: typed decoding of pod watch events (k8s::decode_watch_event,
// the watch actor's hot path) beside simdjson's raw parse of the same bytes.
//
// The stream is either recorded (--stream FILE: bench/data holds one from a real kube-apiserver
// v1.20.2, made by bench/record_watch_stream.sh) or generated the way kube-apiserver v1.20
// writes pod events (shapes from shared/reference/k8s-wire.md §6-7: defaulted spec, container
// statuses in every state, a BOOKMARK every 100 events) but with a small managedFields. Target:
// typed decode >= 50% of the raw rate on the recorded stream.
#include "k8s/json/value.hpp"
#include "k8s/model/watch.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <new>
#include <random>
#include <string>
#include <vector>

// Every allocation of the process is counted, to report the heap allocations one typed decode
// makes (a counter increment beside malloc: no measurable cost to the timed loops).
namespace {
std::size_t allocations = 0;
}

void* operator new(std::size_t n) {
  ++allocations;
  if (void* p = std::malloc(n ? n : 1))
    return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

std::string pod_event(std::mt19937& rng, int i) {
  static const char* types[] = {"ADDED", "MODIFIED", "MODIFIED", "MODIFIED", "DELETED"};
  static const char* states[] = {
      R"({"waiting":{"reason":"ContainerCreating"}})",
      R"({"running":{"startedAt":"2026-11-21T20:01:30Z"}})",
      R"({"terminated":{"exitCode":0,"reason":"Completed","startedAt":"2026-11-21T20:01:30Z","finishedAt":"2026-11-21T20:05:30Z","containerID":"containerd://4f1e"}})",
      R"({"waiting":{"reason":"CrashLoopBackOff","message":"back-off 40s restarting failed container=main pod=x"}})",
  };
  std::string name = "train-" + std::to_string(i % 977) + "-worker-" + std::to_string(i % 7);
  std::string state = states[rng() % 4];
  std::string line = R"({"type":")" + std::string(types[rng() % 5]) + R"(","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name +
      R"(","generateName":"train-","namespace":"team-a","uid":"0e6c1b0a-5f4e-4c7e-9d61-)" + std::to_string(100000000000 + i) +
      R"(","resourceVersion":")" + std::to_string(1000 + i) +
      R"(","creationTimestamp":"2026-11-21T20:01:26Z","labels":{"training.kubeflow.org/job-name":"train-)" + std::to_string(i % 977) +
      R"(","training.kubeflow.org/replica-type":"worker","training.kubeflow.org/replica-index":")" + std::to_string(i % 7) +
      R"("},"annotations":{"hivedscheduler.microsoft.com/pod-bind-info":"node: node-12\nleafCellIsolation: [0, 1]\n"},"ownerReferences":[{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","name":"train","uid":"6f1d2c3b-aaaa-bbbb-cccc-)" +
      std::to_string(i % 977) + R"(","controller":true,"blockOwnerDeletion":true}],"managedFields":[{"manager":"kozmo","operation":"Update","apiVersion":"v1","time":"2026-11-21T20:01:26Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"main\"}":{".":{},"f:image":{},"f:name":{}}}}}}]},"spec":{"volumes":[{"name":"default-token-x","secret":{"secretName":"default-token-x","defaultMode":420}}],"containers":[{"name":"pytorch","image":"pytorch/pytorch:2.3.0","command":["python","-m","torch.distributed.run"],"args":["train.py","--epochs","10"],"ports":[{"name":"pytorchjob-port","containerPort":23456,"protocol":"TCP"}],"env":[{"name":"MASTER_ADDR","value":"train-master-0"},{"name":"MASTER_PORT","value":"23456"},{"name":"WORLD_SIZE","value":"8"},{"name":"RANK","value":")" +
      std::to_string(i % 7) + R"("},{"name":"NVIDIA_VISIBLE_DEVICES","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.annotations['hivedscheduler.microsoft.com/pod-leaf-cell-isolation']"}}}],"resources":{"limits":{"nvidia.com/gpu":"2","memory":"32Gi","cpu":"8"},"requests":{"nvidia.com/gpu":"2","memory":"32Gi","cpu":"8"}},"volumeMounts":[{"name":"default-token-x","readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],"restartPolicy":"OnFailure","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"default","serviceAccount":"default","nodeName":"node-12","securityContext":{},"schedulerName":"kozmo","tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],"priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},"status":{"phase":"Running","conditions":[{"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-21T20:01:26Z"},{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-21T20:01:31Z"},{"type":"ContainersReady","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-21T20:01:31Z"},{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-21T20:01:26Z"}],"hostIP":"10.0.0.12","podIP":"10.244.12.7","podIPs":[{"ip":"10.244.12.7"}],"startTime":"2026-11-21T20:01:26Z","containerStatuses":[{"name":"pytorch","state":)" +
      state + R"(,"lastState":{},"ready":true,"restartCount":)" + std::to_string(rng() % 3) +
      R"(,"image":"pytorch/pytorch:2.3.0","imageID":"docker-pullable://pytorch/pytorch@sha256:abc","containerID":"containerd://4f1e","started":true}],"qosClass":"Guaranteed"}}})";
  return line;
}

// The thread's CPU time, not the wall clock: on a shared machine the wall clock also counts
// the time other processes had the core, which swamps the differences measured here.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Touches every value of a document with simdjson ondemand, the way a decoder that kept
// everything would: strings unescaped, numbers parsed. The ceiling for any ondemand decoder.
std::size_t walk(simdjson::ondemand::value v) {
  switch (v.type().value_unsafe()) {
  case simdjson::ondemand::json_type::object: {
    std::size_t n = 0;
    for (auto f : v.get_object().value_unsafe()) {
      n += f.unescaped_key().value_unsafe().size();
      n += walk(f.value().value_unsafe());
    }
    return n;
  }
  case simdjson::ondemand::json_type::array: {
    std::size_t n = 0;
    for (auto item : v.get_array().value_unsafe())
      n += walk(item.value_unsafe());
    return n;
  }
  case simdjson::ondemand::json_type::string: return v.get_string().value_unsafe().size();
  case simdjson::ondemand::json_type::number: return std::size_t(v.get_double().value_unsafe());
  case simdjson::ondemand::json_type::boolean: return v.get_bool().value_unsafe();
  case simdjson::ondemand::json_type::null: return v.is_null();
  }
  return 0;
}

} // namespace

// Usage: watch_decode_bench [EVENTS] [ROUNDS] [all|raw|ondemand|typed]
//        watch_decode_bench --stream FILE [ROUNDS] [all|raw|ondemand|typed]
// The first form builds EVENTS events in kube-apiserver's shapes; the second replays a recorded
// stream, one watch line per line (FILE ending in .xz is read through `xz -dc`; bench/data has
// one recorded from kube-apiserver v1.20.2 by bench/record_watch_stream.sh). A single mode is
// for profiling one path under callgrind.
int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string stream_file;
  if (!args.empty() && args[0] == "--stream") {
    if (args.size() < 2) {
      std::fprintf(stderr, "watch_decode_bench: --stream needs a file\n");
      return 2;
    }
    stream_file = args[1];
    args.erase(args.begin(), args.begin() + 2);
    args.insert(args.begin(), "0");
  }
  int events = args.size() > 0 ? std::atoi(args[0].c_str()) : 20000;
  int rounds = args.size() > 1 ? std::atoi(args[1].c_str()) : 5;
  std::string mode = args.size() > 2 ? args[2] : "all";
  bool run_raw = mode == "all" || mode == "raw";
  bool run_od = mode == "all" || mode == "ondemand";
  bool run_typed = mode == "all" || mode == "typed";
  std::mt19937 rng(42);
  std::vector<simdjson::padded_string> lines;
  std::size_t bytes = 0;
  if (!stream_file.empty()) {
    const bool xz = stream_file.size() > 3 && stream_file.compare(stream_file.size() - 3, 3, ".xz") == 0;
    FILE* in = xz ? popen(("xz -dc '" + stream_file + "'").c_str(), "r") : std::fopen(stream_file.c_str(), "r");
    if (!in) {
      std::fprintf(stderr, "watch_decode_bench: cannot read %s\n", stream_file.c_str());
      return 2;
    }
    std::string line;
    for (int c; (c = std::fgetc(in)) != EOF;) {
      if (c != '\n') {
        line += static_cast<char>(c);
        continue;
      }
      if (!line.empty()) {
        bytes += line.size();
        lines.emplace_back(line);
      }
      line.clear();
    }
    if (xz ? pclose(in) != 0 : std::fclose(in) != 0 || lines.empty()) {
      std::fprintf(stderr, "watch_decode_bench: %s is unreadable or empty\n", stream_file.c_str());
      return 2;
    }
    events = static_cast<int>(lines.size());
    std::printf("recorded stream: %s\n", stream_file.c_str());
  }
  for (int i = 0; stream_file.empty() && i < events; ++i) {
    std::string l = (i % 100 == 99)
                        ? R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":")" +
                              std::to_string(1000 + i) + R"(","creationTimestamp":null},"spec":{"containers":null},"status":{}}})"
                        : pod_event(rng, i);
    bytes += l.size();
    lines.emplace_back(l);
  }
  std::printf("watch decode bench: %d events, %.1f MiB, %d rounds (thread CPU time)\n", events, bytes / 1048576.0, rounds);

  // The paths take turns on chunks of the stream, and each round adds up each path's time.
  // On a shared machine a neighbour slows down a whole stretch of time: paths measured one
  // after the other over the whole stream (seconds apart) saw different machines, and their
  // ratio swung by ten points from run to run. Within a chunk the paths run a millisecond
  // apart, in alternating order (the second one finds the chunk's bytes in the cache).
  constexpr std::size_t chunk = 200;
  std::size_t sink = 0;
  simdjson::dom::parser dom;
  simdjson::ondemand::parser od;
  auto raw_pass = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      simdjson::dom::element e;
      if (dom.parse(lines[i]).get(e) == simdjson::SUCCESS)
        ++sink;
    }
  };
  auto od_pass = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      simdjson::ondemand::document doc;
      simdjson::ondemand::value root;
      if (od.iterate(lines[i]).get(doc) == simdjson::SUCCESS && doc.get_value().get(root) == simdjson::SUCCESS)
        sink += walk(root);
    }
  };
  auto typed_pass = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      auto ev = kozmo::k8s::decode_watch_event<kozmo::k8s::pod>(std::string_view(lines[i].data(), lines[i].size()));
      if (ev)
        sink += ev->object.spec.containers.size();
    }
  };
  struct path {
    bool on;
    std::function<void(std::size_t, std::size_t)> run;
    std::vector<double> seconds; // per round
  };
  path paths[3] = {{run_raw, raw_pass, {}}, {run_od, od_pass, {}}, {run_typed, typed_pass, {}}};
  for (int r = 0; r < rounds; ++r) {
    double spent[3] = {0, 0, 0};
    for (std::size_t from = 0, c = 0; from < lines.size(); from += chunk, ++c) {
      std::size_t to = std::min(lines.size(), from + chunk);
      for (int k = 0; k < 3; ++k) {
        int p = c % 2 ? 2 - k : k;
        if (!paths[p].on)
          continue;
        double t0 = cpu_seconds();
        paths[p].run(from, to);
        spent[p] += cpu_seconds() - t0;
      }
    }
    for (int p = 0; p < 3; ++p)
      paths[p].seconds.push_back(spent[p]);
  }
  auto best = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  // The median over rounds of a per-round ratio of rates (a over b).
  auto median_ratio = [&](const path& a, const path& b) {
    std::vector<double> q;
    for (int r = 0; r < rounds; ++r)
      q.push_back(b.seconds[r] / a.seconds[r]);
    std::sort(q.begin(), q.end());
    return q.size() % 2 ? q[q.size() / 2] : (q[q.size() / 2 - 1] + q[q.size() / 2]) / 2;
  };
  double best_raw = run_raw ? best(paths[0].seconds) : 0, best_od = run_od ? best(paths[1].seconds) : 0,
         best_typed = run_typed ? best(paths[2].seconds) : 0;

  // Heap allocations per typed decode, outside the timed loops (the decoded event included).
  std::size_t allocs_before = allocations;
  for (auto& l : lines) {
    if (!run_typed)
      break;
    auto ev = kozmo::k8s::decode_watch_event<kozmo::k8s::pod>(std::string_view(l.data(), l.size()));
    sink += ev.has_value();
  }
  double allocs_per_event = double(allocations - allocs_before) / events;

  double raw_rate = events / best_raw, od_rate = events / best_od, typed_rate = events / best_typed;
  if (run_raw)
    std::printf("  simdjson raw parse (dom):    %10.0f events/s  %7.1f MiB/s\n", raw_rate, bytes / best_raw / 1048576.0);
  if (run_od)
    std::printf("  simdjson ondemand full walk: %10.0f events/s  %7.1f MiB/s\n", od_rate, bytes / best_od / 1048576.0);
  if (run_typed)
    std::printf("  typed decode (k8s::pod):     %10.0f events/s  %7.1f MiB/s\n", typed_rate, bytes / best_typed / 1048576.0);
  if (run_typed)
    std::printf("  typed decode heap allocations: %7.1f per event (bookmarks included)\n", allocs_per_event);
  if (run_raw && run_typed)
    std::printf("  typed / raw:                 %10.1f %%   (median of the rounds' ratios; target >= 50 %%)\n",
                100.0 * median_ratio(paths[2], paths[0]));
  if (run_od && run_typed)
    std::printf("  typed / ondemand walk:       %10.1f %%\n", 100.0 * median_ratio(paths[2], paths[1]));
  std::printf("  (best round per path for the rates; checksum %zu)\n", sink);
  return 0;
}
