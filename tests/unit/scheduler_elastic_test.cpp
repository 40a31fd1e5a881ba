// Elastic gangs (scheduler_core.hpp note 10) through the facade: placed at their minimum when
// the whole gang does not fit, grown as GPUs free up, shrunk pod by pod by a preemption before
// they are deleted whole; and, on random small clusters of whole-node pods, the counts a user
// relies on after every round: an elastic gang runs between its minimum and its maximum, never
// waits (or leaves a pod waiting) while a node is free, and a preemption takes only the pods
// it needs from an elastic gang above its minimum.
#include "actors/scheduler/scheduler_core.hpp"
#include "tests/unit/scheduler_fixtures.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>
#include <string>

using namespace kozmo::scheduler;
using Catch::Matchers::Contains;

namespace {

// Physical mode: racks of two 8-GPU nodes n1, n2, ...
scheduler_core cluster(int racks) {
  auto core = scheduler_core::load(test::v100_racks(racks));
  REQUIRE(core);
  return std::move(*core);
}

struct gang {
  std::vector<std::string> uids;
};

gang add(scheduler_core& core, const std::string& name, int pods, int min, int priority, std::int64_t t) {
  gang g;
  for (int p = 0; p < pods; ++p) {
    pod_view v;
    v.ref = {"default", name + "-" + std::to_string(p), name + "-" + std::to_string(p)};
    v.spec.affinity_group = name;
    v.spec.virtual_cluster = "default";
    v.spec.priority = priority;
    v.spec.leaf_cell_number = 8;
    v.spec.members = {{pods, 8}};
    v.spec.min_members = min;
    v.created_ms = t;
    REQUIRE(core.add_pod(v));
    g.uids.push_back(v.ref.uid);
  }
  return g;
}

std::map<std::string, const pod_decision*> by_pod(const std::vector<pod_decision>& ds) {
  std::map<std::string, const pod_decision*> out;
  for (const auto& d : ds) out[d.pod.uid] = &d;
  return out;
}

int binds_of(const std::vector<pod_decision>& ds, const std::string& group) {
  int n = 0;
  for (const auto& d : ds) n += d.kind == decision_kind::bind && d.group == group;
  return n;
}

const group_notice* notice(const std::vector<group_notice>& ns, const std::string& group, notice_kind kind) {
  for (const auto& n : ns)
    if (n.group == group && n.kind == kind) return &n;
  return nullptr;
}

} // namespace

TEST_CASE("an elastic gang starts at its minimum, grows when GPUs free up and shrinks before it is deleted") {
  auto core = cluster(2); // n1..n4
  add(core, "f1", 1, 0, 0, 0);
  add(core, "f2", 1, 0, 3, 0);
  auto first = core.schedule(0);
  REQUIRE(binds_of(first, "default/f1-0") + binds_of(first, "f1") == 1);
  // Two nodes left: the 4-pod gang with a minimum of 2 starts at 2; the others say why.
  auto e = add(core, "e", 4, 2, 0, 1000);
  auto ds = core.schedule(1000);
  CHECK(binds_of(ds, "e") == 2);
  auto told = by_pod(ds);
  REQUIRE(told.count("e-3"));
  CHECK_THAT(told["e-3"]->reason, Contains("the elastic gang 'e' runs 2 of its 4 pods (at least 2)"));
  (void)core.take_notices();
  // f1 ends: the gang grows by one pod.
  core.remove_pod("f1-0");
  ds = core.schedule(2000);
  CHECK(binds_of(ds, "e") == 1);
  auto ns = core.take_notices();
  const group_notice* grown = notice(ns, "e", notice_kind::grown);
  REQUIRE(grown);
  CHECK_THAT(grown->message, Contains("grew from 2 pods to 3 (at least 2, at most 4)"));
  CHECK(std::string(event_reason(notice_kind::grown)) == "Grown");
  // A priority-5 pod needs a node: the gang (priority 0, three pods) gives up one pod rather
  // than all of them, and rather than f2 (priority 3) being deleted.
  add(core, "h", 1, 0, 5, 3000);
  ds = core.schedule(3000);
  auto h = by_pod(ds);
  REQUIRE(h.count("h-0"));
  REQUIRE(h["h-0"]->kind == decision_kind::preempt);
  REQUIRE(h["h-0"]->victims.size() == 1);
  const std::string victim = h["h-0"]->victims.front().uid;
  CHECK(core.group_of(victim) == "e");
  ns = core.take_notices();
  const group_notice* shrunk = notice(ns, "e", notice_kind::shrunk);
  REQUIRE(shrunk);
  CHECK_THAT(shrunk->message, Contains("shrank from 3 pods to 2 (at least 2) for gang 'h' (priority 5)"));
  // The victim goes; h binds on its node; the gang keeps two pods running.
  core.remove_pod(victim);
  ds = core.schedule(4000);
  CHECK(binds_of(ds, "h") == 1);
  const auto info = core.inspect_group("e");
  REQUIRE(info);
  CHECK(info->as_object().find("physicalPlacement")->as_object().size() == 2);
  // At its minimum the gang is not shrunk further: a second priority-5 pod deletes f2 (the
  // cheaper victim now that e cannot give up a pod alone) or all of e.
  add(core, "h2", 1, 0, 5, 5000);
  ds = core.schedule(5000);
  auto h2 = by_pod(ds);
  REQUIRE(h2.count("h2-0"));
  REQUIRE(h2["h2-0"]->kind == decision_kind::preempt);
  CHECK(notice(core.take_notices(), "e", notice_kind::shrunk) == nullptr);
}

TEST_CASE("a bad elastic gang is refused naming the annotation") {
  auto core = cluster(1);
  pod_view v;
  v.ref = {"default", "x-0", "x-0"};
  v.spec.affinity_group = "x";
  v.spec.virtual_cluster = "default";
  v.spec.leaf_cell_number = 8;
  v.spec.members = {{2, 8}};
  v.spec.min_members = 3;
  auto refused = core.add_pod(v);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.err().message, Contains("kozmo.io/gang-min-members 3"));
  auto parsed = parse_pod_scheduling_spec({{"kozmo.io/gang", "x"}, {"kozmo.io/gang-members", "2x8"},
                                            {"kozmo.io/gang-min-members", "3"}, {"kozmo.io/leaf-cell-number", "8"},
                                            {"kozmo.io/virtual-cluster", "default"}},
                                           "default", "x-0");
  REQUIRE_FALSE(parsed);
  CHECK_THAT(parsed.err().message, Contains("kozmo.io/gang-min-members: 3 is more than the gang's 2 pods"));
  parsed = parse_pod_scheduling_spec({{"kozmo.io/gang", "x"}, {"kozmo.io/gang-members", "1x8,1x4"},
                                      {"kozmo.io/gang-min-members", "1"}, {"kozmo.io/leaf-cell-number", "8"},
                                      {"kozmo.io/virtual-cluster", "default"}},
                                     "default", "x-0");
  REQUIRE_FALSE(parsed);
  CHECK_THAT(parsed.err().message, Contains("an elastic gang's pods must all ask the same GPUs"));
  parsed = parse_pod_scheduling_spec({{"kozmo.io/gang-min-members", "0"}, {"kozmo.io/virtual-cluster", "default"},
                                      {"kozmo.io/leaf-cell-number", "8"}},
                                     "default", "x-0");
  REQUIRE_FALSE(parsed);
  CHECK_THAT(parsed.err().message, Contains("out of range"));
  // The writer says it back.
  parsed = parse_pod_scheduling_spec({{"kozmo.io/gang", "x"}, {"kozmo.io/gang-members", "1x8,3x8"},
                                      {"kozmo.io/gang-min-members", "2"}, {"kozmo.io/leaf-cell-number", "8"},
                                      {"kozmo.io/virtual-cluster", "default"}},
                                     "default", "x-0");
  REQUIRE(parsed);
  CHECK(parsed->members == std::vector<affinity_member>{{4, 8}});
  bool written = false;
  for (const auto& [k, val] : scheduling_annotations(*parsed)) written = written || (k == "kozmo.io/gang-min-members" && val == "2");
  CHECK(written);
}

TEST_CASE("elastic gangs stay between their minimum and maximum and leave no node idle while a pod of theirs waits, on random clusters") {
  std::mt19937 rng(43);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int grown = 0, shrunk = 0, started_below_max = 0;
  for (int round = 0; round < 40; ++round) {
    const int racks = pick(1, 3), nodes = 2 * racks;
    auto core = cluster(racks);
    struct info {
      int pods = 0, min = 0;
      std::set<std::string> live;
    };
    std::map<std::string, info> gangs;
    std::int64_t t = 0;
    int next = 0;
    for (int step = 0; step < 30; ++step) {
      t += 1000;
      if (pick(0, 2) > 0 || gangs.empty()) {
        const std::string name = "g" + std::to_string(next++);
        const bool elastic = pick(0, 1) == 1;
        const int pods = pick(1, nodes);
        const int min = elastic ? pick(1, pods) : 0;
        auto g = add(core, name, pods, min == pods ? 0 : min, pick(0, 3), t);
        gangs[name] = {pods, min == pods ? 0 : min, {g.uids.begin(), g.uids.end()}};
      } else {
        auto it = std::next(gangs.begin(), pick(0, static_cast<int>(gangs.size()) - 1));
        for (const auto& uid : it->second.live) core.remove_pod(uid);
        gangs.erase(it);
      }
      // Rounds until nothing new is decided; preemption victims are deleted as the scheduler
      // actor deletes them.
      for (int pass = 0; pass < 8; ++pass) {
        auto ds = core.schedule(t);
        bool deleted = false;
        for (const auto& d : ds) {
          if (d.kind != decision_kind::preempt) continue;
          for (const auto& v : d.victims) {
            const std::string g = core.group_of(v.uid);
            if (g.empty() || !gangs.count(g)) continue;
            info& victim = gangs[g];
            if (victim.min > 0 && d.victims.size() < victim.live.size()) ++shrunk;
            core.remove_pod(v.uid);
            victim.live.erase(v.uid);
            deleted = true;
          }
        }
        for (const auto& n : core.take_notices()) grown += n.kind == notice_kind::grown;
        if (!deleted && ds.empty()) break;
      }
      // The counts after the rounds.
      int busy = 0;
      const auto physical = core.inspect_physical_cluster();
      for (const auto& n : physical.as_array())
        busy += n.as_object().find("usedLeafCells")->as_int() > 0;
      const int free_nodes = nodes - busy;
      for (const auto& [name, g] : gangs) {
        const auto ginfo = core.inspect_group(name);
        if (!ginfo) continue;
        const auto& o = ginfo->as_object();
        const std::string state = o.find("state")->as_string();
        const int placed = static_cast<int>(o.find("physicalPlacement")->as_object().size());
        INFO("gang " << name << " of " << g.pods << " (min " << g.min << "), " << g.live.size() << " live, state " << state
                     << ", on " << placed << " nodes, " << free_nodes << " free");
        if (g.min == 0 || g.live.empty()) continue;
        if (state == "Pending") {
          CHECK(free_nodes < g.min);
        } else if (state == "Allocated") {
          CHECK(placed >= std::min<int>(g.min, static_cast<int>(g.live.size())));
          CHECK(placed <= g.pods);
          if (placed < g.pods && placed < static_cast<int>(g.live.size())) CHECK(free_nodes == 0);
          if (placed < g.pods) ++started_below_max;
        }
      }
    }
  }
  CHECK(grown > 5);
  CHECK(shrunk > 2);
  CHECK(started_below_max > 5);
}
