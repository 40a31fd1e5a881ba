// Gang topology (scheduler_core.hpp note 11) through the facade: a brute-force oracle over every
// assignment of a gang's pods to nodes on random small clusters with random occupancy, and the
// rules a user meets (waiting for all pods of a subgroup gang, each pod on its subgroup's slot,
// levels agreed by every pod, recovery, inspect).
#include "actors/scheduler/cell_tree.hpp"
#include "actors/scheduler/config.hpp"
#include "actors/scheduler/scheduler_core.hpp"
#include "tests/unit/scheduler_fixtures.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace kozmo::scheduler;

namespace {

// Chains per leaf type A (and maybe B): GPU -> [A-L0] -> A-NODE (node level) -> rack-A ->
// [zone-A]; one or two top cells. Level words: "node" (node-level cells), "rack" and "zone"
// (the prefix rule: rack-A, rack-B), or an exact type.
std::string random_cluster(std::mt19937& rng, bool& zones) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::string types, cells;
  int node_number = 0;
  zones = pick(0, 1) == 1;
  for (const std::string leaf : {"A", "B"}) {
    if (leaf == "B" && pick(0, 1) == 0) continue;
    std::string child = leaf;
    if (pick(0, 1)) {
      types += "    " + leaf + "-L0: {childCellType: " + leaf + ", childCellNumber: " + std::to_string(pick(1, 2)) + "}\n";
      child = leaf + "-L0";
    }
    types += "    " + leaf + "-NODE: {childCellType: " + child + ", childCellNumber: " + std::to_string(pick(1, 3)) +
             ", isNodeLevel: true}\n";
    const int rack_size = pick(1, 2), zone_size = pick(1, 2);
    types += "    rack-" + leaf + ": {childCellType: " + leaf + "-NODE, childCellNumber: " + std::to_string(rack_size) + "}\n";
    if (zones)
      types += "    zone-" + leaf + ": {childCellType: rack-" + leaf + ", childCellNumber: " + std::to_string(zone_size) + "}\n";
    auto rack = [&](const std::string& indent) {
      std::string out;
      for (int n = 0; n < rack_size; ++n) out += indent + "- {cellAddress: n" + std::to_string(node_number++) + "}\n";
      return out;
    };
    for (int t = 0, tops = pick(1, 2); t < tops; ++t) {
      if (!zones) {
        cells += "  - cellType: rack-" + leaf + "\n    cellChildren:\n" + rack("    ");
        continue;
      }
      cells += "  - cellType: zone-" + leaf + "\n    cellChildren:\n";
      for (int r = 0; r < zone_size; ++r) cells += "    - cellChildren:\n" + rack("      ");
    }
  }
  return "physicalCluster:\n  cellTypes:\n" + types + "  physicalCells:\n" + cells;
}

// The oracle's view: which cells a level word names (the rule of note 11, for the words used
// here), node-level cells and their free GPUs.
struct topology_oracle {
  const cell_tree& tree;
  std::set<cell_id> used; // leaves held

  bool names(cell_id id, const std::string& level) const {
    const cell& c = tree.at(id);
    if (level == "node") return c.is_node_level;
    return c.type.rfind(level + "-", 0) == 0;
  }
  bool inside(cell_id id, cell_id cell) const {
    for (; id != no_cell; id = tree.at(id).parent)
      if (id == cell) return true;
    return false;
  }
  // Every one of `nodes` (node-level cells) inside one cell of `level` ("" = no constraint).
  bool one_cell(const std::vector<cell_id>& nodes, const std::string& level) const {
    if (level.empty() || nodes.empty()) return true;
    for (cell_id up = nodes.front(); up != no_cell; up = tree.at(up).parent) {
      if (!names(up, level)) continue;
      if (std::all_of(nodes.begin(), nodes.end(), [&](cell_id n) { return inside(n, up); })) return true;
    }
    return false;
  }
  int free_of(cell_id node) const {
    std::vector<cell_id> leaves;
    tree.append_leaves(node, leaves);
    int n = 0;
    for (cell_id l : leaves) n += used.count(l) ? 0 : 1;
    return n;
  }
  cell_id node_of(cell_id id) const {
    while (id != no_cell && !tree.at(id).is_node_level) id = tree.at(id).parent;
    return id;
  }
};

struct subgroup_ask {
  std::string name, level;
  int pods = 0;
};

// Brute force: every assignment of each subgroup's pods (all of `gpus` GPUs) to node-level
// cells of the leaf type (pods of one subgroup as a multiset), capacities by free GPUs (a pod
// of n GPUs fits any node-level cell with n free: the relaxed buddy rule), each subgroup within
// one cell of its level and the whole within one cell of each of `gang_levels`.
bool brute_fits(const topology_oracle& o, const std::vector<subgroup_ask>& subgroups, int gpus,
                const std::vector<std::string>& gang_levels, const std::string& leaf_type) {
  std::vector<cell_id> nodes;
  for (cell_id id = 0; id < o.tree.size(); ++id)
    if (o.tree.at(id).is_node_level && (leaf_type.empty() || o.tree.at(id).leaf_type == leaf_type)) nodes.push_back(id);
  std::vector<int> room(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) room[i] = o.free_of(nodes[i]);
  std::vector<std::vector<cell_id>> placed(subgroups.size());
  std::function<bool(std::size_t, std::size_t)> go = [&](std::size_t s, std::size_t from) -> bool {
    if (s == subgroups.size()) {
      std::vector<cell_id> all;
      for (const auto& p : placed) all.insert(all.end(), p.begin(), p.end());
      return std::all_of(gang_levels.begin(), gang_levels.end(),
                         [&](const std::string& level) { return o.one_cell(all, level); });
    }
    if (static_cast<int>(placed[s].size()) == subgroups[s].pods)
      return o.one_cell(placed[s], subgroups[s].level) && go(s + 1, 0);
    for (std::size_t i = from; i < nodes.size(); ++i) {
      if (room[i] < gpus) continue;
      room[i] -= gpus;
      placed[s].push_back(nodes[i]);
      const bool ok = go(s, i);
      placed[s].pop_back();
      room[i] += gpus;
      if (ok) return true;
    }
    return false;
  };
  return go(0, 0);
}

pod_view topo_pod(const std::string& group, int index, const std::string& type, int gpus,
                  const std::vector<affinity_member>& members) {
  pod_view p;
  p.ref = {"ns", group + "-" + std::to_string(index), group + "-" + std::to_string(index)};
  p.spec.virtual_cluster = "any";
  p.spec.leaf_cell_type = type;
  p.spec.leaf_cell_number = gpus;
  p.spec.affinity_group = group;
  p.spec.members = members;
  return p;
}

std::vector<cell_id> leaves_of(const cell_tree& tree, const pod_decision& d) {
  std::vector<cell_id> out;
  for (int index : d.leaf_indices)
    for (cell_id leaf : tree.leaf_cells_of(d.node))
      if (tree.at(leaf).leaf_indices.at(0) == index && tree.at(leaf).leaf_type == d.leaf_type) out.push_back(leaf);
  return out;
}

} // namespace

TEST_CASE("the core places a topology gang within one cell of its levels iff brute force over all assignments can",
          "[scheduler][topology][oracle]") {
  int placed = 0, refused = 0, relaxed = 0, with_subgroups = 0;
  for (std::uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    bool zones = false;
    const std::string yaml = random_cluster(rng, zones);
    INFO("seed " << seed << "\n" << yaml);
    auto cfg = parse_config(yaml);
    REQUIRE(cfg);
    auto built = cell_tree::build(cfg->physical_cluster);
    REQUIRE(built);
    const cell_tree& tree = *built;
    auto loaded = scheduler_core::load(yaml);
    REQUIRE(loaded);
    scheduler_core core = std::move(*loaded);
    topology_oracle o{tree, {}};
    int largest = 0;
    for (cell_id id = 0; id < tree.size(); ++id)
      if (tree.at(id).is_node_level) largest = std::max(largest, tree.at(id).leaf_count);
    std::vector<std::string> levels = {"node", "rack"};
    if (zones) levels.push_back("zone");
    std::map<std::string, std::vector<std::pair<std::string, std::vector<cell_id>>>> fillers; // group -> (uid, leaves)

    for (int step = 0; step < 24; ++step) {
      const std::int64_t now = step * 1000;
      const int action = pick(0, 9);
      if (action < 2 && !fillers.empty()) { // a filler leaves
        auto f = std::next(fillers.begin(), pick(0, static_cast<int>(fillers.size()) - 1));
        for (const auto& [uid, leaves] : f->second) {
          core.remove_pod(uid);
          for (cell_id l : leaves) o.used.erase(l);
        }
        fillers.erase(f);
        continue;
      }
      if (action < 6) { // a filler: one plain pod wherever the core puts it
        const std::string group = "f" + std::to_string(step);
        auto p = topo_pod(group, 0, "", pick(1, largest), {});
        p.spec.members = {{1, p.spec.leaf_cell_number}};
        REQUIRE(core.add_pod(p));
        for (const auto& d : core.schedule(now)) {
          if (d.kind != decision_kind::bind) continue;
          auto leaves = leaves_of(tree, d);
          for (cell_id l : leaves) o.used.insert(l);
          fillers[group].push_back({d.pod.uid, leaves});
        }
        if (!fillers.count(group)) core.remove_pod(p.ref.uid);
        continue;
      }
      // A topology gang: pods of one size (the oracle's capacity model), hard, soft or subgroups.
      const std::string group = "t" + std::to_string(step);
      const std::string type = pick(0, 1) ? "" : "A";
      const int gpus = pick(1, largest);
      const int kind = pick(0, 3); // 0 gang-level, 1 preferred-level, 2 subgroups, 3 gang and preferred
      auto any_level = [&] { return levels[static_cast<std::size_t>(pick(0, static_cast<int>(levels.size()) - 1))]; };
      std::string gang_level = any_level();
      const std::string preferred = kind == 1 ? gang_level : kind == 3 ? any_level() : std::string();
      std::vector<subgroup_ask> subgroups;
      if (kind == 2) {
        ++with_subgroups;
        if (pick(0, 2) == 0) gang_level.clear();
        for (const char* name : {"p", "d"}) {
          const int l = pick(0, static_cast<int>(levels.size()));
          subgroups.push_back({name, l == static_cast<int>(levels.size()) ? "" : levels[static_cast<std::size_t>(l)], pick(1, 2)});
        }
      } else {
        subgroups.push_back({"", "", pick(1, 3)});
      }
      int pods = 0;
      for (const auto& s : subgroups) pods += s.pods;
      const std::vector<affinity_member> members = {{pods, gpus}};
      INFO("step " << step << ": kind " << kind << ", " << pods << " x " << gpus << " GPUs of type '" << type
                   << "', gang level '" << gang_level << "', preferred '" << preferred << "'");
      std::vector<std::string> uids;
      std::map<std::string, std::string> subgroup_of; // uid -> subgroup
      int index = 0;
      for (const auto& s : subgroups)
        for (int k = 0; k < s.pods; ++k) {
          auto p = topo_pod(group, index++, type, gpus, members);
          if (kind == 0 || kind == 3) p.spec.gang_level = gang_level;
          p.spec.preferred_level = preferred;
          if (kind == 2) {
            p.spec.gang_level = gang_level;
            p.spec.subgroup = s.name;
            p.spec.subgroup_level = s.level;
          }
          REQUIRE(core.add_pod(p));
          uids.push_back(p.ref.uid);
          subgroup_of[p.ref.uid] = s.name;
        }
      const std::vector<std::string> hard_levels = kind == 1 ? std::vector<std::string>{} : std::vector{gang_level};
      std::vector<std::string> soft_levels = hard_levels;
      if (!preferred.empty()) soft_levels.push_back(preferred);
      const bool hard = brute_fits(o, subgroups, gpus, hard_levels, type);
      const bool soft = preferred.empty() || brute_fits(o, subgroups, gpus, soft_levels, type);
      std::map<std::string, std::vector<cell_id>> nodes_by_subgroup;
      std::vector<cell_id> all_nodes;
      std::set<cell_id> taken;
      std::size_t binds = 0;
      for (const auto& d : core.schedule(now)) {
        REQUIRE(d.group == group);
        if (d.kind != decision_kind::bind) continue;
        ++binds;
        const auto leaves = leaves_of(tree, d);
        REQUIRE(leaves.size() == static_cast<std::size_t>(gpus));
        for (cell_id l : leaves) {
          REQUIRE(!o.used.count(l));
          REQUIRE(taken.insert(l).second);
        }
        const cell_id node = o.node_of(leaves.front());
        nodes_by_subgroup[subgroup_of.at(d.pod.uid)].push_back(node);
        all_nodes.push_back(node);
      }
      const auto notices = core.take_notices();
      if (!hard) {
        REQUIRE(binds == 0);
        ++refused;
      } else {
        REQUIRE(binds == uids.size());
        ++placed;
        if (kind != 1) REQUIRE(o.one_cell(all_nodes, gang_level));
        for (const auto& s : subgroups) REQUIRE(o.one_cell(nodes_by_subgroup[s.name], s.level));
        // Soft: a notice exactly when no placement within one cell of the preferred level exists.
        const bool noticed = std::any_of(notices.begin(), notices.end(), [&](const group_notice& n) {
          return n.group == group && n.kind == notice_kind::topology_relaxed;
        });
        REQUIRE(noticed == !soft);
        if (soft) REQUIRE(o.one_cell(all_nodes, preferred));
        relaxed += noticed ? 1 : 0;
      }
      for (const auto& uid : uids) core.remove_pod(uid); // the gang leaves; fillers stay
    }
  }
  // The random workloads exercise every outcome.
  CHECK(placed > 300);
  CHECK(refused > 100);
  CHECK(relaxed > 20);
  CHECK(with_subgroups > 300);
}

namespace {

// A prefill/decode gang on the reference V100 cluster (two racks of two 8-GPU nodes): two
// pods of 2 GPUs per subgroup, each subgroup within a node, the whole within a rack.
pod_view serve_pod(int index) {
  auto p = topo_pod("serve", index, "", 2, {{4, 2}});
  p.spec.gang_level = "V100-RACK";
  p.spec.subgroup = index < 2 ? "prefill" : "decode";
  p.spec.subgroup_level = "node";
  p.spec.subgroup_min_members = 2;
  return p;
}

scheduler_core v100_core() {
  auto loaded = scheduler_core::load(test::v100_cluster);
  REQUIRE(loaded);
  return std::move(*loaded);
}

std::map<std::string, pod_decision> by_pod(std::vector<pod_decision> decisions) {
  std::map<std::string, pod_decision> out;
  for (auto& d : decisions) out[d.pod.uid] = std::move(d);
  return out;
}

} // namespace

TEST_CASE("a gang with subgroups waits for all its pods, then each subgroup binds within one node",
          "[scheduler][topology]") {
  scheduler_core core = v100_core();
  for (int i = 0; i < 3; ++i) REQUIRE(core.add_pod(serve_pod(i)));
  auto first = core.schedule(0);
  REQUIRE(first.size() == 3);
  for (const auto& d : first) {
    REQUIRE(d.kind == decision_kind::wait);
    REQUIRE_THAT(d.reason, Catch::Matchers::Contains("placed once all 4 pods kozmo.io/gang-members counts are present (3 now)"));
  }
  auto inspect = core.inspect_group("serve");
  REQUIRE(inspect);
  REQUIRE(inspect->find("topology")->get_string("waiting").find("3 now") != std::string::npos);
  REQUIRE(core.add_pod(serve_pod(3)));
  auto placed = by_pod(core.schedule(1000));
  REQUIRE(placed.size() == 4);
  for (const auto& [uid, d] : placed) REQUIRE(d.kind == decision_kind::bind);
  REQUIRE(placed["serve-0"].node == placed["serve-1"].node);
  REQUIRE(placed["serve-2"].node == placed["serve-3"].node);
  const auto rack_of = [](const std::string& node) { return node <= "0.0.0.2" ? 1 : 2; };
  REQUIRE(rack_of(placed["serve-0"].node) == rack_of(placed["serve-2"].node));

  SECTION("inspect shows the levels and the subgroups") {
    auto g = core.inspect_group("serve");
    REQUIRE(g);
    const auto* t = g->find("topology");
    REQUIRE(t);
    REQUIRE(t->get_string("gangLevel") == "V100-RACK");
    REQUIRE(t->find("relaxed") == nullptr);
    const auto& subgroups = t->find("subgroups")->as_array();
    REQUIRE(subgroups.size() == 2);
    REQUIRE(subgroups[0].get_int("minMembers") == 2);
    REQUIRE(subgroups[0].get_string("level") == "node");
  }
  SECTION("a recreated pod takes its own subgroup's slot, not the other's") {
    const std::string decode_node = placed["serve-3"].node;
    core.remove_pod("serve-3");
    REQUIRE(core.add_pod(serve_pod(3)));
    auto again = core.bind_placed("serve-3");
    REQUIRE(again);
    REQUIRE(again->node == decode_node);
  }
  SECTION("after a restart, the recovered gang keeps each slot for its subgroup") {
    scheduler_core fresh = v100_core();
    for (int i = 0; i < 4; ++i) {
      auto p = serve_pod(i);
      p.node = placed[p.ref.uid].node;
      p.bind_info = placed[p.ref.uid].annotations.at(bind_info_annotation);
      REQUIRE(fresh.recover_pod(p));
    }
    const std::string prefill_node = placed["serve-0"].node;
    fresh.remove_pod("serve-0");
    REQUIRE(fresh.add_pod(serve_pod(0)));
    auto again = fresh.bind_placed("serve-0");
    REQUIRE(again);
    REQUIRE(again->node == prefill_node);
  }
}

TEST_CASE("every pod of a gang must agree on its levels, and unknown levels are refused naming the key",
          "[scheduler][topology]") {
  scheduler_core core = v100_core();
  auto a = serve_pod(0);
  REQUIRE(core.add_pod(a));
  auto b = serve_pod(1);
  b.spec.gang_level = "node";
  auto refused = core.add_pod(b);
  REQUIRE_FALSE(refused);
  REQUIRE(refused.err().reason == "BadRequest");
  REQUIRE_THAT(refused.err().message, Catch::Matchers::Contains("kozmo.io/gang-level: 'node' differs from 'V100-RACK'"));
  auto c = serve_pod(1);
  c.spec.subgroup_level = "V100-RACK";
  refused = core.add_pod(c);
  REQUIRE_FALSE(refused);
  REQUIRE_THAT(refused.err().message, Catch::Matchers::Contains("same on every pod of subgroup 'prefill'"));
  auto d = topo_pod("other", 0, "", 1, {{1, 1}});
  d.spec.preferred_level = "shelf";
  refused = core.add_pod(d);
  REQUIRE_FALSE(refused);
  REQUIRE_THAT(refused.err().message,
               Catch::Matchers::Contains("kozmo.io/preferred-level: 'shelf' is not a cell level of the cluster"));
  REQUIRE(core.group_of("other-0").empty()); // not queued
  // Level words: "rack" and "v100-rack" name V100-RACK (suffix after '-', any case); "ack"
  // names nothing (a word, not a substring).
  auto e = topo_pod("lower", 0, "", 1, {{1, 1}});
  e.spec.gang_level = "ack";
  REQUIRE_FALSE(core.add_pod(e));
  e.spec.gang_level = "rack";
  REQUIRE(core.add_pod(e));
  auto f = topo_pod("upper", 0, "", 1, {{1, 1}});
  f.spec.gang_level = "v100-rack";
  REQUIRE(core.add_pod(f));
}

TEST_CASE("a subgroup gang that cannot fit holds no GPU, and one whose pods do not match its members says so",
          "[scheduler][topology]") {
  scheduler_core core = v100_core();
  // Two 8-GPU pods in one subgroup within a node cannot fit anywhere.
  for (int i = 0; i < 2; ++i) {
    auto p = topo_pod("huge", i, "", 8, {{2, 8}});
    p.spec.subgroup = "all";
    p.spec.subgroup_level = "node";
    REQUIRE(core.add_pod(p));
  }
  for (const auto& d : core.schedule(0)) {
    REQUIRE(d.kind == decision_kind::wait);
    REQUIRE_THAT(d.reason, Catch::Matchers::Contains("subgroup 'all' within one 'node' cell"));
  }
  REQUIRE(core.placed_groups() == 0);
  // min-members above the subgroup's pods: the gang waits with the reason.
  scheduler_core other = v100_core();
  auto p = topo_pod("few", 0, "", 1, {{1, 1}});
  p.spec.subgroup = "s";
  p.spec.subgroup_min_members = 3;
  REQUIRE(other.add_pod(p));
  auto waits = other.schedule(0);
  REQUIRE(waits.size() == 1);
  REQUIRE_THAT(waits[0].reason, Catch::Matchers::Contains("asks for at least 3 pods (kozmo.io/subgroup-min-members) but has 1"));
}

TEST_CASE("cell types derived from node labels are named by their level word", "[scheduler][topology]") {
  // Types as label-derived topology names them: the level in capitals, the shape, the GPU type.
  const std::string yaml = R"(
physicalCluster:
  cellTypes:
    CLIQUE-4-A100: {childCellType: A100, childCellNumber: 4}
    NODE-2x4-A100: {childCellType: CLIQUE-4-A100, childCellNumber: 2, isNodeLevel: true}
    RACK-2x2x4-A100: {childCellType: NODE-2x4-A100, childCellNumber: 2}
  physicalCells:
  - cellType: RACK-2x2x4-A100
    cellChildren: [{cellAddress: a1}, {cellAddress: a2}]
  - cellType: RACK-2x2x4-A100
    cellChildren: [{cellAddress: b1}, {cellAddress: b2}]
)";
  auto loaded = scheduler_core::load(yaml);
  REQUIRE(loaded);
  scheduler_core core = std::move(*loaded);
  // Two 2-GPU pods within one clique (4 GPUs): "clique" names CLIQUE-4-A100.
  for (int i = 0; i < 2; ++i) {
    auto p = topo_pod("c", i, "", 2, {{2, 2}});
    p.spec.gang_level = "clique";
    REQUIRE(core.add_pod(p));
  }
  auto placed = by_pod(core.schedule(0));
  REQUIRE(placed.size() == 2);
  REQUIRE(placed["c-0"].kind == decision_kind::bind);
  REQUIRE(placed["c-0"].node == placed["c-1"].node);
  // The two GPU-index halves of a node are its two cliques: both pods in the same half.
  const auto half = [](const pod_decision& d) { return d.leaf_indices.front() / 4; };
  REQUIRE(half(placed["c-0"]) == half(placed["c-1"]));
  for (const char* word : {"rack", "Rack", "node", "clique", "RACK-2x2x4-A100"}) {
    auto p = topo_pod(std::string("w-") + word, 0, "", 1, {{1, 1}});
    p.spec.gang_level = word;
    INFO(word);
    REQUIRE(core.add_pod(p));
  }
  auto p = topo_pod("bad", 0, "", 1, {{1, 1}});
  p.spec.gang_level = "4";
  REQUIRE_FALSE(core.add_pod(p));
}
