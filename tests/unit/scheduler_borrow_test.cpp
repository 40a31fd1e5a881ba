// Borrowing on whole cells (scheduler_core.hpp note 9) against a brute-force count on small
// random clusters: racks of two 8-GPU nodes, three VCs with random quotas and lending and
// borrowing limits, gangs of whole-node pods arriving, finishing and reclaiming. With
// whole-node pods every decision follows from counting cells, so the oracle is exact:
//  - a gang of P pods binds at once iff P <= its VC's idle cells + min(what others may lend
//    now, what it may still borrow);
//  - otherwise it reclaims iff P <= its idle cells + its cells lent out, and its pods hear the
//    deadline; at the deadline the preempt decision names only gangs that borrowed from it,
//    and once they are gone it binds;
//  - otherwise it waits;
// and after every round no VC lends or borrows more cells than its limits allow.
#include "actors/scheduler/scheduler_core.hpp"

#include "tests/unit/scheduler_fixtures.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace kozmo::scheduler;
using Catch::Matchers::Contains;

namespace {

constexpr std::int64_t reclaim_ms = 10'000;

struct vc_def {
  std::string name;
  int quota = 0;
  int lend = -1;   // -1: no lendingLimit
  int borrow = -1; // -1: no borrowingLimit
};

std::string config_of(int racks, const std::vector<vc_def>& vcs) {
  std::string y = test::v100_racks(racks) + "borrowing: {enabled: true, reclaimTimeout: 10s}\nvirtualClusters:\n";
  for (const auto& v : vcs) {
    y += "  " + v.name + ":\n    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: " + std::to_string(v.quota) + "}]\n";
    if (v.lend >= 0) y += "    lendingLimit: {V100-NODE: " + std::to_string(v.lend) + "}\n";
    if (v.borrow >= 0) y += "    borrowingLimit: {V100-NODE: " + std::to_string(v.borrow) + "}\n";
  }
  return y;
}

// What inspect says of one VC's cells.
struct vc_count {
  int idle = 0;     // own cells no gang uses
  int lent = 0;     // own cells a borrower uses (and no reclaim of its VC holds yet)
  int borrowed = 0; // others' cells its gangs use
};

std::map<std::string, vc_count> count_cells(const scheduler_core& core) {
  std::map<std::string, vc_count> out;
  const auto all = core.inspect_virtual_clusters();
  for (const auto& [vc, cells] : all.as_object()) {
    vc_count& c = out[vc];
    for (const auto& cell : cells.as_array()) {
      const auto& o = cell.as_object();
      if (o.find("borrowed")) ++c.borrowed;
      else if (o.find("lent")) c.lent += o.find("reclaiming") ? 0 : 1;
      else if (o.find("usedLeafCells")->as_int() == 0) ++c.idle;
    }
  }
  return out;
}

pod_view whole_node_pod(const std::string& gang, int index, int pods, const std::string& vc, std::int64_t t) {
  pod_view v;
  v.ref = {"default", gang + "-" + std::to_string(index), gang + "-" + std::to_string(index)};
  v.spec.affinity_group = gang;
  v.spec.virtual_cluster = vc;
  v.spec.leaf_cell_number = 8;
  v.spec.members = {{pods, 8}};
  v.created_ms = t;
  return v;
}

} // namespace

TEST_CASE("borrowed cells follow the limits and come back to their lender at the reclaim timeout, on random clusters") {
  std::mt19937 rng(20261129);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int placed = 0, borrowed_gangs = 0, reclaims = 0, waited = 0;
  for (int round = 0; round < 60; ++round) {
    const int racks = pick(2, 3);
    std::vector<vc_def> vcs{{"a"}, {"b"}, {"c"}};
    int left = 2 * racks;
    for (auto& v : vcs) {
      v.quota = pick(1, std::max(1, left - 2));
      left -= v.quota;
      if (left < 1) left = 1;
      if (pick(0, 3) > 0) v.lend = pick(0, v.quota);
      if (pick(0, 3) > 0) v.borrow = pick(0, 2 * racks);
    }
    int owned = 0;
    for (const auto& v : vcs) owned += v.quota;
    if (owned > 2 * racks) continue; // the quotas must fit the cluster
    const std::string config = config_of(racks, vcs);
    INFO("config:\n" << config);
    auto loaded = scheduler_core::load(config);
    REQUIRE(loaded);
    scheduler_core& core = *loaded;
    std::map<std::string, std::pair<std::string, int>> gangs; // live gang -> (vc, pods)
    std::map<std::string, std::int64_t> reclaiming;          // gang -> deadline
    std::int64_t t = 0;
    int next = 0;
    std::map<std::string, int> bound; // binds per gang so far
    auto run = [&](std::int64_t now) {
      auto ds = core.schedule(now);
      for (const auto& d : ds)
        if (d.kind == decision_kind::bind) ++bound[d.group];
      return ds;
    };
    auto remove_gang = [&](const std::string& g) {
      for (int p = 0; p < gangs.at(g).second; ++p) core.remove_pod(g + "-" + std::to_string(p));
      gangs.erase(g);
      reclaiming.erase(g);
    };
    auto check_limits = [&] {
      const auto counts = count_cells(core);
      for (const auto& v : vcs) {
        const vc_count& c = counts.at(v.name);
        CHECK(c.lent <= std::max(0, v.lend));
        CHECK(c.borrowed <= std::max(0, v.borrow));
      }
      // What the lenders' cells say is lent is what the borrowers are counted to hold (the
      // map's `borrowed` is kept by cluster_state as loans start and end, `lent` is summed).
      int lent = 0, borrowed = 0;
      for (const auto& u : core.vc_usages()) {
        lent += u.lent;
        borrowed += u.borrowed;
      }
      CHECK(lent == borrowed);
    };
    for (int step = 0; step < 40; ++step) {
      t += 1000;
      const int what = pick(0, 9);
      if (what < 5) {
        // A new gang; nothing else waits (gangs that wait are taken away), so counts decide.
        const vc_def& v = vcs[static_cast<std::size_t>(pick(0, 2))];
        const int pods = pick(1, 3);
        const auto before = count_cells(core);
        const vc_count& mine = before.at(v.name);
        int lendable = 0;
        bool lender = false;
        for (const auto& other : vcs) {
          lender = lender || other.lend >= 0;
          if (other.name == v.name || other.lend < 0) continue;
          lendable += std::max(0, std::min(before.at(other.name).idle, other.lend - before.at(other.name).lent));
        }
        const int may_borrow = v.borrow >= 0 && lender ? std::max(0, v.borrow - mine.borrowed) : 0;
        const bool fits = pods <= mine.idle + std::min(lendable, may_borrow);
        const bool reclaim = !fits && pods <= mine.idle + mine.lent;
        const std::string g = "g" + std::to_string(next++);
        INFO("step " << step << ": gang " << g << " of " << pods << " in " << v.name << " (idle " << mine.idle
                     << ", lent " << mine.lent << ", borrowed " << mine.borrowed << ", lendable " << lendable
                     << ", may borrow " << may_borrow << ")");
        for (int p = 0; p < pods; ++p) REQUIRE(core.add_pod(whole_node_pod(g, p, pods, v.name, t)));
        gangs[g] = {v.name, pods};
        const auto ds = run(t);
        const int binds = bound[g];
        std::string said;
        for (const auto& d : ds)
          if (d.group == g) said = d.reason;
        if (fits) {
          CHECK(binds == pods);
          ++placed;
          if (std::min(lendable, may_borrow) > 0 && pods > mine.idle) ++borrowed_gangs;
        } else if (reclaim) {
          CHECK(binds == 0);
          CHECK_THAT(said, Contains("lent to VC"));
          reclaiming[g] = t + reclaim_ms;
          ++reclaims;
        } else {
          CHECK(binds == 0);
          CHECK_THAT(said, Contains("VC " + v.name + " has"));
          remove_gang(g);
          ++waited;
          run(t);
        }
      } else if (what < 8 && !gangs.empty()) {
        // A gang that runs finishes (one reclaiming or reclaimed keeps going).
        std::vector<std::string> running;
        for (const auto& [g, info] : gangs)
          if (!reclaiming.count(g)) running.push_back(g);
        if (running.empty()) continue;
        // A borrower that finishes before its reclaim's deadline lets the lender bind sooner.
        remove_gang(running[static_cast<std::size_t>(pick(0, static_cast<int>(running.size()) - 1))]);
        run(t);
      } else {
        // Time passes beyond every deadline: each reclaim preempts only its borrowers, they
        // go, and the lender's gang binds.
        t += reclaim_ms;
        auto ds = run(t);
        std::set<std::string> victims;
        for (const auto& d : ds) {
          if (d.kind != decision_kind::preempt) continue;
          CHECK(reclaiming.count(d.group) == 1);
          for (const auto& v : d.victims) victims.insert(core.group_of(v.uid));
        }
        for (const auto& vg : victims) {
          const auto info = core.inspect_group(vg);
          REQUIRE(info);
          CHECK(info->as_object().find("borrowedFrom") != nullptr);
          if (gangs.count(vg)) remove_gang(vg);
        }
        run(t);
        for (auto it = reclaiming.begin(); it != reclaiming.end();) {
          CHECK(bound[it->first] == gangs.at(it->first).second);
          it = reclaiming.erase(it);
        }
      }
      check_limits();
    }
  }
  // The random cases cover each outcome.
  CHECK(placed > 50);
  CHECK(borrowed_gangs > 10);
  CHECK(reclaims > 5);
  CHECK(waited > 5);
}

TEST_CASE("a reclaim takes cells back from the borrower with the largest share of its quota first") {
  // n1..n8. team-a lends its 3 nodes; team-b (1 node) and team-c (4 nodes) borrow.
  const std::string config = test::v100_racks(4) + R"(borrowing: {enabled: true, reclaimTimeout: 0s}
virtualClusters:
  team-a: {virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 3}], lendingLimit: {V100-NODE: 3}}
  team-b: {virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 1}], borrowingLimit: {V100-NODE: 3}}
  team-c: {virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 4}], borrowingLimit: {V100-NODE: 3}}
)";
  for (bool c_first : {true, false}) {
    auto loaded = scheduler_core::load(config);
    REQUIRE(loaded);
    scheduler_core& core = *loaded;
    auto gang = [&](const std::string& name, const std::string& vc, int pods, std::int64_t t) {
      for (int p = 0; p < pods; ++p) REQUIRE(core.add_pod(whole_node_pod(name, p, pods, vc, t)));
      return core.schedule(t);
    };
    // team-c borrows 2 of team-a's nodes (16 GPUs on a quota of 32: share 0.5), team-b 1 (8 on
    // 8: share 1), in either order.
    if (c_first) {
      gang("c6", "team-c", 6, 1000);
      gang("b2", "team-b", 2, 2000);
    } else {
      gang("b2", "team-b", 2, 1000);
      gang("c6", "team-c", 6, 2000);
    }
    REQUIRE(count_cells(core).at("team-a").lent == 3);
    // team-a needs one node back: team-b, whose share is larger, gives it.
    auto ds = gang("a1", "team-a", 1, 3000);
    std::set<std::string> victims;
    for (const auto& d : ds)
      for (const auto& v : d.victims) victims.insert(core.group_of(v.uid));
    INFO("team-c borrowed first: " << c_first);
    CHECK(victims == std::set<std::string>{"b2"});
  }
}
