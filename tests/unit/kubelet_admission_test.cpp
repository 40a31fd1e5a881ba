// The simulated kubelet's admission (admission.hpp) and its restart rule: a pod is refused the
// GPUs, CPU or memory the node has no more of, as a real kubelet refuses it, and a pod that was
// Running when the kubelet restarted keeps its time instead of starting over.
#include "actors/kubelet/admission.hpp"
#include "actors/kubelet/pod_lifecycle.hpp"
#include "k8s/model/codec.hpp"

#include <catch2/catch.hpp>

using namespace kozmo;
using namespace kozmo::kubelet;
using namespace std::chrono_literals;

namespace {

k8s::pod pod_asking(const std::string& resources) {
  auto p = k8s::decode_pod(R"({"metadata":{"name":"p","namespace":"default","uid":"u"},"spec":{"containers":[)"
                           R"({"name":"a","image":"x","resources":)" + resources + R"(}]}})");
  REQUIRE(p.has_value());
  return *p;
}

node_shape eight_gpus() {
  node_shape n;
  n.name = "node-0";
  n.gpus = 8;
  n.cpu = "4";
  n.memory = "16Gi";
  n.pods = "110";
  return n;
}

} // namespace

TEST_CASE("a pod that fits beside the others is admitted") {
  auto need = need_of(pod_asking(R"({"limits":{"nvidia.com/gpu":"2","cpu":"1","memory":"1Gi"}})"));
  CHECK(need.gpus == 2);
  CHECK(need.milli_cpu == 1000);
  CHECK(need.pods == 1);
  resource_need used{6, 2000, 4LL << 30, 3};
  CHECK_FALSE(admit(need, used, capacity_of(eight_gpus())));
}

TEST_CASE("a pod asking for more GPUs than are left is refused as a real kubelet refuses it") {
  auto need = need_of(pod_asking(R"({"limits":{"nvidia.com/gpu":"4"}})"));
  resource_need used{6, 0, 0, 2};
  auto refusal = admit(need, used, capacity_of(eight_gpus()));
  REQUIRE(refusal);
  CHECK(refusal->reason == "OutOfnvidia.com/gpu");
  CHECK(refusal->message == "Node didn't have enough resource: nvidia.com/gpu, requested: 4, used: 6, capacity: 8");
}

TEST_CASE("CPU, memory and the pod count are admitted the same way") {
  auto cpu = admit(need_of(pod_asking(R"({"requests":{"cpu":"3"}})")), resource_need{0, 2000, 0, 1},
                   capacity_of(eight_gpus()));
  REQUIRE(cpu);
  CHECK(cpu->reason == "OutOfcpu");
  CHECK(cpu->message == "Node didn't have enough resource: cpu, requested: 3000, used: 2000, capacity: 4000");
  auto memory = admit(need_of(pod_asking(R"({"limits":{"memory":"12Gi"}})")), resource_need{0, 0, 8LL << 30, 1},
                      capacity_of(eight_gpus()));
  REQUIRE(memory);
  CHECK(memory->reason == "OutOfmemory");
  auto pods = admit(need_of(pod_asking("{}")), resource_need{0, 0, 0, 110}, capacity_of(eight_gpus()));
  REQUIRE(pods);
  CHECK(pods->reason == "OutOfpods");
}

TEST_CASE("a pod that was Running before a restart runs on from its startedAt, restarts kept") {
  sim_pod p;
  p.uid = "u1";
  p.containers.push_back({"main", "busybox:1.36"});
  p.restart_policy = "Never";
  pod_script s;
  s.run_duration = 10s;
  auto now = clock::now();
  pod_lifecycle life(p, s, now);
  auto left = life.resume_running(now - 4s, 2, now);
  REQUIRE(left);
  CHECK(*left == 6s); // not the whole 10 s again
  CHECK(life.phase() == "Running");
  auto status = life.status_json();
  auto& cs = status.find("containerStatuses")->as_array().at(0);
  CHECK(cs.get_int("restartCount") == 2);
  CHECK(cs.at_path({"state", "running", "startedAt"})->as_string() == k8s::format_time(now - 4s));
  // One whose time has passed ends at once.
  pod_lifecycle late(p, s, now);
  CHECK(*late.resume_running(now - 30s, 0, now) == 0s);
}
