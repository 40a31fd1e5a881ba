// The facade as the actors use it: request errors, decisions and their annotations, health,
// notices, inspect errors, and a seeded random run checked against invariants a user relies
// on (no GPU handed to two live pods, no VC over its quota, everything back after deletion),
// and against the same core without its shortcuts (counts and caches instead of searches).
#include "actors/scheduler/scheduler_core.hpp"
#include "tests/unit/scheduler_fixtures.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <cstdlib>
#include <random>
#include <set>
#include <string>

using namespace kozmo::scheduler;
using Catch::Matchers::Contains;

namespace {

constexpr const char* cluster_with_vcs = R"(
physicalCluster:
  cellTypes:
    V100-SWITCH: {childCellType: V100, childCellNumber: 2}
    V100-SOCKET: {childCellType: V100-SWITCH, childCellNumber: 2}
    V100-NODE: {childCellType: V100-SOCKET, childCellNumber: 2, isNodeLevel: true}
    V100-RACK: {childCellType: V100-NODE, childCellNumber: 2}
  physicalCells:
  - cellType: V100-RACK
    cellChildren: [{cellAddress: n1}, {cellAddress: n2}]
  - cellType: V100-RACK
    cellChildren: [{cellAddress: n3}, {cellAddress: n4, pinnedCellId: pin-a}]
virtualClusters:
  team-a:
    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 1}]
    pinnedCells: [{pinnedCellId: pin-a}]
  team-b:
    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 2}]
)";

scheduler_core load() {
  auto core = scheduler_core::load(cluster_with_vcs);
  REQUIRE(core);
  return std::move(*core);
}

pod_view pod(const std::string& group, int index, const std::string& vc, int priority, int gpus,
             int pods = 1, std::int64_t created = 0) {
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

const pod_decision* find(const std::vector<pod_decision>& ds, const std::string& uid) {
  for (const auto& d : ds)
    if (d.pod.uid == uid) return &d;
  return nullptr;
}

} // namespace

TEST_CASE("a pod whose request cannot match the configuration is refused naming the field",
          "[scheduler][core]") {
  auto core = load();
  auto unknown_vc = core.add_pod(pod("g", 0, "team-z", 1, 1));
  REQUIRE_FALSE(unknown_vc);
  CHECK(unknown_vc.err().reason == "BadRequest");
  CHECK_THAT(unknown_vc.err().message, Contains("virtualCluster 'team-z' does not exist"));

  auto foreign_pin = pod("g", 0, "team-b", 1, 1);
  foreign_pin.spec.pinned_cell_id = "pin-a";
  CHECK_THAT(core.add_pod(foreign_pin).err().message, Contains("not a pinned cell of virtualCluster 'team-b'"));

  CHECK_THAT(core.add_pod(pod("g", 0, "team-a", 1001, 1)).err().message, Contains("priority must be"));

  auto wrong_member = pod("g", 0, "team-a", 1, 2);
  wrong_member.spec.members = {{1, 4}};
  CHECK_THAT(core.add_pod(wrong_member).err().message, Contains("has no member of 2 GPUs"));
  CHECK(core.group_of("g-0").empty());
}

TEST_CASE("a bind decision carries the GPUs and the annotations to write with the binding",
          "[scheduler][core]") {
  auto core = load();
  REQUIRE(core.add_pod(pod("job", 0, "team-b", 1, 2, 2)));
  REQUIRE(core.add_pod(pod("job", 1, "team-b", 1, 2, 2)));
  const auto ds = core.schedule(0);
  REQUIRE(ds.size() == 2);
  const auto* first = find(ds, "job-0");
  REQUIRE(first);
  CHECK(first->kind == decision_kind::bind);
  CHECK(first->group == "job");
  CHECK(first->node == "n3"); // the pinned n4 split the second rack: buddy binding takes n3
  CHECK(first->leaf_indices == std::vector<int>{0, 1});
  CHECK(first->annotations.at(leaf_cell_isolation_annotation) == "0,1");
  const auto& info = first->annotations.at(bind_info_annotation);
  CHECK_THAT(info, Contains("node: \"n3\""));
  CHECK_THAT(info, Contains("preassignedCellTypes: [\"V100-RACK.V100-NODE\", \"V100-RACK.V100-NODE\"]"));
  CHECK(core.group_of("job-1") == "job");
  // The extender may ask again for a pod already decided: the same answer comes back.
  const auto again = core.schedule_one("job-0", {}, 10);
  CHECK(again.kind == decision_kind::bind);
  CHECK(again.node == "n3");
  CHECK(again.leaf_indices == first->leaf_indices);
  CHECK(core.schedule(20).empty());
}

TEST_CASE("a waiting pod is reported once per reason, not on every pass", "[scheduler][core]") {
  auto core = load();
  REQUIRE(core.add_pod(pod("huge", 0, "team-a", 1, 8, 2)));
  REQUIRE(core.add_pod(pod("huge", 1, "team-a", 1, 8, 2)));
  auto first = core.schedule(0);
  REQUIRE(first.size() == 2);
  CHECK(first[0].kind == decision_kind::wait);
  CHECK_THAT(first[0].reason, Contains("VC team-a has 8 of 8 V100 GPUs free"));
  CHECK(core.schedule(1).empty());
  REQUIRE(core.add_pod(pod("small", 0, "team-a", 5, 2)));
  const auto later = core.schedule(2);
  REQUIRE(later.size() == 3); // small binds; huge's reason changed (6 of 8 free now)
  CHECK(find(later, "small-0")->kind == decision_kind::bind);
  CHECK_THAT(find(later, "huge-0")->reason, Contains("6 of 8"));
}

TEST_CASE("nodes count as healthy until the first node report, then only reported ones do",
          "[scheduler][core]") {
  auto core = load();
  REQUIRE(core.add_pod(pod("a", 0, "team-b", 1, 8)));
  CHECK(core.schedule(0).at(0).node == "n3");
  core.set_node("n1", true); // n2, n3 and n4 were never reported: bad from now on
  REQUIRE(core.add_pod(pod("b", 0, "team-b", 1, 8)));
  const auto ds = core.schedule(1);
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].kind == decision_kind::bind);
  CHECK(ds[0].node == "n1");
  core.remove_node("n1");
  core.remove_pod("b-0");
  REQUIRE(core.add_pod(pod("c", 0, "team-b", 1, 8)));
  const auto none = core.schedule(2);
  REQUIRE(none.size() == 1);
  CHECK(none[0].kind == decision_kind::wait);
  const auto physical = core.inspect_physical_cluster();
  CHECK(physical.as_array().at(0).get_string("node") == "n1");
  CHECK(physical.as_array().at(0).get_string("cellHealthiness") == "Bad");
}

TEST_CASE("a node report says whether it changed which GPUs are healthy; a heartbeat does not",
          "[scheduler][core]") {
  auto core = load();
  CHECK(core.set_node("n1", true));       // the first report: n2, n3 and n4 now count as bad
  CHECK_FALSE(core.set_node("n1", true)); // the same status again, as every heartbeat sends it
  CHECK(core.set_node("n2", true));
  CHECK(core.set_node("n2", false));      // cordoned or NotReady
  CHECK_FALSE(core.remove_node("n2"));    // already bad
  CHECK(core.remove_node("n1"));
  CHECK_FALSE(core.set_node("not-in-the-config", true));
}

kozmo::json::value node_view(const scheduler_core& core, const std::string& node) {
  const auto physical = core.inspect_physical_cluster();
  for (const auto& n : physical.as_array())
    if (n.get_string("node") == node) return n;
  FAIL("node " << node << " is not in the physical view");
  return {};
}

TEST_CASE("GPUs that other schedulers' pods hold are not given to ours, and come back when they end",
          "[scheduler][core]") {
  auto core = load();
  CHECK(core.set_other_pods_gpus("n1", 8));
  CHECK(core.set_other_pods_gpus("n2", 3));
  CHECK(core.set_other_pods_gpus("n3", 8));
  CHECK_FALSE(core.set_other_pods_gpus("n3", 8)); // the same count again
  CHECK_FALSE(core.set_other_pods_gpus("not-in-the-config", 2));
  // n4 is team-a's pinned node; team-b's quota of two nodes has 5 GPUs left, all on n2.
  REQUIRE(core.add_pod(pod("five", 0, "team-b", 1, 5)));
  const auto first = core.schedule(0);
  REQUIRE(first.size() == 1);
  CHECK(first[0].kind == decision_kind::bind);
  CHECK(first[0].node == "n2");
  for (int gpu : first[0].leaf_indices) CHECK(gpu < 5); // the held ones are taken from the back
  REQUIRE(core.add_pod(pod("one", 0, "team-b", 1, 1)));
  const auto full = core.schedule(1);
  REQUIRE(full.size() == 1);
  CHECK(full[0].kind == decision_kind::wait);
  CHECK_THAT(full[0].reason, Contains("has 0 of 16 V100 GPUs free (11 held by other schedulers' pods)"));
  auto n2 = node_view(core, "n2");
  CHECK(n2.get_int("usedLeafCells") == 5);
  CHECK(n2.get_int("otherPodsLeafCells") == 3);
  CHECK(n2.get_int("badLeafCells") == 0);
  CHECK(n2.get_string("cellHealthiness") == "Healthy");
  CHECK(core.set_other_pods_gpus("n2", 0)); // the other pods ended
  const auto freed = core.schedule(2);
  REQUIRE(freed.size() == 1);
  CHECK(freed[0].kind == decision_kind::bind);
  CHECK(freed[0].node == "n2");
}

TEST_CASE("a gang member whose kept GPUs another scheduler's pods took meanwhile waits instead of binding",
          "[scheduler][core]") {
  // A gang of two 4-GPU pods on one node; one of them is gone (its controller recreates it),
  // and another scheduler fills the 4 GPUs the gang keeps for it. Bound there, the new pod would
  // be refused by the kubelet (OutOfnvidia.com/gpu), again at every recreation.
  auto core = load();
  REQUIRE(core.add_pod(pod("g", 0, "team-b", 1, 4, 2)));
  REQUIRE(core.add_pod(pod("g", 1, "team-b", 1, 4, 2)));
  const auto placed = core.schedule(0);
  REQUIRE(placed.size() == 2);
  REQUIRE(placed[0].kind == decision_kind::bind);
  REQUIRE(placed[0].node == placed[1].node);
  const std::string node = placed[0].node;
  core.pod_bound("g-0");
  core.pod_bound("g-1");
  core.remove_pod("g-1");
  core.set_other_pods_gpus(node, 4);
  auto again = pod("g", 1, "team-b", 1, 4, 2);
  again.ref.uid = "g-1-again";
  REQUIRE(core.add_pod(again));
  const auto held = core.schedule(1);
  const pod_decision* d = find(held, "g-1-again");
  REQUIRE(d != nullptr);
  CHECK(d->kind == decision_kind::wait);
  CHECK_THAT(d->reason, Contains("4 of the GPUs affinity group 'g' keeps for this pod on " + node +
                                 " are held by other schedulers' pods"));
  CHECK(core.set_other_pods_gpus(node, 0)); // they ended
  const auto freed = core.schedule(2);
  d = find(freed, "g-1-again");
  REQUIRE(d != nullptr);
  CHECK(d->kind == decision_kind::bind);
  CHECK(d->node == node);
}

TEST_CASE("GPUs held by other schedulers' pods stay counted while their node is bad and after",
          "[scheduler][core]") {
  auto core = load();
  for (const char* n : {"n1", "n2", "n3", "n4"}) core.set_node(n, true);
  CHECK(core.set_other_pods_gpus("n3", 6));
  CHECK(core.set_node("n3", false));
  auto bad = node_view(core, "n3");
  CHECK(bad.get_int("badLeafCells") == 8);
  CHECK(bad.get_int("otherPodsLeafCells") == 0); // every GPU is bad anyway
  CHECK(core.set_node("n3", true));
  auto back = node_view(core, "n3");
  CHECK(back.get_int("badLeafCells") == 0);
  CHECK(back.get_int("otherPodsLeafCells") == 6);
  CHECK(core.set_other_pods_gpus("n1", 8));
  CHECK(core.set_other_pods_gpus("n2", 8));
  REQUIRE(core.add_pod(pod("three", 0, "team-b", 1, 3)));
  const auto ds = core.schedule(0);
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].kind == decision_kind::wait); // n3 has 2 GPUs free
  CHECK_THAT(ds[0].reason, Contains("has 2 of 16 V100 GPUs free (14 held by other schedulers' pods)"));
}

TEST_CASE("a recovered pod on GPUs counted as held elsewhere moves that count to free GPUs",
          "[scheduler][core]") {
  // Before the restart: our pod holds the last 2 GPUs of a node (a 6-GPU pod, gone since,
  // held the others).
  auto before = load();
  REQUIRE(before.add_pod(pod("six", 0, "team-b", 1, 6)));
  const auto six = before.schedule(0);
  REQUIRE(six.size() == 1);
  REQUIRE(six[0].kind == decision_kind::bind);
  auto ours = pod("ours", 0, "team-b", 1, 2);
  REQUIRE(before.add_pod(ours));
  const auto placed = before.schedule(1);
  REQUIRE(placed.size() == 1);
  REQUIRE(placed[0].kind == decision_kind::bind);
  REQUIRE(placed[0].node == six[0].node);
  REQUIRE(placed[0].leaf_indices == std::vector<int>{6, 7});
  ours.node = placed[0].node;
  ours.bind_info = placed[0].annotations.at(bind_info_annotation);
  // After it: the other schedulers' pods on that node are counted before ours is recovered,
  // and their 6 GPUs are first guessed to be the node's last six, the 2 that ours holds among
  // them.
  auto after = load();
  for (const char* n : {"n1", "n2", "n3", "n4"})
    if (n != ours.node) after.set_other_pods_gpus(n, 8);
  after.set_other_pods_gpus(ours.node, 6);
  REQUIRE(after.recover_pod(ours));
  auto view = node_view(after, ours.node);
  CHECK(view.get_int("usedLeafCells") == 2);
  CHECK(view.get_int("otherPodsLeafCells") == 6);
  // Nothing is left on that node: 2 ours, 6 theirs.
  REQUIRE(after.add_pod(pod("late", 0, "team-b", 1, 1)));
  const auto ds = after.schedule(1);
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].kind == decision_kind::wait);
}

TEST_CASE("a lazy preemption is announced as a notice and shown by inspect", "[scheduler][core]") {
  auto core = load();
  auto low = pod("low", 0, "team-a", 1, 8);
  low.spec.lazy_preemption_enable = true;
  REQUIRE(core.add_pod(low));
  REQUIRE(core.schedule(0).at(0).kind == decision_kind::bind);
  REQUIRE(core.add_pod(pod("high", 0, "team-a", 7, 8)));
  const auto ds = core.schedule(1000);
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].kind == decision_kind::bind); // bound elsewhere: team-a's node moved
  const auto notices = core.take_notices();
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].group == "low");
  CHECK_THAT(notices[0].message, Contains("lazily preempted"));
  CHECK(core.take_notices().empty());
  auto g = core.inspect_group("low");
  REQUIRE(g);
  CHECK(g->find("lazyPreemptionStatus")->get_string("preemptor") == "high");
  CHECK(g->find("lazyPreemptionStatus")->get_int("preemptionTime") == 1000);
}

TEST_CASE("after a restart a recreated pod of a running gang binds to its kept slot, whatever "
          "the order the pods are reported in", "[scheduler][core]") {
  auto core = load();
  std::vector<pod_view> pods;
  for (int i = 0; i < 3; ++i) {
    pods.push_back(pod("gang", i, "team-b", 1, 2, 3));
    REQUIRE(core.add_pod(pods.back()));
  }
  for (const auto& d : core.schedule(0)) {
    REQUIRE(d.kind == decision_kind::bind);
    for (auto& p : pods)
      if (p.ref.uid == d.pod.uid) {
        p.node = d.node;
        p.bind_info = d.annotations.at(bind_info_annotation);
      }
  }
  // gang-2 was deleted and recreated (no bind-info yet) while the scheduler was down.
  auto recreated = pod("gang", 3, "team-b", 1, 2, 3);
  auto restarted = load();
  REQUIRE(restarted.add_pod(recreated));
  REQUIRE(restarted.recover_pod(pods[0]));
  REQUIRE(restarted.recover_pod(pods[1]));
  const auto ds = restarted.schedule(10);
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].pod.uid == "gang-3");
  CHECK(ds[0].kind == decision_kind::bind);
  CHECK(ds[0].node == pods[2].node);
  CHECK(ds[0].leaf_indices == std::vector<int>{4, 5});
}

TEST_CASE("a pod that joins a placed gang takes its kept slot at once, the one a round would give it",
          "[scheduler][core]") {
  // Two cores fed alike: one binds the late pod when it joins, the other in a round.
  auto now = load();
  auto later = load();
  for (auto* core : {&now, &later}) {
    REQUIRE(core->add_pod(pod("gang", 0, "team-b", 1, 2, 3)));
    const auto first = core->schedule(0);
    REQUIRE(first.size() == 1);
    REQUIRE(first[0].kind == decision_kind::bind);
  }
  CHECK_FALSE(now.bind_placed("nobody"));
  CHECK_FALSE(now.bind_placed("gang-0")); // decided already
  REQUIRE(now.add_pod(pod("alone", 0, "team-b", 1, 2)));
  CHECK_FALSE(now.bind_placed("alone-0")); // its group is not placed: a round decides
  REQUIRE(now.add_pod(pod("gang", 1, "team-b", 1, 2, 3)));
  REQUIRE(later.add_pod(pod("gang", 1, "team-b", 1, 2, 3)));
  const auto at_once = now.bind_placed("gang-1");
  const auto round = later.schedule(1);
  REQUIRE(at_once);
  REQUIRE(round.size() == 1);
  CHECK(at_once->kind == decision_kind::bind);
  CHECK(at_once->pod.uid == "gang-1");
  CHECK(at_once->node == round[0].node);
  CHECK(at_once->leaf_indices == round[0].leaf_indices);
  CHECK(at_once->annotations == round[0].annotations);
  CHECK(now.waiting_pods() == 1); // alone-0
  const auto next = now.schedule(1);
  REQUIRE(next.size() == 1); // the round decides only what was left: alone-0
  CHECK(next[0].pod.uid == "alone-0");
}

TEST_CASE("inspecting an unknown group or VC is a not-found error", "[scheduler][core]") {
  auto core = load();
  CHECK(core.inspect_group("nope").err().reason == "NotFound");
  CHECK(core.inspect_virtual_cluster("nope").err().reason == "NotFound");
  CHECK(core.inspect_virtual_clusters().as_object().size() == 2);
  auto a = core.inspect_virtual_cluster("team-a");
  REQUIRE(a);
  CHECK(a->as_array().size() == 2); // one ordinary node, one pinned node
}

TEST_CASE("a random workload never gives a GPU to two live pods or a VC more than its quota, "
          "nor a node more GPUs than other schedulers' pods leave",
          "[scheduler][core][random]") {
  std::mt19937 rng(20261121);
  for (int run = 0; run < 20; ++run) {
    auto core = load();
    std::map<std::string, pod_decision> bound;  // live pods with a bind
    std::map<std::string, std::vector<std::string>> live; // group -> uids
    std::map<std::string, int> others;          // node -> GPUs other schedulers' pods hold
    int next = 0;
    for (int step = 0; step < 150; ++step) {
      const int action = static_cast<int>(rng() % 10);
      if (action < 5) {
        const std::string g = "g" + std::to_string(next++);
        const int gpus = 1 << (rng() % 4);
        const int pods = 1 + static_cast<int>(rng() % 3);
        const std::string vc = rng() % 2 ? "team-a" : "team-b";
        const int prio = static_cast<int>(rng() % 4) - 1;
        for (int i = 0; i < pods; ++i) {
          auto v = pod(g, i, vc, prio, gpus, pods, step);
          v.spec.lazy_preemption_enable = rng() % 2;
          REQUIRE(core.add_pod(v));
          live[g].push_back(v.ref.uid);
        }
      } else if (action < 8 && !live.empty()) {
        auto it = live.begin();
        std::advance(it, rng() % live.size());
        for (const auto& uid : it->second) {
          core.remove_pod(uid);
          bound.erase(uid);
        }
        live.erase(it);
      } else if (action == 8) {
        core.set_node("n" + std::to_string(1 + rng() % 4), rng() % 3 != 0);
      } else if (action == 9) {
        const std::string node = "n" + std::to_string(1 + rng() % 4);
        others[node] = static_cast<int>(rng() % 9);
        core.set_other_pods_gpus(node, others[node]);
      }
      for (auto& d : core.schedule(step)) {
        if (d.kind == decision_kind::bind) {
          bound[d.pod.uid] = d;
          core.pod_bound(d.pod.uid);
          int ours = 0;
          for (const auto& [uid, b] : bound)
            if (b.node == d.node) ours += static_cast<int>(b.leaf_indices.size());
          std::string held;
          for (const auto& [uid, b] : bound)
            if (b.node == d.node) {
              held += " " + uid + "[";
              for (int i : b.leaf_indices) held += std::to_string(i) + ",";
              held += "]";
            }
          INFO("run " << run << " step " << step << " pod " << d.pod.uid << " on " << d.node << " others "
                      << others[d.node] << " ours" << held);
          REQUIRE(ours + others[d.node] <= 8);
        }
        if (d.kind == decision_kind::preempt)
          for (const auto& victim : d.victims) {
            const auto group = core.group_of(victim.uid);
            for (const auto& uid : live[group]) {
              core.remove_pod(uid);
              bound.erase(uid);
            }
            live.erase(group);
          }
      }
      std::set<std::pair<std::string, int>> used;
      for (const auto& [uid, d] : bound)
        for (int gpu : d.leaf_indices) {
          INFO("run " << run << " step " << step << " pod " << uid << " GPU " << d.node << "/" << gpu);
          REQUIRE(used.insert({d.node, gpu}).second);
        }
      for (const auto& vc : {"team-a", "team-b"}) {
        // Held in a variable: a range-for over a member of a temporary would dangle.
        auto status = core.inspect_virtual_cluster(vc);
        REQUIRE(status);
        for (const auto& cell : status->as_array())
          REQUIRE(cell.get_int("usedLeafCells") <= cell.get_int("totalLeafCells"));
      }
    }
    for (const auto& [g, uids] : live)
      for (const auto& uid : uids) core.remove_pod(uid);
    for (const auto& n : {"n1", "n2", "n3", "n4"}) {
      core.set_node(n, true);
      core.set_other_pods_gpus(n, 0);
    }
    const auto physical = core.inspect_physical_cluster(); // held: see the range-for above
    for (const auto& node : physical.as_array())
      CHECK(node.get_int("usedLeafCells") == 0);
    auto team_b = core.inspect_virtual_cluster("team-b");
    REQUIRE(team_b);
    for (const auto& cell : team_b->as_array())
      CHECK(cell.get_string("cellAddress").empty());
    CHECK(core.inspect_groups().as_array().empty());
  }
}

// Every decision, in full, as a user or the actor would see it.
std::string describe(const pod_decision& d) {
  std::string out = std::to_string(static_cast<int>(d.kind)) + " " + d.pod.uid + " " + d.group + " " + d.node + " " +
                    d.leaf_type + " [";
  for (int i : d.leaf_indices) out += std::to_string(i) + ",";
  out += "] victims [";
  for (const auto& v : d.victims) out += v.uid + ",";
  out += "] " + d.reason;
  for (const auto& [k, v] : d.annotations) out += " " + k + "=" + v;
  return out;
}

// The shortcuts (scheduler_options::shortcuts: counts, queueing hints, barrier skip, victim
// index) against the full search, over a random workload on a cluster: every decision,
// reason and annotation equal when no reason is deferred. `runs` by default; KOZMO_ORACLE_RUNS
// asks for more (a change to the search is checked over 1,500 before it lands).
struct oracle_cluster {
  std::string config;
  std::vector<std::string> vcs;
  int nodes = 4;           // named n1 .. nN
  int max_gpus_log2 = 3;   // pods of 1 .. 2^this GPUs
  int max_pods = 3;
  int steps = 200;
};

void check_against_full_search(const oracle_cluster& cluster, std::uint32_t seed, int runs) {
  std::mt19937 rng(seed);
  const char* asked = std::getenv("KOZMO_ORACLE_RUNS");
  if (asked) runs = std::atoi(asked);
  auto load_it = [&] {
    auto core = scheduler_core::load(cluster.config);
    REQUIRE(core);
    return std::move(*core);
  };
  for (int run = 0; run < runs; ++run) {
    auto quick = load_it();
    auto full = load_it();
    scheduler_options with{}, without{};
    // Half the runs let groups wait long enough to reserve (the quick path steps aside then).
    with.reserve_after_ms = without.reserve_after_ms = run % 2 ? 20 : 5 * 60 * 1000;
    without.shortcuts = false;
    // A third of the runs refresh at most two stale wait reasons per round: those settle over
    // later rounds, and only the reasons' timing may differ then.
    const bool deferred = run % 3 == 0;
    if (deferred) with.reason_refreshes_per_round = 2;
    quick.set_options(with);
    full.set_options(without);
    std::map<std::string, std::vector<std::string>> live;
    std::map<std::string, std::string> told_quick, told_full;  // pod -> last wait reason
    std::set<std::string> decided;                              // pods bound or preempting
    int next = 0;
    for (int step = 0; step < cluster.steps; ++step) {
      const int action = static_cast<int>(rng() % 10);
      if (action < 6) {
        const std::string g = "g" + std::to_string(next++);
        const int gpus = 1 << (rng() % static_cast<std::uint32_t>(cluster.max_gpus_log2 + 1));
        const int pods = 1 + static_cast<int>(rng() % static_cast<std::uint32_t>(cluster.max_pods));
        const std::string vc = cluster.vcs[rng() % cluster.vcs.size()];
        const int prio = static_cast<int>(rng() % 5) - 1;
        const bool lazy = rng() % 2;
        for (int i = 0; i < pods; ++i) {
          auto v = pod(g, i, vc, prio, gpus, pods, step);
          v.spec.lazy_preemption_enable = lazy;
          REQUIRE(quick.add_pod(v));
          REQUIRE(full.add_pod(v));
          live[g].push_back(v.ref.uid);
        }
      } else if (action < 8 && !live.empty()) {
        auto it = live.begin();
        std::advance(it, rng() % live.size());
        for (const auto& uid : it->second) {
          quick.remove_pod(uid);
          full.remove_pod(uid);
        }
        live.erase(it);
      } else if (action == 8) {
        const std::string node = "n" + std::to_string(1 + rng() % static_cast<std::uint32_t>(cluster.nodes));
        const bool healthy = rng() % 3 != 0;
        quick.set_node(node, healthy);
        full.set_node(node, healthy);
      }
      auto a = quick.schedule(step);
      auto b = full.schedule(step);
      auto all = [](const std::vector<pod_decision>& ds) {
        std::string out;
        for (const auto& d : ds) out += describe(d) + "\n";
        return out;
      };
      INFO("run " << run << " step " << step << "\nquick:\n" << all(a) << "full:\n" << all(b));
      if (!deferred) {
        REQUIRE(a.size() == b.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
          INFO("run " << run << " step " << step);
          REQUIRE(describe(a[i]) == describe(b[i]));
        }
      } else {
        // Binds and preemptions the same, in the same order, in the same round; every tenth
        // step both run rounds with nothing new until neither says anything more, and then
        // every waiting pod has been told the same last reason by both.
        auto placements = [](const std::vector<pod_decision>& ds) {
          std::string out;
          for (const auto& d : ds)
            if (d.kind != decision_kind::wait) out += describe(d) + "\n";
          return out;
        };
        REQUIRE(placements(a) == placements(b));
        auto note = [](std::map<std::string, std::string>& told, const std::vector<pod_decision>& ds) {
          for (const auto& d : ds)
            if (d.kind == decision_kind::wait) told[d.pod.uid] = d.reason;
        };
        note(told_quick, a);
        note(told_full, b);
        for (int settle = 0; step % 10 == 9; ++settle) {
          REQUIRE(settle < 100);
          auto qa = quick.schedule(step);
          auto fb = full.schedule(step);
          REQUIRE(placements(qa) == "");
          REQUIRE(placements(fb) == "");
          note(told_quick, qa);
          note(told_full, fb);
          if (qa.empty() && fb.empty() && quick.stale_reasons() == 0) {
            for (const auto& [uid, reason] : told_full)
              if (!quick.group_of(uid).empty() && !decided.count(uid)) {
                INFO("pod " << uid);
                REQUIRE(told_quick[uid] == reason);
              }
            break;
          }
        }
      }
      for (const auto& d : a) {
        if (d.kind != decision_kind::wait) decided.insert(d.pod.uid);
        if (d.kind == decision_kind::bind) {
          quick.pod_bound(d.pod.uid);
          full.pod_bound(d.pod.uid);
        }
        if (d.kind == decision_kind::preempt)
          for (const auto& victim : d.victims) {
            const auto group = quick.group_of(victim.uid);
            for (const auto& uid : live[group]) {
              quick.remove_pod(uid);
              full.remove_pod(uid);
            }
            live.erase(group);
          }
      }
      REQUIRE(quick.take_notices().size() == full.take_notices().size());
    }
  }
}

TEST_CASE("rejecting a group that cannot fit by the counts decides exactly what the full search decides",
          "[scheduler][core][random]") {
  oracle_cluster small;
  small.config = cluster_with_vcs;
  small.vcs = {"team-a", "team-b"};
  check_against_full_search(small, 20261125, 40);
}

// Many roots per VC (racks and nodes), so that the victim index's search opens cells best
// first, prunes on its bounds and breaks ties across roots.
TEST_CASE("on racks of several VCs the preemption search through the victim index decides what "
          "weighing every GPU decides",
          "[scheduler][core][random]") {
  oracle_cluster racks;
  racks.nodes = 24;
  racks.config = test::v100_racks(racks.nodes / 2);
  racks.config += R"(virtualClusters:
  va:
    virtualCells: [{cellType: V100-RACK, cellNumber: 3}, {cellType: V100-RACK.V100-NODE, cellNumber: 3}]
  vb:
    virtualCells: [{cellType: V100-RACK, cellNumber: 2}, {cellType: V100-RACK.V100-NODE, cellNumber: 4}]
  vc:
    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 5}]
)";
  racks.vcs = {"va", "vb", "vc"};
  racks.max_pods = 4;
  racks.steps = 400;
  check_against_full_search(racks, 20261127, 30);
}

// Borrowing on (note 9): hints also follow what other VCs lend, and a gang that could borrow
// is searched again when lendable cells come or go; a shortcut that missed such a change would
// leave a gang waiting that the full search binds or preempts for.
TEST_CASE("with borrowing between VCs the queueing hints decide what the full search decides",
          "[scheduler][core][random]") {
  oracle_cluster racks;
  racks.nodes = 24;
  racks.config = test::v100_racks(racks.nodes / 2);
  racks.config += R"(borrowing: {enabled: true, reclaimTimeout: 0s}
virtualClusters:
  va:
    virtualCells: [{cellType: V100-RACK, cellNumber: 3}, {cellType: V100-RACK.V100-NODE, cellNumber: 3}]
    lendingLimit: {V100-RACK: 1, V100-NODE: 2}
    borrowingLimit: {V100-NODE: 2}
  vb:
    virtualCells: [{cellType: V100-RACK, cellNumber: 2}, {cellType: V100-RACK.V100-NODE, cellNumber: 4}]
    lendingLimit: {V100-NODE: 3}
    borrowingLimit: {V100-RACK: 1, V100-NODE: 3}
  vc:
    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 5}]
    lendingLimit: {V100-NODE: 2}
    borrowingLimit: {V100-NODE: 2}
)";
  racks.vcs = {"va", "vb", "vc"};
  racks.max_pods = 4;
  racks.steps = 400;
  check_against_full_search(racks, 20261130, 30);
}

TEST_CASE("a waiting backlog hears changed counts a few groups per round while a gang that fits binds at once",
          "[scheduler][core]") {
  auto core = load();
  scheduler_options options;
  options.reason_refreshes_per_round = 3;
  core.set_options(options);
  // team-b's 16 GPUs (two nodes of 8) are held by pods of 4, 4 and 8 GPUs.
  for (const auto& [g, gpus] : std::vector<std::pair<std::string, int>>{{"run1", 4}, {"run2", 4}, {"run3", 8}})
    REQUIRE(core.add_pod(pod(g, 0, "team-b", 0, gpus)));
  for (const auto& d : core.schedule(0)) {
    REQUIRE(d.kind == decision_kind::bind);
    core.pod_bound(d.pod.uid);
  }
  // Ten gangs of one 8-GPU pod wait; each is told why at once, whatever the budget.
  for (int i = 0; i < 10; ++i) REQUIRE(core.add_pod(pod("big" + std::to_string(i), 0, "team-b", 0, 8, 1, 1 + i)));
  auto first = core.schedule(1);
  CHECK(first.size() == 10);
  for (const auto& d : first) CHECK_THAT(d.reason, Contains("VC team-b has 0 of 16"));

  // A 4-GPU pod ends and a small gang arrives: the small gang binds in this round; the
  // backlog's new count (4 free, still no node with 8) reaches three more groups per round.
  core.remove_pod("run1-0");
  REQUIRE(core.add_pod(pod("small", 0, "team-b", 0, 4, 1, 20)));
  auto round = core.schedule(2);
  int waits = 0, binds = 0;
  for (const auto& d : round) {
    waits += d.kind == decision_kind::wait;
    if (d.kind == decision_kind::bind) {
      ++binds;
      CHECK(d.pod.name == "small-0");
      core.pod_bound(d.pod.uid);
    }
  }
  CHECK(binds == 1);
  CHECK(waits <= 1 + 3);
  CHECK(core.stale_reasons() > 0);
  // Rounds with nothing new bring every waiting pod up to date: all 16 GPUs are held again.
  std::map<std::string, std::string> told;
  for (const auto& d : first) told[d.pod.name] = d.reason;
  for (const auto& d : round)
    if (d.kind == decision_kind::wait) told[d.pod.name] = d.reason;
  for (int k = 0; k < 10 && (k == 0 || core.stale_reasons() > 0); ++k)
    for (const auto& d : core.schedule(3 + k)) {
      REQUIRE(d.kind == decision_kind::wait);
      told[d.pod.name] = d.reason;
    }
  CHECK(core.stale_reasons() == 0);
  CHECK(core.waiting_pods() == 10);
  for (int i = 0; i < 10; ++i) {
    INFO("big" << i);
    CHECK_THAT(told["big" + std::to_string(i) + "-0"], Contains("VC team-b has 0 of 16"));
  }
}

TEST_CASE("recovery reads Kozmo's bind-info without a YAML parser and HiveD-style YAML with one, "
          "to the same cells", "[scheduler][core]") {
  auto core = load();
  std::vector<pod_view> pods;
  int n = 0;
  for (auto [group, vc, gpus, count] : {std::tuple{"a", "team-a", 2, 2}, {"b", "team-b", 1, 3}, {"c", "team-b", 4, 1}})
    for (int i = 0; i < count; ++i) {
      pods.push_back(pod(group, i, vc, 1, gpus, count, n++));
      REQUIRE(core.add_pod(pods.back()));
    }
  for (const auto& d : core.schedule(0))
    for (auto& p : pods)
      if (p.ref.uid == d.pod.uid) {
        p.node = d.node;
        p.bind_info = d.annotations.at(bind_info_annotation);
      }
  // The same annotations as a person or HiveD might write them: unquoted scalars (the fast
  // reader takes only Kozmo's exact layout, so these go through yaml-cpp).
  auto restyled = [](std::string text) {
    std::string out;
    for (char c : text)
      if (c != '"')
        out += c;
    return out;
  };
  auto fast = load();
  auto yaml = load();
  for (const auto& p : pods) {
    REQUIRE_FALSE(p.bind_info.empty());
    REQUIRE(fast.recover_pod(p));
    auto other = p;
    other.bind_info = restyled(p.bind_info);
    REQUIRE(other.bind_info != p.bind_info);
    REQUIRE(yaml.recover_pod(other));
  }
  CHECK(kozmo::json::dump(fast.inspect_groups()) == kozmo::json::dump(core.inspect_groups()));
  CHECK(kozmo::json::dump(yaml.inspect_groups()) == kozmo::json::dump(core.inspect_groups()));
  CHECK(kozmo::json::dump(fast.inspect_virtual_clusters()) == kozmo::json::dump(yaml.inspect_virtual_clusters()));
  // A damaged annotation is refused, not half-read.
  auto broken = pods[0];
  broken.bind_info = broken.bind_info.substr(0, broken.bind_info.size() / 2) + "\n  - [";
  CHECK_FALSE(load().recover_pod(broken));
}

TEST_CASE("deleting every gang at once after a restart, waiting ones among them, leaves the scheduler "
          "answering and holding no gang",
          "[scheduler][core]") {
  // As in training_bench's restart run: team-b's 16 GPUs run two 4 × 2 gangs, more gangs of
  // the same priority and age wait, the scheduler restarts (running gangs recovered from their
  // bind-info), then every job is deleted in one burst with no round in between while new
  // jobs keep arriving. Waiting gangs tie on priority and age: their names order them.
  auto gang_name = [](const std::string& prefix, int i) { return "default/" + prefix + "-" + std::to_string(10 + i); };
  for (int run = 0; run < 4; ++run) {
    auto first = load();
    std::vector<pod_view> running;
    for (int g = 0; g < 2; ++g)
      for (int i = 0; i < 4; ++i) {
        running.push_back(pod(gang_name("bench", g), i, "team-b", 1, 2, 4, 1000));
        REQUIRE(first.add_pod(running.back()));
      }
    for (const auto& d : first.schedule(0)) {
      REQUIRE(d.kind == decision_kind::bind);
      for (auto& p : running)
        if (p.ref.uid == d.pod.uid) p.bind_info = d.annotations.at(bind_info_annotation);
    }
    auto core = load();
    for (const auto& p : running) REQUIRE(core.recover_pod(p));
    std::vector<std::string> waiting; // gang names
    for (int g = 2; g < 2 + 12; ++g) {
      waiting.push_back(gang_name("bench", g));
      for (int i = 0; i < 4; ++i) REQUIRE(core.add_pod(pod(waiting.back(), i, "team-b", 1, 2, 4, 1000)));
    }
    for (const auto& d : core.schedule(10)) REQUIRE(d.kind == decision_kind::wait);
    REQUIRE(core.placed_groups() == 2);
    // The burst: waiting gangs in an order that differs by run, new jobs arriving between
    // two halves of it, then the running gangs.
    std::rotate(waiting.begin(), waiting.begin() + 3 * run, waiting.end());
    if (run % 2) std::reverse(waiting.begin(), waiting.end());
    std::vector<std::string> arrived;
    for (std::size_t k = 0; k < waiting.size(); ++k) {
      for (int i = 0; i < 4; ++i) core.remove_pod(waiting[k] + "-" + std::to_string(i));
      if (k == waiting.size() / 2)
        for (int g = 0; g < 6; ++g) {
          arrived.push_back(gang_name("after", g));
          for (int i = 0; i < 4; ++i) REQUIRE(core.add_pod(pod(arrived.back(), i, "team-b", 1, 2, 4, 1000)));
        }
    }
    for (const auto& p : running) core.remove_pod(p.ref.uid);
    // The newcomers take the freed GPUs in their turn (two 4 × 2 gangs fit), the rest wait.
    std::map<std::string, int> binds;
    for (const auto& d : core.schedule(20))
      if (d.kind == decision_kind::bind) ++binds[d.group];
    CHECK(binds == std::map<std::string, int>{{gang_name("after", 0), 4}, {gang_name("after", 1), 4}});
    CHECK(core.placed_groups() == 2);
    CHECK(core.waiting_pods() == 16);
    // Everyone deleted: nothing held, nothing waiting, and the scheduler still answers.
    for (const auto& g : arrived)
      for (int i = 0; i < 4; ++i) core.remove_pod(g + "-" + std::to_string(i));
    CHECK(core.schedule(30).empty());
    CHECK(core.placed_groups() == 0);
    CHECK(core.waiting_pods() == 0);
    CHECK(core.inspect_groups().as_array().empty());
  }
}
