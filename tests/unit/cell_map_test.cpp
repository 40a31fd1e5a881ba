// The cell map as a person reads it (the page, `kozmo status`, the metrics): each VC's GPUs,
// the gangs that wait and why, who holds every GPU, and the journal that tells a watching page
// only what changed.
#include "actors/scheduler/cell_map.hpp"
#include "actors/scheduler/inspect_api.hpp"
#include "tests/unit/scheduler_fixtures.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace kozmo;
using namespace kozmo::scheduler;
using Catch::Matchers::Contains;

namespace {

// Two racks of two 8-GPU nodes; team-a has one node's worth, team-b two.
const std::string cluster = std::string(test::v100_types) + R"(  - cellType: V100-RACK
    cellChildren: [{cellAddress: n1}, {cellAddress: n2}]
  - cellType: V100-RACK
    cellChildren: [{cellAddress: n3}, {cellAddress: n4}]
virtualClusters:
  team-a:
    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 1}]
  team-b:
    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 2}]
)";

scheduler_core load() {
  auto core = scheduler_core::load(cluster);
  REQUIRE(core);
  return std::move(*core);
}

pod_view pod(const std::string& group, int index, const std::string& vc, int priority, int gpus, int pods,
             std::int64_t created = 1000) {
  pod_view v;
  v.ref = {"default", group + "-" + std::to_string(index), group + "-" + std::to_string(index)};
  v.spec.affinity_group = group;
  v.spec.virtual_cluster = vc;
  v.spec.priority = priority;
  v.spec.leaf_cell_number = gpus;
  v.spec.members = {{pods, gpus}};
  v.created_ms = created;
  return v;
}

void add_gang(scheduler_core& core, const std::string& group, const std::string& vc, int priority, int gpus, int pods) {
  for (int i = 0; i < pods; ++i) REQUIRE(core.add_pod(pod(group, i, vc, priority, gpus, pods)));
}

const map_cell& node_cell(const cell_map& m, const std::string& node) {
  for (const auto& c : m.cells)
    if (c.node == node) return c;
  FAIL("no node " << node);
  return m.cells.front();
}

int gpus_in(const map_cell& c, gpu_state s, const std::string& gang = "") {
  int n = 0;
  for (const auto& r : c.gpus)
    if (r.state == s && (gang.empty() || r.gang == gang)) n += r.count;
  return n;
}

} // namespace

TEST_CASE("the map shows a bound gang's GPUs under its node, its VC's use, and a waiting gang's reason",
          "[cellmap]") {
  auto core = load();
  add_gang(core, "train", "team-b", 1, 8, 2);
  add_gang(core, "big", "team-a", 1, 8, 2); // team-a has 8 GPUs: waits
  core.schedule(2000);

  const cell_map m = core.map();
  REQUIRE(m.vcs.size() == 2);
  CHECK(m.vcs[0].name == "team-a");
  CHECK(m.vcs[0].guaranteed == 8);
  CHECK(m.vcs[0].used == 0);
  CHECK(m.vcs[1].name == "team-b");
  CHECK(m.vcs[1].guaranteed == 16);
  CHECK(m.vcs[1].used == 16);
  CHECK(m.vcs[1].free == 0);

  int bound = 0, cells_with_nodes = 0;
  for (const auto& c : m.cells) {
    if (c.node.empty()) {
      CHECK(c.gpus.empty());
      continue;
    }
    ++cells_with_nodes;
    CHECK(c.parent >= 0);
    CHECK(m.cells[static_cast<std::size_t>(c.parent)].node.empty()); // a rack
    bound += gpus_in(c, gpu_state::bound, "train");
    for (const auto& r : c.gpus)
      if (r.gang == "train") CHECK(r.vc == "team-b");
  }
  CHECK(cells_with_nodes == 4);
  CHECK(bound == 16);

  REQUIRE(m.waiting.size() == 1);
  CHECK(m.waiting[0].name == "big");
  CHECK(m.waiting[0].vc == "team-a");
  CHECK(m.waiting[0].gpus == 16);
  CHECK(m.waiting[0].pods == 2);
  CHECK(m.waiting[0].reason_kind == "VirtualClusterFull");
  CHECK_THAT(m.waiting[0].reason, Contains("VC team-a has 8 of 8"));
}

TEST_CASE("opportunistic gangs count as their VC's borrowed GPUs, and bad nodes show", "[cellmap]") {
  auto core = load();
  add_gang(core, "spare", "team-a", -1, 8, 2); // opportunistic: beyond team-a's 8
  core.schedule(2000);
  cell_map m = core.map();
  CHECK(m.vcs[0].borrowed == 16);
  CHECK(m.vcs[0].used == 0);
  int opportunistic = 0;
  for (const auto& c : m.cells) opportunistic += gpus_in(c, gpu_state::opportunistic, "spare");
  CHECK(opportunistic == 16);

  for (const char* n : {"n1", "n2", "n3"}) core.set_node(n, true);
  core.set_node("n4", false);
  m = core.map();
  CHECK(gpus_in(node_cell(m, "n4"), gpu_state::bad) == 8);
}

TEST_CASE("the journal moves its version only on a change and tells a reader only the cells that changed",
          "[cellmap]") {
  auto core = load();
  cell_map_journal journal(1'000'000);
  const auto v0 = journal.publish(core.map());
  CHECK(journal.publish(core.map()) == v0); // nothing changed
  CHECK_FALSE(journal.since(v0, 5000));     // a reader at v0 waits

  add_gang(core, "one", "team-b", 1, 8, 1);
  core.schedule(2000);
  const auto v1 = journal.publish(core.map());
  CHECK(v1 > v0);
  auto delta = journal.since(v0, 5000);
  REQUIRE(delta);
  const auto& d = delta->as_object();
  CHECK(d.find("full")->as_bool() == false);
  REQUIRE(d.find("cells")->as_array().size() == 1); // one node changed
  const auto& cell = d.find("cells")->as_array()[0].as_object();
  const auto index = cell.find("index")->as_int();
  const auto full = journal.full(5000);
  const auto& changed = full.as_object().find("cells")->as_array()[static_cast<std::size_t>(index)].as_object();
  CHECK_FALSE(changed.find("node")->as_string().empty());
  CHECK(json::dump(*cell.find("gpus")) == json::dump(*changed.find("gpus")));
  CHECK(json::dump(*cell.find("gpus")) == R"([["b",8,"one","team-b"]])");

  // A version from before this journal (a restart) or from its future gets the whole map.
  CHECK(journal.since(5, 5000)->as_object().find("full")->as_bool());
  CHECK(journal.since(v1 + 10, 5000)->as_object().find("full")->as_bool());
  // Waiting ages move every second without moving the version.
  add_gang(core, "wait", "team-a", 1, 8, 2);
  core.schedule(3000);
  const auto v2 = journal.publish(core.map());
  CHECK(v2 > v1);
  CHECK(journal.publish(core.map()) == v2);
  const auto w = journal.full(13000).as_object().find("waitingGangs")->as_array();
  REQUIRE(w.size() == 1);
  CHECK(w[0].as_object().find("waitingSeconds")->as_int() == 12);
}

TEST_CASE("cell map paths: the whole map, since a version, and bad versions", "[cellmap]") {
  CHECK(parse_since("/v1/inspect/cellmap/since/42") == 42u);
  CHECK(parse_since("/v1/inspect/cellmap/since/42/") == 42u);
  CHECK(parse_since("/v1/inspect/cellmap/since/42?x=1") == 42u);
  CHECK_FALSE(parse_since("/v1/inspect/cellmap/since/"));
  CHECK_FALSE(parse_since("/v1/inspect/cellmap/since/-1"));
  CHECK_FALSE(parse_since("/v1/inspect/cellmap/since/12a"));
  CHECK_FALSE(parse_since("/v1/inspect/cellmap/since/99999999999999999999999"));
  CHECK(parse_inspect_path("/v1/inspect/cellmap")->kind == inspect_kind::cell_map);
  CHECK(parse_inspect_path("/v1/inspect/cellmap/")->kind == inspect_kind::cell_map);
  CHECK_FALSE(parse_inspect_path("/v1/inspect/cellmap/since/x"));

  auto core = load();
  auto a = answer_inspect(core, "/v1/inspect/cellmap", nullptr, 5000);
  CHECK(a.status == 200);
  auto doc = json::parse(a.body);
  REQUIRE(doc);
  CHECK(doc->as_object().find("cells")->as_array().size() == 6); // 2 racks, 4 nodes
  CHECK(answer_inspect(core, "/v1/inspect/cellmap/since/x").status == 404);
}
