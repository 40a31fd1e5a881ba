#include "actors/scheduler/pod_scheduling_spec.hpp"

#include <catch2/catch.hpp>

using namespace kozmo::scheduler;

namespace {
std::map<std::string, std::string> hived(const std::string& yaml) { return {{hived_spec_annotation, yaml}}; }
} // namespace

TEST_CASE("HiveD's scheduling spec annotation is accepted unchanged, affinity group included") {
  auto s = parse_pod_scheduling_spec(hived(R"(
virtualCluster: vc1
priority: 100
leafCellType: V100
leafCellNumber: 2
lazyPreemptionEnable: true
affinityGroup:
  name: job1
  members:
  - {podNumber: 4, leafCellNumber: 2}
  - {podNumber: 1, leafCellNumber: 4}
)"),
                                     "team-a", "job1-worker-0");
  REQUIRE(s.has_value());
  CHECK(s->virtual_cluster == "vc1");
  CHECK(s->priority == 100);
  CHECK(s->leaf_cell_type == "V100");
  CHECK(s->lazy_preemption_enable);
  CHECK(s->ignore_k8s_suggested_nodes); // HiveD's default
  CHECK(s->affinity_group == "job1");
  REQUIRE(s->members.size() == 2);
  CHECK(s->members[0] == affinity_member{4, 2});
}

TEST_CASE("a pod without an affinity group is a group of one named after it, and old gpu keys still work") {
  auto s = parse_pod_scheduling_spec(hived("virtualCluster: vc1\npriority: -1\ngpuType: K80\ngpuNumber: 1\n"), "ns",
                                     "p");
  REQUIRE(s.has_value());
  CHECK(s->opportunistic());
  CHECK(s->leaf_cell_type == "K80");
  CHECK(s->affinity_group == "ns/p");
  REQUIRE(s->members.size() == 1);
  CHECK(s->members[0] == affinity_member{1, 1});
}

TEST_CASE("Kozmo's flat annotations say the same as HiveD's spec") {
  auto s = parse_pod_scheduling_spec({{"kozmo.io/virtual-cluster", "vc2"},
                                      {"kozmo.io/leaf-cell-number", "2"},
                                      {"kozmo.io/gang", "train"},
                                      {"kozmo.io/gang-members", "4x2,1x4"},
                                      {"kozmo.io/sim-duration", "5s"}},
                                     "ns", "p");
  REQUIRE(s.has_value());
  CHECK(s->virtual_cluster == "vc2");
  CHECK(s->affinity_group == "train");
  REQUIRE(s->members.size() == 2);
  CHECK(s->members[1] == affinity_member{1, 4});
}

TEST_CASE("a pod that asks nothing of the GPU scheduler is told apart from a malformed request") {
  auto none = parse_pod_scheduling_spec({{"kozmo.io/sim-duration", "5s"}}, "ns", "p");
  REQUIRE_FALSE(none.has_value());
  CHECK(none.err().reason == "NotRequested");
}

TEST_CASE("each malformed spec gets a 400 whose message names the field and what is accepted") {
  auto check = [](const std::string& yaml, const std::string& needle) {
    auto s = parse_pod_scheduling_spec(hived(yaml), "ns", "p");
    INFO(yaml);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.err().code == 400);
    CHECK_THAT(s.err().message, Catch::Contains(needle));
  };
  check("priority: 1\nleafCellNumber: 1\n", "virtualCluster is required");
  check("virtualCluster: v\npriority: 1001\nleafCellNumber: 1\n", "priority 1001 is out of range");
  check("virtualCluster: v\npriority: -2\nleafCellNumber: 1\n", "use -1 (opportunistic) or 0..1000");
  check("virtualCluster: v\nleafCellNumber: 0\n", "leafCellNumber must be a positive number");
  check("virtualCluster: v\nleafCellNumber: 2\naffinityGroup: {name: g, members: [{podNumber: 2, leafCellNumber: 4}]}\n",
        "no member with leafCellNumber 2");
  check("virtualCluster: v\nleafCellNumber: 2\naffinityGroup: {name: g, members: [{podNumber: 0, leafCellNumber: 2}]}\n",
        "must be positive");
  check("virtualCluster: v\nleafCellNumber: 2\naffinityGroup: {name: '', members: [{podNumber: 1, leafCellNumber: 2}]}\n",
        "affinityGroup.name must not be empty");
  check("virtualCluster: v\nleafCellNumber: two\n", "wrong type");
  check("virtualCluster: v\nleafCellNumber: 1\ngpuTyp: V100\n", "unknown field gpuTyp");
  check("virtualCluster: [", "not valid YAML");
  auto flat = parse_pod_scheduling_spec({{"kozmo.io/virtual-cluster", "v"}, {"kozmo.io/gang-members", "4by2"}}, "ns", "p");
  REQUIRE_FALSE(flat.has_value());
  CHECK_THAT(flat.err().message, Catch::Contains("kozmo.io/gang-members"));
}

TEST_CASE("gang topology keys are read beside either form and written back by scheduling_annotations") {
  std::map<std::string, std::string> a = {{"kozmo.io/virtual-cluster", "v"},
                                          {"kozmo.io/leaf-cell-number", "2"},
                                          {"kozmo.io/gang", "serve"},
                                          {"kozmo.io/gang-members", "4x2"},
                                          {"kozmo.io/gang-level", "rack"},
                                          {"kozmo.io/preferred-level", "DGX2-V100-NODE"},
                                          {"kozmo.io/subgroup", "prefill"},
                                          {"kozmo.io/subgroup-min-members", "2"},
                                          {"kozmo.io/subgroup-level", "node"}};
  auto s = parse_pod_scheduling_spec(a, "ns", "p");
  REQUIRE(s.has_value());
  CHECK(s->gang_level == "rack");
  CHECK(s->preferred_level == "DGX2-V100-NODE");
  CHECK(s->subgroup == "prefill");
  CHECK(s->subgroup_min_members == 2);
  CHECK(s->subgroup_level == "node");
  std::map<std::string, std::string> written;
  for (auto& [k, v] : scheduling_annotations(*s)) written[k] = v;
  auto again = parse_pod_scheduling_spec(written, "ns", "p");
  REQUIRE(again.has_value());
  CHECK(again->gang_level == "rack");
  CHECK(again->subgroup_min_members == 2);
  CHECK(again->subgroup_level == "node");
  // Beside HiveD's annotation (which otherwise wins over the flat keys).
  auto h = hived("virtualCluster: v\nleafCellNumber: 1\n");
  h["kozmo.io/gang-level"] = "node";
  auto with_hived = parse_pod_scheduling_spec(h, "ns", "p");
  REQUIRE(with_hived.has_value());
  CHECK(with_hived->gang_level == "node");
}

TEST_CASE("malformed gang topology keys get a 400 naming the key") {
  auto check = [](std::map<std::string, std::string> extra, const std::string& needle) {
    std::map<std::string, std::string> a = {{"kozmo.io/virtual-cluster", "v"}, {"kozmo.io/leaf-cell-number", "1"}};
    a.insert(extra.begin(), extra.end());
    auto s = parse_pod_scheduling_spec(a, "ns", "p");
    INFO(needle);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.err().code == 400);
    CHECK_THAT(s.err().message, Catch::Contains(needle));
  };
  check({{"kozmo.io/gang-level", ""}}, "kozmo.io/gang-level: \"\" must be 1..63 characters");
  check({{"kozmo.io/preferred-level", "rack level"}}, "kozmo.io/preferred-level: \"rack level\" is not a level");
  check({{"kozmo.io/subgroup-level", std::string(64, 'x')}, {"kozmo.io/subgroup", "s"}}, "must be 1..63 characters");
  check({{"kozmo.io/subgroup", "s"}, {"kozmo.io/subgroup-min-members", "0"}}, "kozmo.io/subgroup-min-members: 0 is out of range: use 1..10000");
  check({{"kozmo.io/subgroup", "s"}, {"kozmo.io/subgroup-min-members", "10001"}}, "out of range");
  check({{"kozmo.io/subgroup", "s"}, {"kozmo.io/subgroup-min-members", "two"}}, "kozmo.io/subgroup-min-members: \"two\" is not an integer");
  check({{"kozmo.io/subgroup-min-members", "2"}}, "kozmo.io/subgroup-min-members needs kozmo.io/subgroup");
  check({{"kozmo.io/subgroup-level", "node"}}, "kozmo.io/subgroup-level needs kozmo.io/subgroup");
  auto h = hived("virtualCluster: v\nleafCellNumber: 1\n");
  h["kozmo.io/subgroup"] = "a b";
  auto s = parse_pod_scheduling_spec(h, "ns", "p");
  REQUIRE_FALSE(s.has_value());
  CHECK_THAT(s.err().message, Catch::Contains("kozmo.io/subgroup: \"a b\""));
}
