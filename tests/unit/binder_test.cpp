#include "actors/binder/first_fit.hpp"

#include <catch2/catch.hpp>

using namespace kozmo::binder;

namespace {
node_room gpu_node(std::string name, std::int64_t gpus) {
  node_room n;
  n.name = std::move(name);
  n.gpus = gpus;
  n.milli_cpu = 64000;
  n.memory_bytes = 512LL << 30;
  return n;
}
} // namespace

TEST_CASE("a pod goes to the first node with enough free GPUs") {
  pod_need p;
  p.gpus = 4;
  auto chosen = choose_node(p, {gpu_node("a", 2), gpu_node("b", 8), gpu_node("c", 8)});
  REQUIRE(chosen.has_value());
  CHECK(*chosen == "b");
}

TEST_CASE("when nothing fits the reason counts every node's refusal like kube-scheduler") {
  pod_need p;
  p.gpus = 8;
  auto cordoned = gpu_node("c", 8);
  cordoned.unschedulable = true;
  auto chosen = choose_node(p, {gpu_node("a", 2), gpu_node("b", 4), cordoned});
  REQUIRE_FALSE(chosen.has_value());
  CHECK(chosen.err().message ==
        "0/3 nodes are available: 2 Insufficient nvidia.com/gpu, 1 node(s) were unschedulable.");
}

TEST_CASE("node selectors and NoSchedule taints keep a pod off nodes it does not want or tolerate") {
  pod_need p;
  p.node_selector["kozmo.io/gpu-type"] = "V100";
  auto k80 = gpu_node("k80", 8);
  k80.labels["kozmo.io/gpu-type"] = "K80";
  auto v100 = gpu_node("v100", 8);
  v100.labels["kozmo.io/gpu-type"] = "V100";
  v100.taints.push_back({"dedicated", "ml", "NoSchedule"});
  auto refused = choose_node(p, {k80, v100});
  REQUIRE_FALSE(refused.has_value());
  CHECK_THAT(refused.err().message, Catch::Contains("untolerated taint {dedicated: ml}"));
  p.tolerations.push_back({"dedicated", "Equal", "ml", "NoSchedule"});
  auto chosen = choose_node(p, {k80, v100});
  REQUIRE(chosen.has_value());
  CHECK(*chosen == "v100");
}

TEST_CASE("an empty cluster says no nodes are registered") {
  auto chosen = choose_node(pod_need{}, {});
  REQUIRE_FALSE(chosen.has_value());
  CHECK_THAT(chosen.err().message, Catch::Contains("0/0 nodes are available"));
}

TEST_CASE("required node affinity keeps a pod on nodes whose labels match one of its terms") {
  node_room a100{"a100-node", true, false, {{"k8s.amazonaws.com/accelerator", "nvidia-tesla-a100"}}, {}, 8, 64000, 1LL << 36};
  node_room v100{"v100-node", true, false, {{"k8s.amazonaws.com/accelerator", "nvidia-tesla-v100"}}, {}, 8, 64000, 1LL << 36};
  pod_need pod;
  pod.gpus = 1;
  pod.required_terms = {{{"k8s.amazonaws.com/accelerator", "In", {"nvidia-tesla-v100"}}}};
  CHECK(choose_node(pod, {a100, v100}).value() == "v100-node");
  pod.required_terms = {{{"k8s.amazonaws.com/accelerator", "In", {"h100"}}}};
  auto none = choose_node(pod, {a100, v100});
  REQUIRE_FALSE(none.has_value());
  CHECK(none.err().message == "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.");
  // Terms are ORed, requirements ANDed.
  pod.required_terms = {{{"k8s.amazonaws.com/accelerator", "In", {"h100"}}},
                        {{"k8s.amazonaws.com/accelerator", "Exists", {}}, {"spot", "DoesNotExist", {}}}};
  CHECK(choose_node(pod, {a100, v100}).value() == "a100-node");
  CHECK(matches_term({{"gpus", "Gt", {"4"}}}, {{"gpus", "8"}}));
  CHECK_FALSE(matches_term({{"gpus", "Lt", {"4"}}}, {{"gpus", "8"}}));
  CHECK(matches_term({{"zone", "NotIn", {"a"}}}, {}));
}

TEST_CASE("a node with as many pods as it allows takes no more: the next node gets the pod, or it waits") {
  pod_need p; // a pod that asks for nothing still takes one of the node's pods
  auto full = gpu_node("a", 8);
  full.pods = 0;
  auto chosen = choose_node(p, {full, gpu_node("b", 8)});
  REQUIRE(chosen.has_value());
  CHECK(*chosen == "b"); // the kubelet of "a" would refuse it: OutOfpods

  auto none = choose_node(p, {full});
  REQUIRE_FALSE(none.has_value());
  CHECK(none.err().message == "0/1 nodes are available: 1 Too many pods.");
}
