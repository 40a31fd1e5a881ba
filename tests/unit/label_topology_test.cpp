// Cells from node labels (actors/scheduler/label_topology.hpp): what the derived physical
// cluster holds, checked through the cell tree the scheduler builds from it, against a
// brute-force oracle on random clusters, and the bad inputs the levels refuse.
#include "actors/scheduler/config.hpp"
#include "actors/scheduler/label_topology.hpp"
#include "actors/scheduler/virtual_clusters.hpp"
#include "runtime/hived_shape.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <random>
#include <set>

using namespace kozmo;
using namespace kozmo::scheduler;
using Catch::Matchers::Contains;

namespace {

const std::string zone = "topology.kubernetes.io/zone";
const std::string rack = "kozmo.io/rack";
const std::string clique = "nvidia.com/gpu.clique";

labelled_node node(std::string name, int gpus, std::map<std::string, std::string> labels, std::string type = "A100") {
  return {std::move(name), gpus, std::move(type), std::move(labels)};
}

cluster_model load(const std::string& config_text, const std::vector<labelled_node>& nodes) {
  auto text = config_from_labels(config_text, nodes);
  REQUIRE(text.has_value());
  auto model = load_cluster_model(*text);
  INFO(*text);
  REQUIRE(model.has_value());
  return std::move(*model);
}

// The cells from a node's node-level cell up to its top, node level first.
std::vector<const cell*> ancestors(const cell_tree& tree, const std::string& node_name) {
  auto cells = tree.node_level_cells_of(node_name);
  REQUIRE(cells.size() == 1);
  std::vector<const cell*> out;
  for (cell_id id = cells[0]; id != no_cell; id = tree.at(id).parent)
    out.push_back(&tree.at(id));
  return out;
}

std::string upper_case(std::string s) {
  for (auto& ch : s)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

std::string last_segment(const std::string& address) { return address.substr(address.rfind('/') + 1); }

std::vector<std::string> top_addresses(const cell_tree& tree) {
  std::vector<std::string> out;
  for (auto id : tree.top_cells())
    out.push_back(tree.at(id).type + " " + tree.at(id).address);
  return out;
}

} // namespace

TEST_CASE("nodes labelled with zones and racks become zone and rack cells named by level and shape",
          "[scheduler][labels]") {
  auto model = load("", {node("n1", 8, {{zone, "z1"}, {rack, "r1"}}), node("n2", 8, {{zone, "z1"}, {rack, "r1"}}),
                         node("n3", 8, {{zone, "z1"}, {rack, "r2"}}), node("n4", 8, {{zone, "z1"}, {rack, "r2"}})});
  CHECK(top_addresses(model.tree) == std::vector<std::string>{"ZONE-2x2x8-A100 z1"});
  auto up = ancestors(model.tree, "n3");
  REQUIRE(up.size() == 3);
  CHECK(up[0]->type == "NODE-8-A100");
  CHECK(up[1]->type == "RACK-2x8-A100");
  CHECK(up[1]->address == "z1/r2");
  CHECK(up[2]->address == "z1");
  // The clique level below the node holds the node's 8 GPUs (no clique label: `_unlabelled`).
  auto leaves = model.tree.leaf_cells_of("n3");
  REQUIRE(leaves.size() == 8);
  CHECK(model.tree.at(model.tree.at(leaves[0]).parent).type == "CLIQUE-8-A100");
  CHECK(model.tree.at(leaves[7]).address == "n3/_unlabelled/7");
  // The default VC owns the whole cluster.
  REQUIRE(model.vcs.size() == 1);
  CHECK(model.vcs[0].cells.at(0).qualified_type == "ZONE-2x2x8-A100");
}

TEST_CASE("a node without the rack label lands in its zone's _unlabelled cell", "[scheduler][labels]") {
  auto model = load("", {node("a", 4, {{zone, "z1"}, {rack, "r1"}}), node("b", 4, {{zone, "z1"}}),
                         node("c", 4, {{zone, "z1"}, {rack, "not/valid"}})});
  CHECK(ancestors(model.tree, "b")[1]->address == "z1/_unlabelled");
  CHECK(ancestors(model.tree, "c")[1]->address == "z1/_unlabelled"); // not a label value: unlabelled
  CHECK(ancestors(model.tree, "a")[1]->address == "z1/r1");
  CHECK(ancestors(model.tree, "b")[1]->type == "RACK-2x4-A100");
}

TEST_CASE("racks of different sizes in one zone become one zone cell per rack shape", "[scheduler][labels]") {
  auto model = load("", {node("a", 8, {{zone, "z"}, {rack, "big"}}), node("b", 8, {{zone, "z"}, {rack, "big"}}),
                         node("c", 8, {{zone, "z"}, {rack, "small"}}), node("d", 4, {{zone, "z"}, {rack, "small"}}, "T4")});
  CHECK(top_addresses(model.tree) ==
        std::vector<std::string>{"ZONE-1x1x4-T4 z", "ZONE-1x1x8-A100 z", "ZONE-1x2x8-A100 z"});
  CHECK(ancestors(model.tree, "c")[1]->type == "RACK-1x8-A100");
  CHECK(ancestors(model.tree, "d")[1]->type == "RACK-1x4-T4");
  CHECK(model.tree.leaf_cells_of("d").size() == 4);
}

TEST_CASE("a clique listed above the node groups the nodes of one NVLink domain", "[scheduler][labels]") {
  const std::string config = "topologyFromLabels:\n  levels:\n  - {name: clique, label: nvidia.com/gpu.clique}\n"
                             "  - {name: node}\n";
  auto model = load(config, {node("t1", 4, {{clique, "uuid1.0"}}, "GB200"), node("t2", 4, {{clique, "uuid1.0"}}, "GB200"),
                             node("t3", 4, {{clique, "uuid2.0"}}, "GB200")});
  CHECK(top_addresses(model.tree) ==
        std::vector<std::string>{"CLIQUE-1x4-GB200 uuid2.0", "CLIQUE-2x4-GB200 uuid1.0"});
  CHECK(ancestors(model.tree, "t2")[1]->address == "uuid1.0");
  CHECK(model.tree.leaf_cells_of("t2").size() == 4);
}

TEST_CASE("a quota names the level's type and is qualified with the one chain holding it", "[scheduler][labels]") {
  const std::string config = "topologyFromLabels:\n  levels: [{name: rack, label: kozmo.io/rack}, {name: node}]\n"
                             "virtualClusters:\n  a: {virtualCells: [{cellType: NODE-8-A100, cellNumber: 1}]}\n"
                             "  b: {virtualCells: [{cellType: RACK-2x8-A100, cellNumber: 1}]}\n";
  auto text = config_from_labels(config, {node("n1", 8, {{rack, "r1"}}), node("n2", 8, {{rack, "r1"}}),
                                          node("n3", 8, {{rack, "r2"}})});
  REQUIRE(text.has_value());
  CHECK_THAT(*text, Contains("cellType: NODE-8-A100")); // in two chains: left as written
  auto model = load_cluster_model(*text);
  INFO(*text);
  // NODE-8-A100 lies in two chains (racks of 1 and of 2 nodes): left as written, the loader says so.
  REQUIRE_FALSE(model.has_value());
  CHECK_THAT(model.err().message, Contains("NODE-8-A100"));
  auto one_chain = config_from_labels(config, {node("n1", 8, {{rack, "r1"}}), node("n2", 8, {{rack, "r1"}}),
                                               node("n3", 8, {{rack, "r2"}}), node("n4", 8, {{rack, "r2"}})});
  REQUIRE(one_chain.has_value());
  CHECK_THAT(*one_chain, Contains("RACK-2x8-A100.NODE-8-A100"));
  auto loaded = load_cluster_model(*one_chain);
  INFO(*one_chain);
  REQUIRE(loaded.has_value());
  CHECK(loaded->vcs.size() == 2);
}

TEST_CASE("the same nodes in any order, with heartbeats' unrelated labels, give the same text", "[scheduler][labels]") {
  std::vector<labelled_node> nodes{node("b", 8, {{rack, "r2"}}), node("a", 8, {{rack, "r1"}, {"other", "x"}}),
                                   node("c", 4, {{rack, "r1"}}, "T4"), node("cpu", 0, {{rack, "r1"}})};
  auto first = config_from_labels("", nodes);
  std::reverse(nodes.begin(), nodes.end());
  nodes[2].labels["other"] = "y";
  auto second = config_from_labels("", nodes);
  REQUIRE(first.has_value());
  CHECK(*first == *second);
  CHECK_THAT(*first, !Contains("cpu")); // a node without GPUs takes no part
}

TEST_CASE("no GPU node gives an empty cluster that loads", "[scheduler][labels]") {
  auto text = config_from_labels("", {node("cpu", 0, {{rack, "r"}})});
  REQUIRE(text.has_value());
  auto model = load_cluster_model(*text);
  REQUIRE(model.has_value());
  CHECK(model->tree.size() == 0);
}

// The oracle: on random small clusters with random labels (some missing), every GPU node
// appears once with all its GPUs, each ancestor's address is the node's label value for its
// level (or _unlabelled) and its type names that level, and the GPUs add up.
TEST_CASE("on random clusters every node lies under cells of its own label values", "[scheduler][labels][oracle]") {
  std::mt19937 rng(43);
  const std::vector<std::vector<topology_level>> level_sets{
      default_levels(),
      {{"clique", clique}, {"node", ""}},
      {{"zone", zone}, {"clique", clique}, {"rack", rack}, {"node", ""}},
      {{"node", ""}, {"rack", rack}, {"clique", clique}},
  };
  for (int round = 0; round < 300; ++round) {
    const auto& levels = level_sets[round % level_sets.size()];
    std::vector<labelled_node> nodes;
    const int count = 1 + static_cast<int>(rng() % 12);
    int gpus = 0;
    for (int i = 0; i < count; ++i) {
      labelled_node n;
      n.name = "n" + std::to_string(rng() % 20);
      n.gpus = static_cast<int>(rng() % 5) * 2; // 0 = no GPUs
      n.gpu_type = rng() % 4 == 0 ? "T4" : "A100";
      for (const auto& key : {zone, rack, clique})
        if (rng() % 4 != 0)
          n.labels[key] = std::string(1, static_cast<char>('a' + rng() % 3));
      if (std::none_of(nodes.begin(), nodes.end(), [&](const auto& m) { return m.name == n.name; }))
        gpus += n.gpus;
      nodes.push_back(n);
    }
    std::string config = "topologyFromLabels:\n  levels:\n";
    for (const auto& l : levels)
      config += "  - {name: " + l.name + (l.label.empty() ? "" : ", label: " + l.label) + "}\n";
    auto text = config_from_labels(config, nodes);
    REQUIRE(text.has_value());
    auto model = load_cluster_model(*text);
    INFO("round " << round << "\n" << *text);
    REQUIRE(model.has_value());
    std::size_t node_level = 0;
    while (levels[node_level].name != "node")
      ++node_level;
    int leaves = 0;
    std::set<std::string> seen;
    for (const auto& n : nodes) {
      if (!seen.insert(n.name).second)
        continue; // a name given twice: the first one counts
      if (n.gpus == 0) {
        CHECK(model->tree.node_level_cells_of(n.name).empty());
        continue;
      }
      auto up = ancestors(model->tree, n.name); // exactly one node-level cell
      REQUIRE(up.size() == node_level + 1);
      for (std::size_t k = 1; k < up.size(); ++k) {
        const auto& level = levels[node_level - k];
        auto it = n.labels.find(level.label);
        CHECK(last_segment(up[k]->address) == (it == n.labels.end() ? "_unlabelled" : it->second));
        CHECK(up[k]->type.rfind(upper_case(level.name) + "-", 0) == 0);
      }
      auto mine = model->tree.leaf_cells_of(n.name);
      CHECK(static_cast<int>(mine.size()) == n.gpus);
      for (auto leaf : mine)
        CHECK(model->tree.at(leaf).leaf_type == n.gpu_type);
      // Below the node: one cell per level, each with one child but the last (the GPUs).
      const cell* c = up[0];
      for (std::size_t l = node_level + 1; l < levels.size(); ++l) {
        REQUIRE(c->children.size() == 1);
        c = &model->tree.at(c->children[0]);
        CHECK(c->type.rfind(upper_case(levels[l].name) + "-", 0) == 0);
        auto it = n.labels.find(levels[l].label);
        CHECK(last_segment(c->address) == (it == n.labels.end() ? "_unlabelled" : it->second));
      }
      CHECK(static_cast<int>(c->children.size()) == n.gpus);
    }
    for (auto top : model->tree.top_cells())
      leaves += model->tree.at(top).leaf_count;
    CHECK(leaves == gpus);
  }
}

TEST_CASE("levels that break a rule are refused, naming the level and the rule", "[scheduler][labels][bad-input]") {
  auto refused = [](std::vector<topology_level> levels) {
    auto st = check_levels(levels);
    REQUIRE_FALSE(st.has_value());
    return st.err().message;
  };
  std::vector<topology_level> nine(8, {"x", "a/b"});
  for (std::size_t i = 0; i < nine.size(); ++i)
    nine[i] = {"l" + std::to_string(i), "kozmo.io/l" + std::to_string(i)};
  nine.push_back({"node", ""});
  CHECK_THAT(refused(nine), Contains("1 to 8 levels, got 9"));
  CHECK_THAT(refused({}), Contains("1 to 8 levels, got 0"));
  CHECK_THAT(refused({{"rack", rack}}), Contains("exactly one node level"));
  CHECK_THAT(refused({{"node", ""}, {"node", ""}}), Contains("levels[1].name 'node' is used by another level"));
  CHECK_THAT(refused({{"rack", ""}, {"node", ""}}), Contains("levels[0] 'rack' has no label"));
  CHECK_THAT(refused({{"node", rack}}), Contains("takes no label"));
  CHECK_THAT(refused({{"Rack", rack}, {"rack", zone}, {"node", ""}}), Contains("levels[1].name 'rack' is used"));
  CHECK_THAT(refused({{"rack", rack}, {"row", rack}, {"node", ""}}), Contains("levels[1].label 'kozmo.io/rack' is used"));
  CHECK_THAT(refused({{"rack", "Kozmo.IO/rack"}, {"node", ""}}), Contains("'Kozmo.IO/rack' is not a valid label key"));
  CHECK_THAT(refused({{"rack", "kozmo.io/"}, {"node", ""}}), Contains("not a valid label key"));
  CHECK_THAT(refused({{"rack", "a/b/c"}, {"node", ""}}), Contains("not a valid label key"));
  CHECK_THAT(refused({{"rack", std::string(64, 'r')}, {"node", ""}}), Contains("not a valid label key"));
  CHECK_THAT(refused({{"my rack", rack}, {"node", ""}}), Contains("levels[0].name 'my rack' must be 1-32"));
  CHECK_THAT(refused({{"r.a", rack}, {"node", ""}}), Contains("must be 1-32"));
  CHECK(check_levels(default_levels()).has_value());
}

TEST_CASE("a topologyFromLabels that is malformed is refused with its key path", "[scheduler][labels][bad-input]") {
  auto refused = [](const std::string& yaml) {
    auto cfg = parse_config(yaml);
    REQUIRE_FALSE(cfg.has_value());
    return cfg.err().message;
  };
  CHECK_THAT(refused("topologyFromLabels: {levels: [{name: node, lable: x}]}"),
             Contains("unknown key 'topologyFromLabels.levels[0].lable'"));
  CHECK_THAT(refused("topologyFromLabels: {level: []}"), Contains("unknown key 'topologyFromLabels.level'"));
  CHECK_THAT(refused("topologyFromLabels:\n"), Contains("topologyFromLabels must be a mapping"));
  CHECK_THAT(refused("topologyFromLabels: {levels: node}"), Contains("topologyFromLabels.levels must be a list"));
  CHECK_THAT(refused("topologyFromLabels: {levels: [node]}"), Contains("topologyFromLabels.levels[0] must be a mapping"));
  CHECK_THAT(refused("topologyFromLabels: {levels: [{name: [a]}]}"), Contains("topologyFromLabels.levels[0].name must be a scalar"));
  CHECK_THAT(refused("topologyFromLabels: {levels: [{name: rack}]}"), Contains("has no label"));
  CHECK_THAT(refused("topologyFromLabels: {levels: [{name: node}]}\nphysicalCluster: {cellTypes: {}}\n"),
             Contains("give one"));
  auto fine = parse_config("topologyFromLabels: {levels: [{name: rack, label: kozmo.io/rack}, {name: node}]}\n");
  REQUIRE(fine.has_value());
  CHECK(fine->has_topology_from_labels);
  CHECK(fine->topology_from_labels.size() == 2);
  CHECK(fine->topology_from_labels[0].label == "kozmo.io/rack");
  // config_from_labels refuses a configuration without the key (nothing to derive from).
  CHECK_FALSE(config_from_labels("virtualClusters: {}\n", {}).has_value());
}

// ---- runtime: what the scheduler follows -----------------------------------------------------

namespace {

k8s::node k8s_node(const std::string& name, int gpus, std::map<std::string, std::string> labels) {
  k8s::node n;
  n.metadata.name = name;
  n.metadata.labels = std::move(labels);
  n.status.allocatable["nvidia.com/gpu"] = k8s::quantity::from_int(gpus);
  return n;
}

} // namespace

TEST_CASE("a node's signature changes with a label the levels read, not with any other label",
          "[scheduler][labels][following]") {
  const auto levels = default_levels();
  auto before = runtime::topology_signature(k8s_node("n", 8, {{rack, "r1"}, {"team", "x"}}), levels);
  CHECK(before == runtime::topology_signature(k8s_node("n", 8, {{rack, "r1"}, {"team", "y"}}), levels));
  CHECK(before != runtime::topology_signature(k8s_node("n", 8, {{rack, "r2"}, {"team", "x"}}), levels));
  CHECK(before != runtime::topology_signature(k8s_node("n", 8, {{"team", "x"}}), levels));
  CHECK(before != runtime::topology_signature(k8s_node("n", 4, {{rack, "r1"}, {"team", "x"}}), levels));
  CHECK(runtime::topology_signature(k8s_node("n", 0, {{rack, "r1"}}), levels).empty());
}

TEST_CASE("with no configuration, nodes without topology labels keep today's derivation",
          "[scheduler][labels][following]") {
  std::vector<k8s::node> plain{k8s_node("a", 8, {}), k8s_node("b", 8, {{"team", "x"}})};
  CHECK(runtime::derived_config_of(plain) == runtime::hived_config_from_shape(runtime::shape_from_nodes(plain)));
  auto labelled = plain;
  labelled[1].metadata.labels[rack] = "r1";
  auto text = runtime::derived_config_of(labelled);
  CHECK_THAT(text, Contains("topologyFromLabels") && Contains("RACK-1x8-gpu"));
  auto model = load_cluster_model(text);
  REQUIRE(model.has_value());
  CHECK(ancestors(model->tree, "a")[1]->address == "_unlabelled/_unlabelled");
  CHECK(ancestors(model->tree, "b")[1]->address == "_unlabelled/r1");
}
