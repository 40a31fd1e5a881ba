#include "runtime/metrics/metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <array>

namespace kozmo::metrics {
namespace {

using prometheus::Counter;
using prometheus::Gauge;
using prometheus::Histogram;

constexpr std::array<std::string_view, 5> methods{"GET", "POST", "PUT", "PATCH", "DELETE"};
constexpr std::array<std::string_view, 5> codes{"2xx", "3xx", "4xx", "5xx", "error"};

// Every family and series, created together the first time any metric is touched, so a
// scrape shows them all (at zero) from the start and an increment never looks anything up.
struct all_metrics {
  prometheus::Registry registry;

  std::array<Counter*, 3> decisions{};
  Histogram* round = nullptr;
  Gauge* pods_waiting = nullptr;
  Gauge* groups_allocated = nullptr;
  Counter* binds_succeeded = nullptr;
  Counter* binds_failed = nullptr;
  Counter* jobs_succeeded = nullptr;
  Counter* jobs_failed = nullptr;
  Counter* pods_created = nullptr;
  // [method (methods..., other)][code]
  std::array<std::array<Counter*, codes.size()>, methods.size() + 1> requests{};

  all_metrics() {
    auto& dec = prometheus::BuildCounter()
                    .Name("kozmo_scheduler_decisions_total")
                    .Help("Scheduling decisions for pods, by kind (bind, preempt, wait)")
                    .Register(registry);
    decisions[0] = &dec.Add({{"kind", "bind"}});
    decisions[1] = &dec.Add({{"kind", "preempt"}});
    decisions[2] = &dec.Add({{"kind", "wait"}});

    // From a single pod on a small cluster (tens of microseconds) to large gangs with
    // preemption on thousands of GPUs (a second or more).
    round = &prometheus::BuildHistogram()
                 .Name("kozmo_scheduler_round_seconds")
                 .Help("Duration of one scheduling round over every waiting pod")
                 .Register(registry)
                 .Add({}, Histogram::BucketBoundaries{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05, 0.1, 0.25, 0.5, 1, 2.5, 5});
    pods_waiting = &prometheus::BuildGauge()
                        .Name("kozmo_scheduler_pods_waiting")
                        .Help("Pods the scheduler could not place yet (reported as Unschedulable)")
                        .Register(registry)
                        .Add({});
    groups_allocated = &prometheus::BuildGauge()
                            .Name("kozmo_scheduler_groups_allocated")
                            .Help("Affinity groups holding a placement (one cellgroup actor each)")
                            .Register(registry)
                            .Add({});

    auto& binds = prometheus::BuildCounter()
                      .Name("kozmo_cellgroup_binds_total")
                      .Help("Pod bindings written by cellgroup actors, by outcome (failed: given up)")
                      .Register(registry);
    binds_succeeded = &binds.Add({{"outcome", "succeeded"}});
    binds_failed = &binds.Add({{"outcome", "failed"}});

    auto& jobs = prometheus::BuildCounter()
                     .Name("kozmo_training_jobs_finished_total")
                     .Help("Training jobs that reached a terminal condition, by outcome")
                     .Register(registry);
    jobs_succeeded = &jobs.Add({{"outcome", "succeeded"}});
    jobs_failed = &jobs.Add({{"outcome", "failed"}});
    pods_created = &prometheus::BuildCounter()
                        .Name("kozmo_training_pods_created_total")
                        .Help("Pods created by the training-job controller")
                        .Register(registry)
                        .Add({});

    auto& req = prometheus::BuildCounter()
                    .Name("kozmo_client_requests_total")
                    .Help("Kubernetes API requests (each attempt), by HTTP method and status class")
                    .Register(registry);
    for (std::size_t m = 0; m <= methods.size(); ++m)
      for (std::size_t c = 0; c < codes.size(); ++c)
        requests[m][c] = &req.Add(
            {{"method", m < methods.size() ? std::string(methods[m]) : "other"}, {"code", std::string(codes[c])}});
  }
};

all_metrics& get() {
  // Never destroyed: actors and io threads may still count while static destructors run.
  static all_metrics* m = new all_metrics;
  return *m;
}

} // namespace

bool enabled() { return true; }

std::string render() {
  auto& m = get();
  return prometheus::TextSerializer{}.Serialize(m.registry.Collect());
}

void scheduler_decision(decision kind) { get().decisions[static_cast<std::size_t>(kind)]->Increment(); }

void scheduler_round(double seconds) { get().round->Observe(seconds); }

void scheduler_pods_waiting(std::size_t n) { get().pods_waiting->Set(static_cast<double>(n)); }

void scheduler_groups_allocated(std::size_t n) { get().groups_allocated->Set(static_cast<double>(n)); }

void bind_done(bool succeeded) { (succeeded ? get().binds_succeeded : get().binds_failed)->Increment(); }

void training_job_finished(bool succeeded) { (succeeded ? get().jobs_succeeded : get().jobs_failed)->Increment(); }

void training_pod_created() { get().pods_created->Increment(); }

void client_request(std::string_view method, int status) {
  std::size_t m = 0;
  while (m < methods.size() && methods[m] != method)
    ++m;
  std::size_t c = status >= 200 && status < 600 ? static_cast<std::size_t>(status / 100 - 2) : codes.size() - 1;
  get().requests[m][c]->Increment();
}

} // namespace kozmo::metrics
