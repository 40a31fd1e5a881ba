// Physical buddy allocation for pods and gangs: scenarios on the reference's V100 cluster in
// the spirit of HiveD's algorithm suite, and a brute-force oracle on random small clusters.
#include "actors/scheduler/allocation_state.hpp"
#include "actors/scheduler/buddy_allocator.hpp"
#include "actors/scheduler/cell_tree.hpp"
#include "actors/scheduler/config.hpp"
#include "actors/scheduler/gang_placement.hpp"

#include "tests/unit/scheduler_fixtures.hpp"

#include <catch2/catch.hpp>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace kozmo::scheduler;
using Catch::Matchers::Contains;

namespace {

using test::v100_cluster;

std::unique_ptr<cell_tree> build_tree(const std::string& yaml) {
  auto cfg = parse_config(yaml);
  if (!cfg) FAIL("config rejected: " << cfg.err().message);
  auto tree = cell_tree::build(cfg->physical_cluster);
  if (!tree) FAIL("cell tree rejected: " << tree.err().message << "\n" << yaml);
  return std::make_unique<cell_tree>(std::move(*tree));
}

struct v100_fixture {
  std::unique_ptr<cell_tree> tree = build_tree(v100_cluster);
  allocation_state state{*tree};

  // One pod of `gpus` V100s as a group of one.
  pod_placement place(const std::string& group, int gpus) {
    auto placed = place_gang(state, {group, "V100", {{1, gpus}}});
    if (!placed) FAIL("pod '" << group << "' refused: " << placed.err().message);
    return placed->pods.at(0).at(0);
  }
  cell_id parent(cell_id id, int up = 1) const {
    for (; up > 0; --up) id = tree->at(id).parent;
    return id;
  }
};

std::vector<int> range(int from, int to) {
  std::vector<int> out;
  for (int i = from; i < to; ++i) out.push_back(i);
  return out;
}

} // namespace

TEST_CASE("a 1-GPU pod lands on the first node's GPU 0 and its buddy on GPU 1 of the same node",
          "[scheduler][alloc]") {
  v100_fixture f;
  auto first = f.place("a", 1);
  CHECK(first.node == "0.0.0.1");
  CHECK(first.leaf_indices == std::vector<int>{0});
  auto buddy = f.place("b", 1);
  CHECK(buddy.node == "0.0.0.1");
  CHECK(buddy.leaf_indices == std::vector<int>{1});
  CHECK_FALSE(buddy.relaxed);
}

TEST_CASE("a 2-GPU pod lands under one switch next to a 1-GPU pod, not across switches",
          "[scheduler][alloc]") {
  v100_fixture f;
  f.place("one", 1);
  auto pod = f.place("two", 2);
  CHECK(pod.node == "0.0.0.1");
  CHECK(pod.leaf_indices == std::vector<int>{2, 3});
  CHECK(f.parent(pod.leaves[0]) == f.parent(pod.leaves[1]));
  CHECK(f.tree->at(f.parent(pod.leaves[0])).type == "V100-SWITCH");
}

TEST_CASE("a 4-GPU pod takes one whole socket of a used node", "[scheduler][alloc]") {
  v100_fixture f;
  f.place("one", 1);
  auto pod = f.place("four", 4);
  CHECK(pod.node == "0.0.0.1");
  CHECK(pod.leaf_indices == std::vector<int>{4, 5, 6, 7});
  CHECK(f.tree->at(f.parent(pod.leaves[0], 2)).type == "V100-SOCKET");
  CHECK(f.parent(pod.leaves[0], 2) == f.parent(pod.leaves[3], 2));
}

TEST_CASE("an 8-GPU pod takes a whole free node and later small pods fill the used node first",
          "[scheduler][alloc]") {
  v100_fixture f;
  f.place("one", 1);
  auto big = f.place("eight", 8);
  CHECK(big.node == "0.0.0.2");
  CHECK(big.leaf_indices == range(0, 8));
  // The next 4-GPU pod splits the used node's free socket, keeping rack 2 whole.
  auto four = f.place("four", 4);
  CHECK(four.node == "0.0.0.1");
  CHECK(f.state.is_free(*f.tree->find("V100-RACK", "1")));
}

TEST_CASE("releasing pods merges buddies back so a later 8-GPU pod fits", "[scheduler][alloc]") {
  v100_fixture f;
  for (int i = 0; i < 8; ++i) CHECK(f.place("small-" + std::to_string(i), 1).node == "0.0.0.1");
  for (int i = 0; i < 3; ++i) f.place("big-" + std::to_string(i), 8);
  auto refused = place_gang(f.state, {"late", "V100", {{1, 8}}});
  REQUIRE_FALSE(refused);
  CHECK(refused.err().reason == "Unschedulable");

  for (int i = 0; i < 8; ++i) CHECK(release_gang(f.state, "small-" + std::to_string(i)) == 1);
  const cell_id node = f.tree->node_level_cells_of("0.0.0.1").at(0);
  CHECK(f.state.is_free(node));
  CHECK(f.state.free_cells("V100-RACK", 4) == std::vector<cell_id>{node});
  auto late = f.place("late", 8);
  CHECK(late.node == "0.0.0.1");
  CHECK(late.leaf_indices == range(0, 8));
}

TEST_CASE("a gang of 4 x 2 GPUs lands entirely on one node, one switch per pod",
          "[scheduler][alloc]") {
  v100_fixture f;
  auto gang = place_gang(f.state, {"gang", "V100", {{4, 2}}});
  REQUIRE(gang);
  REQUIRE(gang->pods.at(0).size() == 4);
  for (int i = 0; i < 4; ++i) {
    const auto& pod = gang->pods[0][i];
    CHECK(pod.node == "0.0.0.1");
    CHECK(pod.leaf_indices == std::vector<int>{2 * i, 2 * i + 1});
  }
  CHECK(f.state.leaves_of("gang").size() == 8);
  CHECK(release_gang(f.state, "gang") == 8);
  CHECK(f.state == allocation_state(*f.tree));
}

TEST_CASE("a gang that cannot fit holds nothing and the reason counts the free slots per node",
          "[scheduler][alloc]") {
  v100_fixture f;
  f.place("six-a", 4);  // 0.0.0.1 socket 0
  f.place("six-b", 2);  // 0.0.0.1 switch 2: one 2-GPU slot left there
  f.place("four", 4);   // 0.0.0.2 socket 0: two 2-GPU slots left there
  f.place("full-3", 8);
  f.place("full-4", 8);
  const allocation_state before = f.state;

  auto gang = place_gang(f.state, {"gang", "V100", {{4, 2}}});
  REQUIRE_FALSE(gang);
  CHECK(gang.err().reason == "Unschedulable");
  CHECK(gang.err().message ==
        "the gang 'gang' needs 4 × 2 GPUs of type V100 (each pod on one node); "
        "3 free 2-GPU slots exist (0.0.0.1: 1, 0.0.0.2: 2)");
  CHECK(f.state == before);
  CHECK_FALSE(f.state.holds("gang"));

  // Three pods do fit, and use up every free GPU of rack 1.
  auto smaller = place_gang(f.state, {"gang", "V100", {{3, 2}}});
  REQUIRE(smaller);
  CHECK(f.state.free_leaves(f.tree->top_cells().at(0)) == 0);
}

TEST_CASE("a pod larger than any node is refused with the size of the largest node",
          "[scheduler][alloc]") {
  v100_fixture f;
  auto gang = place_gang(f.state, {"huge", "V100", {{1, 16}}});
  REQUIRE_FALSE(gang);
  CHECK_THAT(gang.err().message, Contains("no node holds 16 GPUs of type V100 (the largest holds 8)"));
  CHECK(f.state == allocation_state(*f.tree));
}

TEST_CASE("malformed gang requests are refused as user errors", "[scheduler][alloc]") {
  v100_fixture f;
  auto refusal = [&](const gang_request& request) -> kozmo::error {
    auto placed = place_gang(f.state, request);
    if (placed) return {"<placed>", 0, "<placed>"};
    return placed.err();
  };
  CHECK(refusal({"g", "V100", {}}).reason == "BadRequest");
  CHECK(refusal({"g", "V100", {{0, 1}}}).reason == "BadRequest");
  CHECK(refusal({"g", "V100", {{1, -2}}}).reason == "BadRequest");
  CHECK(refusal({"", "V100", {{1, 1}}}).reason == "BadRequest");
  const auto unknown = refusal({"g", "K80", {{1, 1}}});
  CHECK(unknown.reason == "BadRequest");
  CHECK_THAT(unknown.message, Contains("'K80'"));
  CHECK(f.state == allocation_state(*f.tree));
  f.place("g", 1);
  CHECK(refusal({"g", "V100", {{1, 1}}}).reason == "Conflict");
}

TEST_CASE("a gang of mixed pod sizes places the big pod first and answers in request order",
          "[scheduler][alloc]") {
  v100_fixture f;
  auto gang = place_gang(f.state, {"mixed", "V100", {{2, 2}, {1, 4}}});
  REQUIRE(gang);
  REQUIRE(gang->pods.size() == 2);
  REQUIRE(gang->pods[0].size() == 2);
  REQUIRE(gang->pods[1].size() == 1);
  CHECK(gang->pods[1][0].leaf_indices == range(0, 4));
  CHECK(gang->pods[0][0].leaf_indices == std::vector<int>{4, 5});
  CHECK(gang->pods[0][1].leaf_indices == std::vector<int>{6, 7});
  for (const auto& member : gang->pods)
    for (const auto& pod : member) CHECK(pod.node == "0.0.0.1");
}

TEST_CASE("a gang of whole nodes fills one rack before the next", "[scheduler][alloc]") {
  v100_fixture f;
  auto gang = place_gang(f.state, {"nodes", "V100", {{3, 8}}});
  REQUIRE(gang);
  std::vector<std::string> nodes;
  for (const auto& pod : gang->pods[0]) nodes.push_back(pod.node);
  CHECK(nodes == std::vector<std::string>{"0.0.0.1", "0.0.0.2", "0.0.0.3"});
}

TEST_CASE("a gang's pod prefers a cell next to its gang over a fuller node elsewhere",
          "[scheduler][alloc]") {
  v100_fixture f;
  auto leaves_on = [&](const std::string& node, std::vector<int> gpus) {
    std::vector<cell_id> out;
    for (cell_id leaf : f.tree->leaf_cells_of(node))
      for (int gpu : gpus)
        if (f.tree->at(leaf).leaf_indices.at(0) == gpu) out.push_back(leaf);
    return out;
  };
  REQUIRE(f.state.take(leaves_on("0.0.0.1", {0}), "x"));
  REQUIRE(f.state.take(leaves_on("0.0.0.2", range(0, 8)), "y"));
  REQUIRE(f.state.take(leaves_on("0.0.0.3", range(0, 7)), "z"));
  REQUIRE(f.state.take(leaves_on("0.0.0.4", range(0, 8)), "w"));
  const allocation_state before = f.state;

  // Alone, a 1-GPU pod packs the fuller node 0.0.0.3.
  auto alone = choose_pod_leaves(f.state, 1, "V100");
  REQUIRE(alone);
  CHECK(f.tree->at(alone->node_cell).node == "0.0.0.3");

  // In a gang whose 2-GPU pod sits on 0.0.0.1, it joins that socket instead.
  auto gang = place_gang(f.state, {"gang", "V100", {{1, 1}, {1, 2}}});
  REQUIRE(gang);
  CHECK(gang->pods[1][0].node == "0.0.0.1");
  CHECK(gang->pods[1][0].leaf_indices == std::vector<int>{2, 3});
  CHECK(gang->pods[0][0].node == "0.0.0.1");
  CHECK(gang->pods[0][0].leaf_indices == std::vector<int>{1});
  release_gang(f.state, "gang");
  CHECK(f.state == before);
}

TEST_CASE("when no whole cell is free a pod takes scattered free GPUs on one node (relaxed)",
          "[scheduler][alloc]") {
  v100_fixture f;
  for (int i = 0; i < 8; ++i) f.place("small-" + std::to_string(i), 1);
  for (int i = 0; i < 3; ++i) f.place("big-" + std::to_string(i), 8);
  release_gang(f.state, "small-1");  // switch 0
  release_gang(f.state, "small-2");  // switch 1
  auto pod = f.place("two", 2);
  CHECK(pod.relaxed);
  CHECK(pod.node == "0.0.0.1");
  CHECK(pod.leaf_indices == std::vector<int>{1, 2});
}

// ---------------------------------------------------------------------------------------------
// Oracle: random small clusters, random place/release sequences, every invariant re-derived by
// brute force after every step.
namespace {

// One chain per leaf type: `below` levels between GPU and node (child counts 1..3), nodes of
// 1..3 top-level GPUs groups, optionally grouped into racks of 1..3 nodes.
std::string random_cluster(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::string types, cells;
  int node_number = 0;
  for (const std::string leaf : {"A", "B"}) {
    if (leaf == "B" && pick(0, 1) == 0) continue;
    std::string child = leaf;
    const int below = pick(0, 2);
    for (int level = 0; level < below; ++level) {
      const std::string name = leaf + "-L" + std::to_string(level);
      types += "    " + name + ": {childCellType: " + child +
               ", childCellNumber: " + std::to_string(pick(1, 3)) + "}\n";
      child = name;
    }
    const std::string node_type = leaf + "-NODE";
    types += "    " + node_type + ": {childCellType: " + child +
             ", childCellNumber: " + std::to_string(pick(1, 3)) + ", isNodeLevel: true}\n";
    const bool racks = pick(0, 1) == 1;
    const int rack_size = pick(1, 3);
    if (racks)
      types += "    " + leaf + "-RACK: {childCellType: " + node_type +
               ", childCellNumber: " + std::to_string(rack_size) + "}\n";
    const int tops = pick(1, 3);
    for (int t = 0; t < tops; ++t) {
      if (!racks) {
        cells += "  - {cellType: " + node_type + ", cellAddress: n" +
                 std::to_string(node_number++) + "}\n";
        continue;
      }
      cells += "  - cellType: " + leaf + "-RACK\n    cellChildren:\n";
      for (int n = 0; n < rack_size; ++n)
        cells += "    - {cellAddress: n" + std::to_string(node_number++) + "}\n";
    }
  }
  return "physicalCluster:\n  cellTypes:\n" + types + "  physicalCells:\n" + cells;
}

struct oracle {
  const cell_tree& tree;
  std::map<cell_id, std::string> used; // shadow: leaf -> group

  bool brute_free(cell_id id) const {
    const cell& c = tree.at(id);
    if (c.level == 1) return !used.count(id);
    for (cell_id child : c.children)
      if (!brute_free(child)) return false;
    return true;
  }
  int brute_free_leaves(cell_id id) const {
    const cell& c = tree.at(id);
    if (c.level == 1) return used.count(id) ? 0 : 1;
    int sum = 0;
    for (cell_id child : c.children) sum += brute_free_leaves(child);
    return sum;
  }
  cell_id node_of(cell_id id) const {
    while (id != no_cell && !tree.at(id).is_node_level) id = tree.at(id).parent;
    return id;
  }
  bool type_matches(cell_id id, const std::string& leaf_type) const {
    return leaf_type.empty() || tree.at(id).leaf_type == leaf_type;
  }
  // Some node-level cell of a matching chain has n free leaves.
  bool any_node_has(int n, const std::string& leaf_type) const {
    for (cell_id id = 0; id < tree.size(); ++id)
      if (tree.at(id).is_node_level && type_matches(id, leaf_type) && brute_free_leaves(id) >= n)
        return true;
    return false;
  }
  // Disjoint n-leaf slots over the node-level cells of matching chains.
  int slots(int n, const std::string& leaf_type) const {
    int total = 0;
    for (cell_id id = 0; id < tree.size(); ++id)
      if (tree.at(id).is_node_level && type_matches(id, leaf_type))
        total += brute_free_leaves(id) / n;
    return total;
  }
  // Smallest free cell at or below node level, of a matching chain, holding n leaves; 0 if none.
  int smallest_free_cell_holding(int n, const std::string& leaf_type) const {
    int best = 0;
    for (cell_id id = 0; id < tree.size(); ++id) {
      const cell& c = tree.at(id);
      if (node_of(id) == no_cell || !type_matches(id, leaf_type) || c.leaf_count < n) continue;
      if (!brute_free(id)) continue;
      if (best == 0 || c.leaf_count < best) best = c.leaf_count;
    }
    return best;
  }
  // Leaf count of the smallest cell holding all of `leaves`.
  int common_ancestor_size(const std::vector<cell_id>& leaves) const {
    for (cell_id up = leaves.at(0); up != no_cell; up = tree.at(up).parent) {
      bool all = true;
      for (cell_id leaf : leaves) {
        cell_id x = leaf;
        while (x != no_cell && x != up) x = tree.at(x).parent;
        all = all && x == up;
      }
      if (all) return tree.at(up).leaf_count;
    }
    return INT_MAX;
  }

  void check_state(const allocation_state& state) const {
    for (cell_id id = 0; id < tree.size(); ++id) {
      const cell& c = tree.at(id);
      REQUIRE(state.free_leaves(id) == brute_free_leaves(id));
      if (c.level == 1) {
        auto it = used.find(id);
        REQUIRE(state.user_of(id) == (it == used.end() ? std::string() : it->second));
      }
    }
    // Free lists hold exactly the maximal free cells.
    for (const std::string& chain : tree.chains()) {
      const int top = tree.type_info(chain)->level;
      for (int level = 1; level <= top; ++level) {
        std::set<cell_id> expected_cells;
        for (cell_id id = 0; id < tree.size(); ++id) {
          const cell& c = tree.at(id);
          if (c.chain != chain || c.level != level || !brute_free(id)) continue;
          if (c.parent == no_cell || !brute_free(c.parent)) expected_cells.insert(id);
        }
        const auto listed = state.free_cells(chain, level);
        REQUIRE(std::set<cell_id>(listed.begin(), listed.end()) == expected_cells);
      }
    }
  }
};

} // namespace

TEST_CASE("the allocator agrees with a brute-force oracle on random clusters and workloads",
          "[scheduler][alloc][oracle]") {
  int placed_pods = 0, refused_pods = 0, relaxed_pods = 0, gangs = 0;
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const std::string yaml = random_cluster(rng);
    INFO("seed " << seed << "\n" << yaml);
    auto tree = build_tree(yaml);
    allocation_state state(*tree);
    oracle brute{*tree, {}};
    int largest_node = 0;
    for (cell_id id = 0; id < tree->size(); ++id)
      if (tree->at(id).is_node_level) largest_node = std::max(largest_node, tree->at(id).leaf_count);
    const std::vector<std::string> types = {"", "A", tree->type_info("B") ? "B" : "A"};
    std::vector<std::string> groups;

    for (int step = 0; step < 60; ++step) {
      const int action = pick(0, 9);
      if (action < 3 && !groups.empty()) {
        const std::size_t victim = static_cast<std::size_t>(pick(0, int(groups.size()) - 1));
        const std::string group = groups[victim];
        groups.erase(groups.begin() + static_cast<std::ptrdiff_t>(victim));
        int held = 0;
        for (auto it = brute.used.begin(); it != brute.used.end();)
          if (it->second == group) { it = brute.used.erase(it); ++held; } else ++it;
        REQUIRE(release_gang(state, group) == held);
        // Release restores exactly: the state equals one rebuilt from the remaining leaves.
        allocation_state rebuilt(*tree);
        std::map<std::string, std::vector<cell_id>> by_group;
        for (const auto& [leaf, owner] : brute.used) by_group[owner].push_back(leaf);
        for (const auto& [owner, leaves] : by_group) REQUIRE(rebuilt.take(leaves, owner));
        REQUIRE(state == rebuilt);
        brute.check_state(state);
        continue;
      }

      gang_request request;
      request.group = "g" + std::to_string(step);
      request.leaf_type = types[static_cast<std::size_t>(pick(0, 2))];
      const bool single = action < 8;
      const int members = single ? 1 : pick(1, 3);
      for (int m = 0; m < members; ++m)
        request.members.push_back({single ? 1 : pick(1, 3), pick(1, largest_node + 1)});
      const int n = request.members[0].leaf_cell_number;
      const int smallest_free = brute.smallest_free_cell_holding(n, request.leaf_type);
      const bool fits_somewhere = brute.any_node_has(n, request.leaf_type);
      const allocation_state before = state;

      auto placed = place_gang(state, request);
      if (!placed) {
        REQUIRE(placed.err().reason == "Unschedulable");
        REQUIRE(state == before);
        if (single) {
          REQUIRE_FALSE(fits_somewhere);
          ++refused_pods;
        }
        // Each pod takes n leaves of one node-level cell, so a gang of one pod size fits iff
        // the node-level cells hold enough n-leaf slots; greedy placement is complete here.
        int pods = 0;
        bool one_size = true;
        for (const auto& m : request.members) {
          pods += m.pod_count;
          one_size = one_size && m.leaf_cell_number == n;
        }
        if (one_size) REQUIRE(brute.slots(n, request.leaf_type) < pods);
        continue;
      }
      if (!single) ++gangs;
      std::set<cell_id> gang_leaves;
      for (std::size_t m = 0; m < request.members.size(); ++m) {
        REQUIRE(placed->pods[m].size() == std::size_t(request.members[m].pod_count));
        for (const auto& pod : placed->pods[m]) {
          REQUIRE(pod.leaves.size() == std::size_t(request.members[m].leaf_cell_number));
          const cell_id node = brute.node_of(pod.leaves.at(0));
          for (std::size_t i = 0; i < pod.leaves.size(); ++i) {
            const cell_id leaf = pod.leaves[i];
            REQUIRE(tree->at(leaf).level == 1);
            REQUIRE(brute.node_of(leaf) == node);          // one node-level cell
            REQUIRE(tree->at(leaf).node == pod.node);
            REQUIRE(brute.type_matches(leaf, request.leaf_type));
            REQUIRE(!brute.used.count(leaf));              // was free before
            REQUIRE(gang_leaves.insert(leaf).second);       // never used twice
            REQUIRE(pod.leaf_indices[i] == tree->at(leaf).leaf_indices.at(0));
            if (i > 0) REQUIRE(state.tree_rank(pod.leaves[i - 1]) < state.tree_rank(leaf));
          }
          if (single) {
            // Buddy when some free cell holds the pod, inside a cell no bigger than the
            // smallest such; relaxed only when none exists.
            REQUIRE(pod.relaxed == (smallest_free == 0));
            if (!pod.relaxed) REQUIRE(brute.common_ancestor_size(pod.leaves) <= smallest_free);
            if (pod.relaxed) ++relaxed_pods;
            ++placed_pods;
          }
        }
      }
      // Placing then releasing restores the exact prior state.
      allocation_state undone = state;
      release_gang(undone, request.group);
      REQUIRE(undone == before);
      for (cell_id leaf : gang_leaves) brute.used[leaf] = request.group;
      groups.push_back(request.group);
      brute.check_state(state);
    }
  }
  // The random workloads exercise every path.
  CHECK(placed_pods > 1000);
  CHECK(refused_pods > 100);
  CHECK(relaxed_pods > 20);
  CHECK(gangs > 100);
}

// ---------------------------------------------------------------------------------------------
// HiveD's own design config: several chains, shuffled addresses, nodes shared by two chains.
namespace {

std::unique_ptr<cell_tree> design_tree() {
  const char* path = std::getenv("KOZMO_HIVED_DESIGN_CONFIG");
  if (!path) FAIL("KOZMO_HIVED_DESIGN_CONFIG is not set; run through `meson test`");
  std::ifstream in(path);
  if (!in) FAIL("HiveD design config not found at " << path);
  std::stringstream text;
  text << in.rdbuf();
  return build_tree(text.str());
}

} // namespace

TEST_CASE("on HiveD's design config buddies follow the tree, not the GPU numbers",
          "[scheduler][alloc]") {
  auto tree = design_tree();
  allocation_state state(*tree);
  // 3-DGX1-P100-NODE lists 1.0.0.2, 1.0.0.1, 1.0.0.0; fill the first two.
  auto full = place_gang(state, {"full", "DGX1-P100", {{2, 8}}});
  REQUIRE(full);
  CHECK(full->pods[0][0].node == "1.0.0.2");
  CHECK(full->pods[0][1].node == "1.0.0.1");
  // Node 1.0.0.0 lists socket 1 / switch 1 (GPUs 1 and 3) first.
  auto pair = place_gang(state, {"pair", "DGX1-P100", {{1, 2}}});
  REQUIRE(pair);
  CHECK(pair->pods[0][0].node == "1.0.0.0");
  CHECK(pair->pods[0][0].leaf_indices == std::vector<int>{1, 3});
}

TEST_CASE("a pod of any leaf type takes the smallest free cell of any chain",
          "[scheduler][alloc]") {
  auto tree = design_tree();
  allocation_state state(*tree);
  // CT1 nodes hold exactly two GPUs: a 2-GPU pod of any type takes a whole one rather than
  // splitting an 8- or 16-GPU node.
  auto pair = place_gang(state, {"pair", "", {{1, 2}}});
  REQUIRE(pair);
  CHECK(pair->pods[0][0].leaf_type == "CT1");
  CHECK(pair->pods[0][0].node == "0.0.0.0");
}

TEST_CASE("a mixed group of 7 and 5 GPUs of any type packs into one 16-GPU node, one half each",
          "[scheduler][alloc]") {
  auto tree = design_tree();
  allocation_state state(*tree);
  auto gang = place_gang(state, {"mixed", "", {{1, 7}, {1, 5}}});
  REQUIRE(gang);
  const auto& seven = gang->pods[0][0];
  const auto& five = gang->pods[1][0];
  CHECK(seven.leaf_indices.size() == 7);
  CHECK(five.leaf_indices.size() == 5);
  // An 8-GPU cell is the smallest holding either pod; the 5-GPU pod joins the 7-GPU one.
  CHECK(seven.node == five.node);
  CHECK(seven.leaf_type == five.leaf_type);
  auto eight_gpu_cell = [&](cell_id leaf) {
    return tree->at(tree->at(tree->at(leaf).parent).parent).parent;
  };
  CHECK(tree->at(eight_gpu_cell(seven.leaves[0])).leaf_count == 8);
  CHECK(eight_gpu_cell(seven.leaves[0]) == eight_gpu_cell(seven.leaves[6]));
  CHECK(eight_gpu_cell(five.leaves[0]) == eight_gpu_cell(five.leaves[4]));
  CHECK(eight_gpu_cell(seven.leaves[0]) != eight_gpu_cell(five.leaves[0]));
  CHECK(state.leaves_of("mixed").size() == 12);
}

TEST_CASE("the first free cell holding an unused healthy cell matches a full scan on random clusters",
          "[scheduler][alloc][spare]") {
  int hits = 0, misses = 0;
  for (std::uint32_t seed = 1; seed <= 100; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const std::string yaml = random_cluster(rng);
    INFO("seed " << seed << "\n" << yaml);
    auto tree = build_tree(yaml);
    allocation_state state(*tree);
    std::vector<cell_id> leaves;
    for (cell_id id = 0; id < tree->size(); ++id)
      if (tree->at(id).children.empty()) leaves.push_back(id);
    // Leaves in use by pods (what cluster_state feeds the spare marks from) and leaves bound.
    std::set<cell_id> used;
    auto used_under = [&](cell_id id) {
      int n = 0;
      for (cell_id leaf : used)
        for (cell_id up = leaf; up != no_cell; up = tree->at(up).parent)
          if (up == id) ++n;
      return n;
    };
    int next_group = 0;
    std::vector<std::string> groups;
    for (int step = 0; step < 40; ++step) {
      const cell_id leaf = leaves[static_cast<std::size_t>(pick(0, int(leaves.size()) - 1))];
      switch (pick(0, 2)) {
      case 0: // a pod starts or stops using a GPU
        if (!used.insert(leaf).second) used.erase(leaf);
        state.set_spare_path(leaf, [&](cell_id id) { return used_under(id) == 0; });
        break;
      case 1: // a virtual cell binds a free GPU
        if (state.is_free(leaf)) {
          groups.push_back("vc/" + std::to_string(next_group++));
          REQUIRE(state.take({leaf}, groups.back()));
        }
        break;
      default:
        if (!groups.empty()) {
          state.release(groups.back());
          groups.pop_back();
        }
      }
      for (const auto& chain : tree->chains())
        for (int level = 1; level <= 6; ++level)
          for (int inner = 1; inner <= level; ++inner) {
            cell_id expected = no_cell;
            for (cell_id holder : state.free_cells(chain, level)) {
              std::vector<cell_id> stack{holder};
              bool found = false;
              while (!stack.empty() && !found) {
                const cell_id id = stack.back();
                stack.pop_back();
                if (tree->at(id).level == inner) found = used_under(id) == 0;
                else if (tree->at(id).level > inner)
                  stack.insert(stack.end(), tree->at(id).children.begin(), tree->at(id).children.end());
              }
              if (found) {
                expected = holder;
                break;
              }
            }
            const cell_id got = state.first_free_holding_spare(chain, level, inner);
            INFO("chain " << chain << " level " << level << " inner level " << inner);
            REQUIRE(got == expected);
            if (got == no_cell) {
              ++misses;
              continue;
            }
            ++hits;
            const cell_id spare = state.first_spare_under(got, inner);
            CHECK(tree->at(spare).level == inner);
            CHECK(used_under(spare) == 0);
          }
    }
  }
  // Both outcomes were exercised.
  CHECK(hits > 100);
  CHECK(misses > 100);
}
