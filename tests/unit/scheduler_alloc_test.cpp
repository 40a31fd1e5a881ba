// Physical buddy allocation through the production path (scheduler_core and its
// leaf_chooser, in physical mode) against a brute-force oracle on random small clusters, and
// the buddy free lists of allocation_state (which binds virtual cells) checked on the way.
// Scenarios of single placements live in scheduler_scenarios/ (buddy_*, gang_*, design_*).
#include "actors/scheduler/allocation_state.hpp"
#include "actors/scheduler/cell_tree.hpp"
#include "actors/scheduler/cluster_state.hpp"
#include "actors/scheduler/leaf_chooser.hpp"
#include "actors/scheduler/config.hpp"
#include "actors/scheduler/scheduler_core.hpp"
#include "actors/scheduler/virtual_clusters.hpp"

#include <catch2/catch.hpp>

#include <climits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace kozmo::scheduler;

namespace {

std::unique_ptr<cell_tree> build_tree(const std::string& yaml) {
  auto cfg = parse_config(yaml);
  if (!cfg) FAIL("config rejected: " << cfg.err().message);
  auto tree = cell_tree::build(cfg->physical_cluster);
  if (!tree) FAIL("cell tree rejected: " << tree.err().message << "\n" << yaml);
  return std::make_unique<cell_tree>(std::move(*tree));
}

} // namespace

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

namespace {

// A pod of `gpus` GPUs of `type` ("" = any) in group `group`, for the core.
pod_view pod_of(const std::string& group, int index, const std::string& type, int gpus,
                const std::vector<affinity_member>& members) {
  pod_view p;
  p.ref = {"ns", group + "-" + std::to_string(index), group + "-" + std::to_string(index)};
  p.spec.virtual_cluster = "any"; // physical mode: any name
  p.spec.leaf_cell_type = type;
  p.spec.leaf_cell_number = gpus;
  p.spec.affinity_group = group;
  p.spec.members = members;
  return p;
}

// The leaf cells a bind decision names (GPU indices of a node).
std::vector<cell_id> leaves_of(const cell_tree& tree, const pod_decision& d) {
  std::vector<cell_id> out;
  for (int index : d.leaf_indices)
    for (cell_id leaf : tree.leaf_cells_of(d.node))
      if (tree.at(leaf).leaf_indices.at(0) == index && tree.at(leaf).leaf_type == d.leaf_type) out.push_back(leaf);
  return out;
}

} // namespace

TEST_CASE("the scheduler core agrees with a brute-force oracle on random clusters and workloads",
          "[scheduler][alloc][oracle]") {
  int placed_pods = 0, refused_pods = 0, gangs = 0;
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const std::string yaml = random_cluster(rng);
    INFO("seed " << seed << "\n" << yaml);
    auto tree = build_tree(yaml);
    auto loaded = scheduler_core::load(yaml);
    REQUIRE(loaded);
    scheduler_core core = std::move(*loaded);
    allocation_state shadow(*tree); // the buddy free lists, fed the same leaves
    oracle brute{*tree, {}};
    int largest_node = 0;
    for (cell_id id = 0; id < tree->size(); ++id)
      if (tree->at(id).is_node_level) largest_node = std::max(largest_node, tree->at(id).leaf_count);
    const std::vector<std::string> types = {"", "A", tree->type_info("B") ? "B" : "A"};
    std::map<std::string, std::vector<std::string>> groups; // group -> pod uids

    for (int step = 0; step < 60; ++step) {
      const int action = pick(0, 9);
      if (action < 3 && !groups.empty()) {
        auto victim = std::next(groups.begin(), pick(0, int(groups.size()) - 1));
        const std::string group = victim->first;
        for (std::size_t i = 0; i < victim->second.size(); ++i) {
          auto removed = core.remove_pod(victim->second[i]);
          REQUIRE(removed.group == group);
          REQUIRE(removed.group_released == (i + 1 == victim->second.size()));
        }
        groups.erase(victim);
        for (auto it = brute.used.begin(); it != brute.used.end();)
          if (it->second == group) it = brute.used.erase(it); else ++it;
        shadow.release(group);
        brute.check_state(shadow);
        continue;
      }
      const std::string group = "g" + std::to_string(step);
      const std::string type = types[static_cast<std::size_t>(pick(0, 2))];
      const bool single = action < 8;
      std::vector<affinity_member> members;
      for (int m = 0, count = single ? 1 : pick(1, 3); m < count; ++m) {
        int gpus = pick(1, largest_node + 1);
        bool dup = false;
        for (const auto& x : members) dup = dup || x.leaf_cell_number == gpus;
        if (!dup) members.push_back({single ? 1 : pick(1, 3), gpus});
      }
      const int n = members[0].leaf_cell_number;
      INFO("step " << step << ": group " << group << " of type '" << type << "', first member " << members[0].pod_number
                   << " x " << n << " GPUs");
      const int smallest_free = brute.smallest_free_cell_holding(n, type);
      const bool fits_somewhere = brute.any_node_has(n, type);
      std::vector<std::string> uids;
      int index = 0;
      for (const auto& m : members)
        for (int k = 0; k < m.pod_number; ++k) {
          auto p = pod_of(group, index++, type, m.leaf_cell_number, members);
          REQUIRE(core.add_pod(p));
          uids.push_back(p.ref.uid);
        }
      auto decisions = core.schedule(step * 1000);
      std::size_t binds = 0;
      for (const auto& d : decisions) {
        REQUIRE(d.group == group); // nobody else was waiting
        REQUIRE(d.kind != decision_kind::preempt);
        binds += d.kind == decision_kind::bind ? 1 : 0;
      }
      if (binds == 0) {
        // All or nothing: the group waits and holds no GPU; the core gives it up with us.
        for (const auto& uid : uids) core.remove_pod(uid);
        if (single) {
          REQUIRE_FALSE(fits_somewhere);
          ++refused_pods;
        }
        // Each pod takes n leaves of one node-level cell, so a gang of one pod size fits iff
        // the node-level cells hold enough n-leaf slots.
        int pods = 0;
        bool one_size = true;
        for (const auto& m : members) {
          pods += m.pod_number;
          one_size = one_size && m.leaf_cell_number == n;
        }
        if (one_size) REQUIRE(brute.slots(n, type) < pods);
      } else {
        REQUIRE(binds == uids.size()); // the whole gang at once
        if (!single) ++gangs;
        std::set<cell_id> gang_leaves;
        for (const auto& d : decisions) {
          const auto pod_leaves = leaves_of(*tree, d);
          INFO("placed on " << d.node << " (" << d.leaf_type << ")");
          REQUIRE(pod_leaves.size() == d.leaf_indices.size());
          const cell_id node = brute.node_of(pod_leaves.at(0));
          for (cell_id leaf : pod_leaves) {
            REQUIRE(brute.node_of(leaf) == node);        // one node-level cell
            REQUIRE(brute.type_matches(leaf, type));
            REQUIRE(!brute.used.count(leaf));            // was free before
            REQUIRE(gang_leaves.insert(leaf).second);     // never used twice
          }
          if (single) {
            // Buddy: inside a cell no bigger than the smallest free cell that holds the pod,
            // when one exists.
            if (smallest_free > 0) REQUIRE(brute.common_ancestor_size(pod_leaves) <= smallest_free);
            ++placed_pods;
          }
        }
        for (cell_id leaf : gang_leaves) brute.used[leaf] = group;
        REQUIRE(shadow.take(std::vector<cell_id>(gang_leaves.begin(), gang_leaves.end()), group));
        groups[group] = uids;
        brute.check_state(shadow);
      }
      // What the core says is used per node is what the oracle holds.
      const kozmo::json::value physical = core.inspect_physical_cluster(); // kept: the loop reads into it
      for (const auto& node : physical.as_array()) {
        int used = 0;
        for (const auto& [leaf, owner] : brute.used) used += tree->at(leaf).node == node.get_string("node") ? 1 : 0;
        REQUIRE(node.get_int("usedLeafCells") == used);
      }
    }
  }
  // The random workloads exercise every path.
  CHECK(placed_pods > 1000);
  CHECK(refused_pods > 100);
  CHECK(gangs > 100);
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

// ---------------------------------------------------------------------------------------------
// The preemption search through the victim index against the survey of every GPU, at the leaf
// chooser: random clusters with GPUs held at random priorities, reserved, bad, or held by a
// group the pass may not touch whatever its priority; random roots, gang GPUs already taken
// and pod sizes. The same cell, GPUs and preemption count, or both find nothing.
TEST_CASE("the preemption search through the victim index picks what the full survey picks",
          "[scheduler][alloc][victims]") {
  int picked = 0, preempting = 0, relaxed = 0, none = 0;
  for (std::uint32_t seed = 1; seed <= 5000; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const std::string yaml = random_cluster(rng);
    INFO("seed " << seed << "\n" << yaml);
    auto model = load_cluster_model(yaml);
    REQUIRE(model);
    const cell_tree& tree = model->tree;
    cluster_state state(*model);
    // Groups 0..9: priority -1..8; group 10 belongs to another VC (never preemptible).
    std::vector<int> priority(11);
    for (int g = 0; g < 11; ++g) priority[static_cast<std::size_t>(g)] = g < 10 ? g - 1 : 3;
    state.priority_of = [&](int g) { return priority[static_cast<std::size_t>(g)]; };
    std::vector<cell_id> leaves;
    for (cell_id id = 0; id < tree.size(); ++id)
      if (tree.at(id).children.empty()) leaves.push_back(id);
    for (int round = 0; round < 12; ++round) {
      // Change a random share of the GPUs, then ask several passes.
      for (cell_id leaf : leaves) {
        if (pick(0, 3) != 0) continue;
        const int what = pick(0, 9);
        if (what < 3) state.set_owner(leaf, -1);
        else if (what < 8) state.set_owner(leaf, pick(0, 10));
        else state.set_reserver(leaf, what == 8 ? -1 : pick(0, 10));
      }
      if (pick(0, 4) == 0) {
        const auto nodes = tree.nodes();
        state.set_health(nodes[static_cast<std::size_t>(pick(0, int(nodes.size()) - 1))].node, pick(0, 2) != 0);
      }
      for (int ask = 0; ask < 8; ++ask) {
        const int p = pick(0, 9);
        std::vector<char> taken(tree.size(), 0);
        std::vector<cell_id> near;
        for (cell_id leaf : leaves)
          if (pick(0, 9) == 0) {
            taken[leaf] = 1;
            near.push_back(leaf);
          }
        // The core's preemption cost: taken or bad or untouchable -1, free 0, else victim + 2.
        auto cost = [&](cell_id leaf) -> int {
          if (taken[leaf] || state.is_bad_leaf(leaf)) return -1;
          const int o = state.owner[leaf], r = state.reserver[leaf];
          if (o < 0 && r < 0) return 0;
          int victim = -1;
          for (int g : {o, r}) {
            if (g < 0) continue;
            if (g == 10 || priority[static_cast<std::size_t>(g)] >= p) return -1;
            victim = std::max(victim, priority[static_cast<std::size_t>(g)]);
          }
          return victim + 2;
        };
        // Roots may overlap, as prospects of two virtual cell kinds can: a node-level cell
        // beside (before or after) the top that holds it. The earlier root wins a tie.
        std::vector<choice_root> roots;
        for (cell_id top : tree.top_cells())
          if (pick(0, 3) != 0) roots.push_back({top, pick(0, 4) == 0});
        if (pick(0, 1) == 0) {
          const auto nodes = tree.nodes();
          const auto cells = tree.node_level_cells_of(nodes[static_cast<std::size_t>(pick(0, int(nodes.size()) - 1))].node);
          const auto at = roots.begin() + pick(0, static_cast<int>(roots.size()));
          roots.insert(at, {cells.front(), true});
        }
        if (roots.empty()) continue;
        pick_request req;
        req.leaf_count = pick(1, 8);
        req.max_cost = 1;
        req.cost = cost;
        req.cost_implies_avail = true;
        req.unusable_from = p;
        req.near = &near;
        req.victim_bounds = true;
        const auto indexed = pick_leaves(state, roots, req);
        req.victim_bounds = false;
        const auto surveyed = pick_leaves(state, roots, req);
        INFO("round " << round << " ask " << ask << " n " << req.leaf_count << " p " << p);
        REQUIRE(indexed.has_value() == surveyed.has_value());
        if (!surveyed) {
          ++none;
          continue;
        }
        CHECK(indexed->root == surveyed->root);
        CHECK(indexed->leaves == surveyed->leaves);
        CHECK(indexed->preempted == surveyed->preempted);
        CHECK(indexed->relaxed == surveyed->relaxed);
        ++picked;
        preempting += surveyed->preempted > 0 ? 1 : 0;
        relaxed += surveyed->relaxed ? 1 : 0;
      }
    }
  }
  // The draw covers every outcome.
  CHECK(picked > 1000);
  CHECK(preempting > 300);
  CHECK(relaxed > 20);
  CHECK(none > 300);
}
