// Direct mode (`schedulerName: kozmo`, the scheduler actor) and the extender (behind
// kube-scheduler) are two front doors to one scheduler. Fed the same pods, they must accept
// and refuse the same ones, place them alike, and answer HiveD's inspect paths with the same
// bytes. Direct mode is exercised through the calls its actor makes (pod_intake, the core,
// inspect_api); the extender through extender_logic, as its actor does.
#include "actors/extender/extender_logic.hpp"
#include "actors/scheduler/inspect_api.hpp"
#include "actors/scheduler/pod_intake.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

using namespace kozmo;
using namespace kozmo::scheduler;

namespace {

// Two 8-GPU nodes (2 sockets x 2 switches x 2 GPUs) owned by one VC, as `kozmo local` derives.
constexpr const char* config = R"(
physicalCluster:
  cellTypes:
    V100-SWITCH: {childCellType: V100, childCellNumber: 2}
    V100-SOCKET: {childCellType: V100-SWITCH, childCellNumber: 2}
    V100-NODE: {childCellType: V100-SOCKET, childCellNumber: 2, isNodeLevel: true}
  physicalCells:
  - {cellType: V100-NODE, cellAddress: node-a}
  - {cellType: V100-NODE, cellAddress: node-b}
virtualClusters:
  default:
    virtualCells: [{cellType: V100-NODE, cellNumber: 2}]
)";

k8s::node ready(const std::string& name) {
  k8s::node n;
  n.metadata.name = name;
  n.status.conditions.push_back({"Ready", "True", "", "", {}, {}, {}});
  return n;
}

k8s::pod pod(const std::string& name, int gpus, std::map<std::string, std::string> annotations = {}) {
  k8s::pod p;
  p.metadata.name = name;
  p.metadata.namespace_ = "team";
  p.metadata.uid = "uid-" + name;
  p.metadata.annotations.insert(annotations.begin(), annotations.end());
  p.spec.scheduler_name = "kozmo";
  k8s::container c;
  c.name = "main";
  if (gpus > 0)
    c.resources.limits["nvidia.com/gpu"] = *k8s::quantity::parse(std::to_string(gpus));
  p.spec.containers.push_back(c);
  return p;
}

std::vector<k8s::pod> workload() {
  std::map<std::string, std::string> gang{{"kozmo.io/gang", "g"}, {"kozmo.io/gang-members", "4x2"}};
  return {
      pod("limit-only", 2), // no scheduling key at all: the GPU limit says it all
      pod("g-0", 2, gang),
      pod("g-1", 2, gang),
      pod("g-2", 2, gang),
      pod("g-3", 2, gang),
      pod("hived", 0, {{"hivedscheduler.microsoft.com/pod-scheduling-spec", "virtualCluster: default\nleafCellNumber: 4\n"}}),
      pod("typo", 2, {{"kozmo.io/gang-members", "four"}}),
      pod("no-gpu", 0),
      pod("unknown-vc", 1, {{"kozmo.io/virtual-cluster", "nope"}}),
      pod("too-big", 16),
  };
}

std::string verdict_of(const pod_decision& d) {
  if (d.kind == decision_kind::bind) {
    std::string gpus;
    for (int i : d.leaf_indices)
      gpus += (gpus.empty() ? "" : ",") + std::to_string(i);
    return "bind " + d.node + " [" + gpus + "]";
  }
  return d.kind == decision_kind::wait ? "wait" : "preempt";
}

} // namespace

TEST_CASE("direct mode and the extender accept, refuse and place the same pods, and inspect answers the same bytes",
          "[scheduler][extender][front-doors]") {
  auto direct_core = scheduler_core::load(config);
  auto extender_core = scheduler_core::load(config);
  REQUIRE(direct_core);
  REQUIRE(extender_core);
  intake_options intake;
  intake.default_virtual_cluster = default_virtual_cluster(config);
  extender::extender_logic extender(std::move(*extender_core), intake);
  auto& direct = *direct_core;
  for (const char* n : {"node-a", "node-b"}) {
    direct.set_node(n, node_healthy(ready(n)));
    extender.on_node(ready(n), false);
  }

  std::int64_t now = 1000;
  std::map<std::string, std::string> verdicts;
  for (const auto& p : workload()) {
    INFO("pod " << p.metadata.name);
    // Direct mode, as the scheduler actor admits a pod and runs a round.
    std::string by_direct;
    auto view = pod_view_of(p, intake);
    if (!view) {
      by_direct = "refused: " + view.err().message;
    } else if (auto added = direct.add_pod(*view); !added) {
      by_direct = "refused: " + added.err().message;
    } else {
      by_direct = "wait";
      for (const auto& d : direct.schedule(now))
        if (d.pod.uid == p.metadata.uid)
          by_direct = verdict_of(d);
      if (by_direct.rfind("bind", 0) == 0)
        direct.pod_bound(p.metadata.uid);
    }
    // The extender, as kube-scheduler asks it: filter on every node, then bind where it said.
    std::string by_extender;
    auto filtered = extender.filter({p, {"node-a", "node-b"}, false}, now);
    if (!filtered.result.error.empty()) {
      const std::string prefix = "pod team/" + p.metadata.name + ": ";
      REQUIRE(filtered.result.error.rfind(prefix, 0) == 0); // kube-scheduler shows it without context
      by_extender = "refused: " + filtered.result.error.substr(prefix.size());
    } else if (filtered.result.node_names.empty()) {
      by_extender = "wait";
    } else {
      auto binding = extender.bind({p.metadata.name, p.metadata.namespace_, p.metadata.uid,
                                    filtered.result.node_names.front()});
      REQUIRE(binding);
      std::string gpus = binding->annotations.at(leaf_cell_isolation_annotation);
      by_extender = "bind " + binding->node + " [" + gpus + "]";
      extender.bind_done(p.metadata.uid, true);
    }
    CHECK(by_direct == by_extender);
    verdicts[p.metadata.name] = by_direct;
    now += 1000;
  }
  CHECK_THAT(verdicts["limit-only"], Catch::StartsWith("bind node-a"));
  CHECK_THAT(verdicts["g-3"], Catch::StartsWith("bind "));
  CHECK_THAT(verdicts["hived"], Catch::StartsWith("bind "));
  CHECK_THAT(verdicts["typo"], Catch::Contains("\"four\" is not PODSxGPUS"));
  CHECK_THAT(verdicts["no-gpu"], Catch::Contains("asks for no GPU"));
  CHECK_THAT(verdicts["unknown-vc"], Catch::Contains("virtualCluster 'nope' does not exist"));
  CHECK(verdicts["too-big"] == "wait");

  for (const char* path :
       {"/v1/inspect/affinitygroups/", "/v1/inspect/affinitygroups", "/v1/inspect/affinitygroups/g",
        "/v1/inspect/affinitygroups/team%2Flimit-only", "/v1/inspect/affinitygroups/team/too-big",
        "/v1/inspect/affinitygroups/nope", "/v1/inspect/clusterstatus", "/v1/inspect/clusterstatus/physicalcluster",
        "/v1/inspect/clusterstatus/virtualclusters/", "/v1/inspect/clusterstatus/virtualclusters/default",
        "/v1/inspect/clusterstatus/virtualclusters/nope", "/v1/inspect/nothing?x=1"}) {
    INFO(path);
    auto a = answer_inspect(direct, path);
    auto b = extender.inspect(path);
    CHECK(a.status == b.status);
    CHECK(a.body == b.body);
  }
  // What the users see: HiveD's list shape, the pod with only a GPU limit placed by both.
  auto groups = json::parse(answer_inspect(direct, "/v1/inspect/affinitygroups/").body);
  REQUIRE(groups);
  REQUIRE(groups->find("items"));
  CHECK(groups->find("items")->as_array().size() == 4); // limit-only, g, hived, too-big
  CHECK(answer_inspect(direct, "/v1/inspect/affinitygroups/team%2Flimit-only").status == 200);
}

TEST_CASE("a pod with only a GPU limit is placed by both front doors", "[scheduler][extender][front-doors]") {
  auto core = scheduler_core::load(config);
  REQUIRE(core);
  extender::extender_logic extender(std::move(*core));
  auto p = pod("plain", 4);
  auto out = extender.filter({p, {"node-a", "node-b"}, false}, 0);
  CHECK(out.result.error.empty());
  REQUIRE(out.result.node_names.size() == 1);
  auto view = pod_view_of(p, {});
  REQUIRE(view);
  CHECK(view->spec.virtual_cluster == "default");
  CHECK(view->spec.leaf_cell_number == 4);
  CHECK(view->spec.affinity_group == "team/plain");
}
