// The pure parts of Kozmo's metrics: waiting gangs counted by VC and reason, an object's place in
// a by-phase count, a training job's phase, how a pass is labelled in controller-runtime's terms.
// What a Prometheus user reads is checked end to end in tests/e2e/prometheus_e2e.sh.
#include "actors/controller/controller_metrics.hpp"
#include "actors/scheduler/scheduler_metrics.hpp"
#include "actors/training/job_status.hpp"
#include "k8s/metrics/registry.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <sstream>

using namespace kozmo;

namespace {

// The value of one exposed series ("name{labels}" exactly as rendered), or nullopt.
std::optional<double> value_of(const std::string& series) {
  std::istringstream in(metrics::render());
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(series + " ", 0) == 0)
      return std::stod(line.substr(series.size() + 1));
  return std::nullopt;
}

int count_of(const std::vector<scheduler::waiting_count>& counts, const std::string& vc, std::string_view reason) {
  for (const auto& c : counts)
    if (c.vc == vc && c.reason == reason)
      return c.gangs;
  return -1;
}

} // namespace

TEST_CASE("waiting gangs are counted once under their VC and reason, every VC showing every reason") {
  std::vector<scheduler::vc_usage> vcs{{"prod", 16, 8, 8, 0}, {"research", 8, 0, 8, 0}};
  std::vector<scheduler::waiting_gang> waiting(3);
  waiting[0].vc = "prod";
  waiting[0].reason_kind = "VirtualClusterFull";
  waiting[1].vc = "prod";
  waiting[1].reason_kind = "VirtualClusterFull";
  waiting[2].vc = "prod";
  waiting[2].reason_kind = "Preempting";
  auto counts = scheduler::count_waiting(vcs, waiting);
  CHECK(counts.size() == 2 * scheduler::wait_reasons.size());
  CHECK(count_of(counts, "prod", "VirtualClusterFull") == 2);
  CHECK(count_of(counts, "prod", "Preempting") == 1);
  CHECK(count_of(counts, "prod", "ClusterFull") == 0);
  // A VC nobody waits in still reads 0 for each reason: a gang that stops waiting is not left stale.
  for (auto r : scheduler::wait_reasons)
    CHECK(count_of(counts, "research", r) == 0);

  SECTION("a gang outside any VC, or with a reason outside the fixed set, still counts once") {
    std::vector<scheduler::waiting_gang> odd(2);
    odd[0].reason_kind = "";              // physical mode, no word given
    odd[1].vc = "research";
    odd[1].reason_kind = "SomethingNew";  // never a new label value
    auto c = scheduler::count_waiting(vcs, odd);
    CHECK(count_of(c, "", "ClusterFull") == 1);
    CHECK(count_of(c, "research", "VirtualClusterFull") == 1);
    int total = 0;
    for (const auto& x : c)
      total += x.gangs;
    CHECK(total == 2);
  }
}

TEST_CASE("the per-VC gauges show what the core reports") {
  scheduler::set_virtual_clusters({{"vc-a", 16, 12, 3, 2}}, {});
  CHECK(value_of(R"(kozmo_virtual_cluster_gpus{state="used",virtual_cluster="vc-a"})") == 12);
  CHECK(value_of(R"(kozmo_virtual_cluster_gpus{state="free",virtual_cluster="vc-a"})") == 3);
  CHECK(value_of(R"(kozmo_virtual_cluster_gpus{state="borrowed",virtual_cluster="vc-a"})") == 2);
  CHECK(value_of(R"(kozmo_waiting_gangs{reason="Reserving",virtual_cluster="vc-a"})") == 0);
}

TEST_CASE("a gauge slot counts its object in one state at a time and leaves the count when gone") {
  auto family = metrics::gauges("kozmo_test_objects", "test objects by phase");
  const std::string running = R"(kozmo_test_objects{phase="Running"})";
  const std::string done = R"(kozmo_test_objects{phase="Done"})";
  {
    metrics::gauge_slot a, b;
    a.move_to(family, {{"phase", "Running"}});
    b.move_to(family, {{"phase", "Running"}});
    a.move_to(family, {{"phase", "Running"}}); // again: no double count
    CHECK(value_of(running) == 2);
    a.move_to(family, {{"phase", "Done"}});
    CHECK(value_of(running) == 1);
    CHECK(value_of(done) == 1);
  }
  CHECK(value_of(running) == 0);
  CHECK(value_of(done) == 0);
}

TEST_CASE("a training job's phase is its decisive condition") {
  training::job_status s;
  CHECK(training::job_phase(s) == "Created");
  auto now = std::chrono::system_clock::now();
  training::set_condition(s, "Created", true, "Created", "", now);
  training::set_condition(s, "Running", true, "Running", "", now);
  CHECK(training::job_phase(s) == "Running");
  training::set_condition(s, "Restarting", true, "Restarting", "", now);
  CHECK(training::job_phase(s) == "Restarting");
  training::set_condition(s, "Succeeded", true, "Succeeded", "", now);
  CHECK(training::job_phase(s) == "Succeeded");
}

TEST_CASE("a pass is labelled as controller-runtime labels a reconcile") {
  using controller::reconcile_result;
  CHECK(controller::result_of_pass(false, 0, false) == reconcile_result::success);
  CHECK(controller::result_of_pass(false, 0, true) == reconcile_result::requeue_after);
  CHECK(controller::result_of_pass(true, 409, false) == reconcile_result::requeue);
  CHECK(controller::result_of_pass(true, 500, true) == reconcile_result::error);
  CHECK(controller::to_string(reconcile_result::requeue_after) == "requeue_after");
}
