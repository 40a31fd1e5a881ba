// The scheduler's configuration core: HiveD's YAML read unchanged, the physical cell forest,
// and the checks that refuse a configuration HiveD would refuse, each naming the culprit.
#include "actors/scheduler/cell_tree.hpp"
#include "actors/scheduler/config.hpp"
#include "actors/scheduler/virtual_clusters.hpp"

#include "tests/unit/scheduler_fixtures.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace kozmo::scheduler;
using Catch::Matchers::Contains;

namespace {

std::string read_design_config() {
  const char* path = std::getenv("KOZMO_HIVED_DESIGN_CONFIG");
  if (!path) FAIL("KOZMO_HIVED_DESIGN_CONFIG is not set; run through `meson test`");
  std::ifstream in(path);
  if (!in) FAIL("HiveD design config not found at " << path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const cluster_model& design_model() {
  static const cluster_model model = [] {
    auto m = load_cluster_model(read_design_config());
    if (!m) FAIL("design config rejected: " << m.err().message);
    return std::move(*m);
  }();
  return model;
}

// The reference's V100 example (cell types and racks, no VCs).
const std::string& v100_cell_types = test::v100_cluster;

std::string v100_with_vcs(const std::string& vcs) { return v100_cell_types + vcs; }

// A small two-node CT1 cluster for the validation cases.
std::string ct1_cluster(const std::string& extra_node_children, const std::string& vcs) {
  return R"(
physicalCluster:
  cellTypes:
    CT1-NODE: {childCellType: CT1, childCellNumber: 2, isNodeLevel: true}
  physicalCells:
  - cellType: CT1-NODE
    cellAddress: node-a
)" + extra_node_children + R"(
  - cellType: CT1-NODE
    cellAddress: node-b
)" + vcs;
}

std::string error_of(const std::string& yaml) {
  auto m = load_cluster_model(yaml);
  if (m) return "<accepted>";
  return m.err().message;
}

std::vector<int> gpu_indices(const cell_tree& tree, const std::vector<cell_id>& leaves) {
  std::vector<int> out;
  for (auto id : leaves) out.push_back(tree.at(id).leaf_indices.at(0));
  return out;
}

} // namespace

TEST_CASE("HiveD's design config loads unchanged with HiveD's defaults") {
  const auto& m = design_model();
  CHECK(m.cfg.web_server_address.empty()); // not set: `kozmo extender` picks loopback
  CHECK(m.cfg.force_pod_bind_threshold == 3);
  CHECK(m.cfg.waiting_pod_scheduling_block_millisec == 0);
  CHECK(m.cfg.kube_config_file_path.empty());
  CHECK(m.cfg.physical_cluster.cell_types.size() == 21);
  CHECK(m.cfg.physical_cluster.physical_cells.size() == 10);
  REQUIRE(m.vcs.size() == 2);
  CHECK(m.vcs[0].name == "VC1");
  CHECK(m.vcs[1].name == "VC2");
}

TEST_CASE("the design config implies exactly twenty nodes with these GPUs per leaf type") {
  using counts = std::map<std::string, int>;
  const std::map<std::string, counts> expected{
      {"0.0.0.0", {{"CT1", 2}}},
      {"0.0.0.1", {{"CT1", 2}}},
      {"0.0.1.0", {{"DGX2-V100", 16}}},
      {"0.0.2.0", {{"DGX2-V100", 16}}},
      {"0.0.2.1", {{"DGX2-V100", 16}}},
      {"0.0.2.2", {{"DGX2-V100", 16}}},
      {"0.0.3.0", {{"DGX2-V100", 16}}},
      {"0.0.3.1", {{"DGX2-V100", 16}}},
      {"0.0.3.2", {{"DGX2-V100", 16}}},
      {"0.0.3.3", {{"DGX2-V100", 16}}},
      {"0.0.4.0", {{"DGX2-V100", 16}}},
      {"0.0.4.1", {{"DGX2-V100", 16}}},
      {"0.0.4.2", {{"DGX2-V100", 16}}},
      {"0.0.4.3", {{"DGX2-V100", 16}}},
      {"0.0.5.0", {{"DGX2-V100", 16}}},
      {"0.1.0.0", {{"IB-DGX2-V100-V100", 16}}},
      {"0.1.0.1", {{"IB-DGX2-V100-V100", 16}}},
      {"1.0.0.0", {{"DGX1-P100", 8}}},
      {"1.0.0.1", {{"DGX1-P100", 8}}},
      {"1.0.0.2", {{"CT1", 2}, {"DGX1-P100", 8}}},
  };
  std::map<std::string, counts> actual;
  for (const auto& n : design_model().tree.nodes()) actual[n.node] = n.leaves_by_type;
  CHECK(actual == expected);
}

TEST_CASE("node 1.0.0.0 keeps its shuffled addresses and lists GPUs in tree order") {
  const auto& tree = design_model().tree;
  const auto leaves = tree.leaf_cells_of("1.0.0.0");
  CHECK(gpu_indices(tree, leaves) == std::vector<int>{1, 3, 4, 7, 0, 2, 6, 5});
  std::vector<std::string> addresses;
  for (auto id : leaves) addresses.push_back(tree.at(id).address);
  CHECK(addresses == std::vector<std::string>{"1.0.0.0/1/1/1", "1.0.0.0/1/1/3", "1.0.0.0/1/0/4",
                                              "1.0.0.0/1/0/7", "1.0.0.0/0/1/0", "1.0.0.0/0/1/2",
                                              "1.0.0.0/0/0/6", "1.0.0.0/0/0/5"});
  // Buddies follow the tree: GPU 1's buddy is GPU 3, and socket 1 holds GPUs 1, 3, 4, 7.
  const auto& gpu1 = tree.at(leaves[0]);
  CHECK(tree.at(gpu1.parent).leaf_indices == std::vector<int>{1, 3});
  CHECK(tree.at(tree.at(gpu1.parent).parent).leaf_indices == std::vector<int>{1, 3, 4, 7});
  CHECK(tree.at(tree.at(gpu1.parent).parent).type == "DGX1-P100-CPU-SOCKET");
}

TEST_CASE("node 1.0.0.2 carries a CT1 node and a DGX1-P100 node, ten GPUs of two types") {
  const auto& tree = design_model().tree;
  const auto node_cells = tree.node_level_cells_of("1.0.0.2");
  REQUIRE(node_cells.size() == 2);
  CHECK(tree.at(node_cells[0]).type == "CT1-NODE");
  CHECK(tree.chain_of(node_cells[0]) == "CT1-NODE");
  CHECK(tree.at(node_cells[0]).leaf_indices == std::vector<int>{8, 9});
  CHECK(tree.at(node_cells[1]).type == "DGX1-P100-NODE");
  CHECK(tree.chain_of(node_cells[1]) == "3-DGX1-P100-NODE");
  // Its omitted P100 hierarchy is inferred just like 1.0.0.1's explicit one.
  CHECK(tree.at(node_cells[1]).leaf_indices == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  const auto leaves = tree.leaf_cells_of("1.0.0.2");
  CHECK(gpu_indices(tree, leaves) == std::vector<int>{8, 9, 0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(tree.at(leaves[0]).leaf_type == "CT1");
  CHECK(tree.at(leaves.back()).leaf_type == "DGX1-P100");
  CHECK(tree.at(leaves.back()).address == "1.0.0.2/1/3/7");
  CHECK(tree.find("3-DGX1-P100-NODE", "1.0.0.1/1/3/7").has_value());
}

TEST_CASE("omitted addresses in a DGX2 node default to per-node indices") {
  const auto& tree = design_model().tree;
  const auto leaves = tree.leaf_cells_of("0.0.1.0");
  REQUIRE(leaves.size() == 16);
  CHECK(tree.at(leaves.back()).address == "0.0.1.0/1/3/7/15");
  CHECK(tree.at(leaves.back()).level == 1);
  CHECK(tree.at(tree.at(leaves.back()).parent).level == 2);
  CHECK(tree.chain_of(leaves.back()) == "DGX2-V100-NODE");
  // A node inside a rack belongs to the rack's chain.
  CHECK(tree.chain_of(tree.leaf_cells_of("0.0.3.0").front()) == "4-DGX2-V100-NODE");
}

TEST_CASE("pinned cells sit at GPU, half-rack and rack level of the design config") {
  const auto& tree = design_model().tree;
  auto gpu = tree.find_pinned("VC1-YQW-CT1");
  REQUIRE(gpu);
  CHECK(tree.at(*gpu).level == 1);
  CHECK(tree.at(*gpu).address == "1.0.0.2/8");
  CHECK(tree.at(*gpu).node == "1.0.0.2");

  auto half_rack = tree.find_pinned("VC1-YQW-DGX2");
  REQUIRE(half_rack);
  CHECK(tree.at(*half_rack).type == "2-DGX2-V100-NODE");
  CHECK(tree.at(*half_rack).level == 6);
  CHECK(tree.at(*half_rack).address == "7/0");
  CHECK(tree.at(*half_rack).leaf_count == 32);
  CHECK(tree.at(tree.at(*half_rack).children[1]).address == "0.0.3.1");

  auto rack = tree.find_pinned("VC1-YQW-IB-DGX2");
  REQUIRE(rack);
  CHECK(tree.at(*rack).parent == no_cell);
  CHECK(tree.at(*rack).address == "9");
  CHECK(tree.at(*rack).leaf_type == "IB-DGX2-V100-V100");

  const auto& vc1 = design_model().vcs[0];
  CHECK(vc1.pinned_ids == std::vector<std::string>{"VC1-YQW-CT1", "VC1-YQW-DGX2", "VC1-YQW-IB-DGX2"});
}

TEST_CASE("qualified VC cell types resolve to a chain, a type and a level") {
  const auto& vc2 = design_model().vcs[1];
  REQUIRE(vc2.cells.size() == 3);
  CHECK(vc2.cells[1].chain == "3-DGX1-P100-NODE");
  CHECK(vc2.cells[1].cell_type == "DGX1-P100-CPU-SOCKET");
  CHECK(vc2.cells[1].level == 3);
  CHECK(vc2.cells[1].count == 2);
  CHECK(vc2.cells[2].chain == "CT1-NODE");
  CHECK(vc2.cells[2].level == 2);
}

TEST_CASE("the reference's V100 racks build with node, socket and switch addresses") {
  auto m = load_cluster_model(v100_with_vcs(R"(
virtualClusters:
  VC1:
    virtualCells: [{cellType: V100-RACK, cellNumber: 2}]
)"));
  REQUIRE(m.has_value());
  const auto& tree = m->tree;
  REQUIRE(tree.top_cells().size() == 2);
  CHECK(tree.at(tree.top_cells()[1]).address == "1");
  CHECK(tree.at(tree.top_cells()[1]).leaf_count == 16);
  CHECK(tree.at(tree.top_cells()[1]).leaf_indices.empty());
  const auto nodes = tree.nodes();
  REQUIRE(nodes.size() == 4);
  for (const auto& n : nodes) CHECK(n.leaves_by_type == std::map<std::string, int>{{"V100", 8}});
  const auto leaves = tree.leaf_cells_of("0.0.0.3");
  CHECK(gpu_indices(tree, leaves) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(tree.at(leaves[0]).address == "0.0.0.3/0/0/0");
  CHECK(tree.at(leaves[5]).address == "0.0.0.3/1/2/5");
  CHECK(tree.at(tree.at(leaves[5]).parent).type == "V100-SWITCH");
  CHECK(m->vcs[0].cells[0].level == 5);
}

TEST_CASE("a VC asking for more racks than exist is refused naming chain and VC") {
  const auto msg = error_of(v100_with_vcs(R"(
virtualClusters:
  VC1:
    virtualCells: [{cellType: V100-RACK, cellNumber: 1}]
  VC2:
    virtualCells: [{cellType: V100-RACK, cellNumber: 2}]
)"));
  CHECK_THAT(msg, Contains("do not fit"));
  CHECK_THAT(msg, Contains("V100-RACK"));
  CHECK_THAT(msg, Contains("VC1 (1)"));
  CHECK_THAT(msg, Contains("VC2 (2)"));
}

TEST_CASE("leftover GPUs of split racks still fit smaller VC cells") {
  auto m = load_cluster_model(v100_with_vcs(R"(
virtualClusters:
  VC1:
    virtualCells: [{cellType: V100-RACK, cellNumber: 1}, {cellType: V100-RACK.V100-NODE, cellNumber: 1}]
  VC2:
    virtualCells: [{cellType: V100-RACK.V100-NODE.V100-SOCKET.V100-SWITCH, cellNumber: 4}]
)"));
  CHECK(m.has_value());
  const auto msg = error_of(v100_with_vcs(R"(
virtualClusters:
  VC1:
    virtualCells: [{cellType: V100-RACK, cellNumber: 1}, {cellType: V100-RACK.V100-NODE, cellNumber: 1}]
  VC2:
    virtualCells: [{cellType: V100-RACK.V100-NODE.V100-SOCKET.V100-SWITCH, cellNumber: 5}]
)"));
  CHECK_THAT(msg, Contains("'V100-SWITCH'"));
  CHECK_THAT(msg, Contains("has 4 free cells"));
}

TEST_CASE("a pinned GPU makes its node unusable as a whole node for other VCs") {
  const std::string pinned_gpu = R"(
    cellChildren:
    - pinnedCellId: P1
    - {}
)";
  CHECK_THAT(error_of(ct1_cluster(pinned_gpu, R"(
virtualClusters:
  A: {pinnedCells: [{pinnedCellId: P1}]}
  B: {virtualCells: [{cellType: CT1-NODE, cellNumber: 2}]}
)")), Contains("chain 'CT1-NODE' has 1 free cells of type 'CT1-NODE' but B (2)"));
  // What is left is one whole node and the pinned node's other GPU.
  CHECK(error_of(ct1_cluster(pinned_gpu, R"(
virtualClusters:
  A: {pinnedCells: [{pinnedCellId: P1}]}
  B: {virtualCells: [{cellType: CT1-NODE, cellNumber: 1}, {cellType: CT1-NODE.CT1, cellNumber: 1}]}
)")) == "<accepted>");
  CHECK(error_of(ct1_cluster(pinned_gpu, R"(
virtualClusters:
  A: {pinnedCells: [{pinnedCellId: P1}]}
  B: {virtualCells: [{cellType: CT1-NODE.CT1, cellNumber: 3}]}
)")) == "<accepted>");
  CHECK_THAT(error_of(ct1_cluster(pinned_gpu, R"(
virtualClusters:
  A: {pinnedCells: [{pinnedCellId: P1}]}
  B: {virtualCells: [{cellType: CT1-NODE, cellNumber: 1}, {cellType: CT1-NODE.CT1, cellNumber: 2}]}
)")), Contains("has 1 free cells of type 'CT1' but B (2) ask for 2"));
}

TEST_CASE("an unknown top-level key is an error naming the key") {
  CHECK_THAT(error_of("webServerAdress: ':1'\n"), Contains("unknown key 'webServerAdress'"));
}

TEST_CASE("an unknown key inside a cell type is an error naming its path") {
  CHECK_THAT(error_of(R"(
physicalCluster:
  cellTypes:
    CT1-NODE: {childCellType: CT1, childCellNumber: 2, isNodelevel: true}
)"), Contains("unknown key 'physicalCluster.cellTypes.CT1-NODE.isNodelevel'"));
}

TEST_CASE("malformed YAML and wrong scalar types are errors, not crashes") {
  CHECK_THAT(error_of("physicalCluster: [\n"), Contains("malformed YAML"));
  CHECK_THAT(error_of("forcePodBindThreshold: many\n"), Contains("forcePodBindThreshold must be an integer"));
}

TEST_CASE("cell types that form a cycle are refused naming the cycle") {
  CHECK_THAT(error_of(R"(
physicalCluster:
  cellTypes:
    A: {childCellType: B, childCellNumber: 2, isNodeLevel: true}
    B: {childCellType: A, childCellNumber: 2}
)"), Contains("cycle: A -> B -> A"));
}

TEST_CASE("a physical cell whose chain has no node level is refused naming its type") {
  CHECK_THAT(error_of(R"(
physicalCluster:
  cellTypes:
    RACK: {childCellType: GPU, childCellNumber: 2}
  physicalCells: [{cellType: RACK}]
)"), Contains("physicalCells[0]: the chain of cell type 'RACK' has no node-level"));
}

TEST_CASE("a chain with two node levels is refused naming both") {
  CHECK_THAT(error_of(R"(
physicalCluster:
  cellTypes:
    OUTER: {childCellType: INNER, childCellNumber: 2, isNodeLevel: true}
    INNER: {childCellType: GPU, childCellNumber: 2, isNodeLevel: true}
)"), Contains("cell type 'OUTER' has more than one node level on its chain: OUTER, INNER"));
}

TEST_CASE("a non-positive childCellNumber is refused naming the type") {
  CHECK_THAT(error_of(R"(
physicalCluster:
  cellTypes:
    NODE: {childCellType: GPU, childCellNumber: 0, isNodeLevel: true}
)"), Contains("cell type 'NODE': childCellNumber must be positive, got 0"));
}

TEST_CASE("a physical cell with the wrong number of children is refused naming its address") {
  CHECK_THAT(error_of(ct1_cluster(R"(
    cellChildren: [{cellAddress: 0}, {cellAddress: 1}, {cellAddress: 2}]
)", "")), Contains("physical cell 'node-a' of type 'CT1-NODE' has 3 children but the type requires 2"));
}

TEST_CASE("a child of the wrong cell type is refused naming the parent and the type") {
  CHECK_THAT(error_of(ct1_cluster(R"(
    cellChildren: [{cellType: K80}, {}]
)", "")), Contains("physical cell 'node-a' of type 'CT1-NODE' has child #0 of type 'K80'"));
}

TEST_CASE("a node-level cell without a node name is refused") {
  CHECK_THAT(error_of(v100_with_vcs(R"(
  - cellType: V100-RACK
    cellChildren: [{cellAddress: 0.0.0.5}, {}]
)")), Contains("node-level cell of type 'V100-NODE' under '2' has no cellAddress"));
}

TEST_CASE("duplicate addresses within a chain are refused naming the address") {
  CHECK_THAT(error_of(R"(
physicalCluster:
  cellTypes:
    CT1-NODE: {childCellType: CT1, childCellNumber: 2, isNodeLevel: true}
  physicalCells:
  - {cellType: CT1-NODE, cellAddress: node-a}
  - {cellType: CT1-NODE, cellAddress: node-a}
)"), Contains("duplicate cell address 'node-a' in chain 'CT1-NODE'"));
}

TEST_CASE("two chains on one node may not claim the same GPU index") {
  CHECK_THAT(error_of(R"(
physicalCluster:
  cellTypes:
    CT1-NODE: {childCellType: CT1, childCellNumber: 2, isNodeLevel: true}
    CT2-NODE: {childCellType: CT2, childCellNumber: 2, isNodeLevel: true}
  physicalCells:
  - {cellType: CT1-NODE, cellAddress: node-a}
  - cellType: CT2-NODE
    cellAddress: node-a
    cellChildren: [{cellAddress: 1}, {cellAddress: 2}]
)"), Contains("GPU index 1 on node 'node-a' belongs to two cells: 'node-a/1' and 'node-a/1'"));
}

TEST_CASE("a non-integer GPU address is refused naming the cell") {
  CHECK_THAT(error_of(ct1_cluster(R"(
    cellChildren: [{cellAddress: gpu0}, {}]
)", "")), Contains("GPU address 'gpu0' of cell 'node-a/gpu0' is not a non-negative integer"));
}

TEST_CASE("a pinnedCellId on two physical cells is refused naming the id") {
  CHECK_THAT(error_of(ct1_cluster(R"(
    cellChildren: [{pinnedCellId: P1}, {pinnedCellId: P1}]
)", "")), Contains("duplicate pinnedCellId 'P1' on cells 'node-a/0' and 'node-a/1'"));
}

TEST_CASE("a pinned cell inside another pinned cell is refused naming both") {
  CHECK_THAT(error_of(R"(
physicalCluster:
  cellTypes:
    CT1-NODE: {childCellType: CT1, childCellNumber: 2, isNodeLevel: true}
  physicalCells:
  - cellType: CT1-NODE
    cellAddress: node-a
    pinnedCellId: OUTER
    cellChildren: [{pinnedCellId: INNER}, {}]
)"), Contains("pinned cell 'INNER' at 'node-a/0' lies inside pinned cell 'OUTER'"));
}

TEST_CASE("a pinnedCellId used by two VCs is refused naming both VCs") {
  CHECK_THAT(error_of(ct1_cluster(R"(
    pinnedCellId: P1
)", R"(
virtualClusters:
  A: {pinnedCells: [{pinnedCellId: P1}]}
  B: {pinnedCells: [{pinnedCellId: P1}]}
)")), Contains("pinnedCellId 'P1' is used by virtual cluster 'A' and by 'B'"));
}

TEST_CASE("an unknown pinnedCellId in a VC is refused naming the VC and the id") {
  CHECK_THAT(error_of(ct1_cluster("", R"(
virtualClusters:
  A: {pinnedCells: [{pinnedCellId: NOPE}]}
)")), Contains("virtual cluster 'A': pinnedCellId 'NOPE' is not the pinnedCellId of any physical cell"));
}

TEST_CASE("an unknown VC cell type is refused naming the VC and the type") {
  CHECK_THAT(error_of(ct1_cluster("", R"(
virtualClusters:
  A: {virtualCells: [{cellType: K80-NODE, cellNumber: 1}]}
)")), Contains("virtual cluster 'A': cell type 'K80-NODE' is unknown"));
  // A leaf type is not a chain, and a dotted step must be the child type of the step before.
  CHECK_THAT(error_of(ct1_cluster("", R"(
virtualClusters:
  A: {virtualCells: [{cellType: CT1, cellNumber: 1}]}
)")), Contains("'CT1' is not the cell type of any top-level physical cell"));
  CHECK_THAT(error_of(ct1_cluster("", R"(
virtualClusters:
  B: {virtualCells: [{cellType: CT1-NODE.K80, cellNumber: 1}]}
)")), Contains("virtual cluster 'B': cell type 'CT1-NODE.K80' is unknown: 'K80' is not the child type of 'CT1-NODE'"));
}

TEST_CASE("an unknown key inside a physical cell is an error naming its path") {
  CHECK_THAT(error_of(ct1_cluster(R"(
    cellChildren: [{cellAdress: 0}, {}]
)", "")), Contains("unknown key 'physicalCluster.physicalCells[0].cellChildren[0].cellAdress'"));
}

TEST_CASE("a cluster of absurd size is refused before it is built") {
  CHECK_THAT(error_of(R"(
physicalCluster:
  cellTypes:
    NODE: {childCellType: GPU, childCellNumber: 2000, isNodeLevel: true}
    RACK: {childCellType: NODE, childCellNumber: 2000}
  physicalCells: [{cellType: RACK}]
)"), Contains("physicalCells[0] of type 'RACK' takes the physical cluster past 1000000 cells"));
}

TEST_CASE("the design config has no whole 4-DGX2 rack left for a third VC") {
  // VC1's pinned half rack breaks one rack; VC1's quota already splits the other.
  const auto msg = error_of(read_design_config() + R"(
  VC3:
    virtualCells:
    - cellType: 4-DGX2-V100-NODE
      cellNumber: 1
)");
  // Larger cells are carved first, so the shortage shows at the level where cells run out.
  CHECK_THAT(msg, Contains("do not fit the physical cluster: chain '4-DGX2-V100-NODE' has 0 free cells "
                           "of type 'DGX2-V100-NODE' but VC1 (2) ask for 2"));
  const auto& vc1 = design_model().vcs[0];
  CHECK(vc1.cells[0].chain == "4-DGX2-V100-NODE");
  CHECK(vc1.cells[0].cell_type == "DGX2-V100-NODE");
  CHECK(vc1.cells[0].level == 5);
}

TEST_CASE("borrowing and the VCs' lending and borrowing limits are read with their defaults") {
  auto m = load_cluster_model(ct1_cluster("", R"(
borrowing: {enabled: true, reclaimTimeout: 2m}
virtualClusters:
  A: {virtualCells: [{cellType: CT1-NODE, cellNumber: 1}], lendingLimit: {CT1-NODE: 1}}
  B: {virtualCells: [{cellType: CT1-NODE, cellNumber: 1}], borrowingLimit: {CT1-NODE: 1}}
)"));
  REQUIRE(m);
  CHECK(m->cfg.borrowing.enabled);
  CHECK(m->cfg.borrowing.reclaim_timeout_ms == 120'000);
  CHECK(m->vcs[0].lending_limit.at("CT1-NODE") == 1);
  CHECK(m->vcs[0].borrowing_limit.empty());
  CHECK(m->vcs[1].borrowing_limit.at("CT1-NODE") == 1);
  auto off = parse_config("");
  REQUIRE(off);
  CHECK_FALSE(off->borrowing.enabled);
  CHECK(off->borrowing.reclaim_timeout_ms == 30'000);
  auto ms = parse_config("borrowing: {enabled: false, reclaimTimeout: 500ms}\n");
  REQUIRE(ms);
  CHECK(ms->borrowing.reclaim_timeout_ms == 500);
}

TEST_CASE("bad borrowing settings are refused naming the key and what is accepted") {
  CHECK_THAT(error_of("borrowing: {enabled: yes please}\n"), Contains("borrowing.enabled must be true or false"));
  CHECK_THAT(error_of("borrowing: {reclaimTimeout: soon}\n"),
             Contains("borrowing.reclaimTimeout must be a duration such as 30s, 2m or 500ms, got 'soon'"));
  CHECK_THAT(error_of("borrowing: {reclaimTimeout: 25h}\n"), Contains("borrowing.reclaimTimeout must be at most 24h"));
  CHECK_THAT(error_of("borrowing: {reclaimTimeout: 99999999999s}\n"), Contains("must be a duration"));
  CHECK_THAT(error_of("borrowing: {reclaim: 30s}\n"), Contains("unknown key 'borrowing.reclaim'"));
  CHECK_THAT(error_of(ct1_cluster("", R"(
virtualClusters:
  A: {virtualCells: [{cellType: CT1-NODE, cellNumber: 1}], lendingLimit: {CT1-NODE: -1}}
)")), Contains("virtualClusters.A.lendingLimit.CT1-NODE must be between 0 and 100000"));
  CHECK_THAT(error_of(ct1_cluster("", R"(
virtualClusters:
  A: {virtualCells: [{cellType: CT1-NODE, cellNumber: 1}], borrowingLimit: [CT1-NODE]}
)")), Contains("virtualClusters.A.borrowingLimit must be a mapping of cell type to count"));
  // A VC lends only cells of its own quota; a borrowing limit names a type some VC has.
  CHECK_THAT(error_of(ct1_cluster("", R"(
virtualClusters:
  A: {virtualCells: [{cellType: CT1-NODE, cellNumber: 1}]}
  B: {lendingLimit: {CT1-NODE: 1}}
)")), Contains("virtual cluster 'B': lendingLimit names cell type 'CT1-NODE', which is not one of its virtualCells"));
  CHECK_THAT(error_of(ct1_cluster("", R"(
virtualClusters:
  A: {virtualCells: [{cellType: CT1-NODE, cellNumber: 1}], borrowingLimit: {K80-NODE: 1}}
)")), Contains("virtual cluster 'A': borrowingLimit names cell type 'K80-NODE', which no virtual cluster's virtualCells has"));
}
