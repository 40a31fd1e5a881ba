// The quality bench's replay on a cluster small enough to work out by hand: 4 nodes of 8 GPUs
// in racks of 2; VC a and b own one node each, c two. Five jobs (times in seconds from 0):
//   j0 a  8 GPUs at  0 for 100     j3 b  8 GPUs at 30 for 100
//   j1 a  4 GPUs at 10 for  50     j4 c 16 GPUs at 40 for  10
//   j2 a  4 GPUs at 20 for  10
// kozmo / private / baseline: a's node is full with j0 until 100, so j1 and j2 wait for it
// (delays 90 and 80); the others start at once.
// kozmo+opportunistic: j1 and j2 arrive while a's quota is taken and run opportunistically on
// a free node at once (j2 ends at 30); at 40 c's 16-GPU gang needs both of the nodes not held
// by a and b, one of them j1's, so j1 is preempted (30 s of 4 GPUs lost), requeued (a is still
// full: opportunistic again) and restarts when j4 ends at 50.
#include "bench/quality_replay.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace kozmo::quality;

namespace {

const std::vector<vc_def> three_vcs{{"a", 1}, {"b", 1}, {"c", 2}};
const std::vector<job> five_jobs{{0, 100, 8, 0}, {10, 50, 4, 0}, {20, 10, 4, 0}, {30, 100, 8, 1}, {40, 10, 16, 2}};

replay_options window() {
  replay_options o;
  o.from = 0;
  o.to = 200;
  o.rack_nodes = 2;
  return o;
}

std::vector<double> sorted(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v;
}

} // namespace

TEST_CASE("a VC's second and third jobs wait for its full node under kozmo, the baseline and alone") {
  const auto o = window();
  for (const auto& r : {run_kozmo(three_vcs, five_jobs, o, overflow::none), run_quota_baseline(three_vcs, five_jobs, o),
                        run_private(three_vcs, five_jobs, o)}) {
    INFO(r.name);
    CHECK(sorted(r.vcs[0].delays) == std::vector<double>{0, 80, 90});
    CHECK(r.vcs[1].delays == std::vector<double>{0});
    CHECK(r.vcs[2].delays == std::vector<double>{0});
    CHECK(r.all.jobs == 5);
    CHECK(r.all.preemptions == 0);
    CHECK(r.all.unfinished == 0);
    // 8x100 + 4x50 + 4x10 + 8x100 + 16x10 GPU-s over 32 GPUs x 200 s.
    CHECK(r.all.busy_gpu_s == Approx(2000));
    CHECK(r.vcs[0].busy_gpu_s == Approx(1040));
    // a waits with its quota full: no violation; no node ever has 1-3 free GPUs.
    CHECK(r.all.violation_s == 0);
    CHECK(r.all.fragmented_gpu_s == 0);
    CHECK(percentile(r.vcs[0].delays, 0.5) == 80);
    CHECK(percentile(r.vcs[0].delays, 0.95) == 90);
  }
}

TEST_CASE("opportunistic jobs run at once, are preempted by a guaranteed gang and restart from zero") {
  const auto r = run_kozmo(three_vcs, five_jobs, window(), overflow::opportunistic);
  CHECK(sorted(r.vcs[0].delays) == std::vector<double>{0, 0, 10});
  CHECK(r.vcs[2].delays == std::vector<double>{0});
  CHECK(r.all.preemptions == 1);
  CHECK(r.vcs[0].preemptions == 1);
  CHECK(r.all.wasted_gpu_s == Approx(4 * 30));
  // j1 ran 10..40 and 50..100: the 120 GPU-s lost come on top of the 2,000 of the work.
  CHECK(r.all.busy_gpu_s == Approx(2120));
  CHECK(r.all.unfinished == 0);
  const auto alone = run_private(three_vcs, five_jobs, window());
  CHECK(sharing_anomalies(r, alone) == 0);
  CHECK(sharing_anomalies(alone, r) == 1); // a is worse alone than with opportunistic jobs
}

TEST_CASE("free GPUs no waiting pod fits count as fragmentation; the baseline scatters the gang instead") {
  // One VC of 2 nodes: j0 (6 GPUs, 0..50) and j1 (6 GPUs, 5..105) take a node each, leaving
  // 2 + 2 free; j2 (4 GPUs at 10) fits on no node and waits until j0 ends at 50.
  const std::vector<vc_def> one{{"a", 2}};
  const std::vector<job> jobs{{0, 50, 6, 0}, {5, 100, 6, 0}, {10, 10, 4, 0}};
  const auto r = run_kozmo(one, jobs, window(), overflow::none);
  CHECK(sorted(r.vcs[0].delays) == std::vector<double>{0, 0, 40});
  // 10..50: 4 free GPUs, none on a node with 4 free: fragmented. The VC uses 12 of 16 while
  // a gang of 4 waits: a violation by count for those 40 s.
  CHECK(r.all.fragmented_gpu_s == Approx(4 * 40));
  CHECK(r.vcs[0].fragmented_gpu_s == Approx(4 * 40));
  CHECK(r.all.violation_s == Approx(40));
  CHECK(r.all.scattered == 0);
  // The baseline puts j2 on 2 + 2 GPUs of two nodes at once.
  const auto b = run_quota_baseline(one, jobs, window());
  CHECK(b.vcs[0].delays == std::vector<double>{0, 0, 0});
  CHECK(b.all.scattered == 1);
  CHECK(b.all.fragmented_gpu_s == 0);
  CHECK(b.all.violation_s == 0);
}

TEST_CASE("the baseline's strict FIFO leaves a VC below quota behind a big gang; kozmo runs the small one") {
  // A VC of 2 nodes: j0 8 GPUs 0..100; j1 16 GPUs at 10 waits for both nodes; j2 4 GPUs at 20.
  // Baseline: j2 waits behind j1 (the VC has 8 unused >= 4 from 20 to 100: 80 s of violation),
  // j1 runs 100..110, j2 at 110. Kozmo runs j2 at 20 beside j0; j1 starts at 100.
  const std::vector<vc_def> one{{"a", 2}};
  const std::vector<job> jobs{{0, 100, 8, 0}, {10, 10, 16, 0}, {20, 10, 4, 0}};
  const auto b = run_quota_baseline(one, jobs, window());
  CHECK(sorted(b.vcs[0].delays) == std::vector<double>{0, 90, 90});
  CHECK(b.all.violation_s == Approx(80));
  const auto k = run_kozmo(one, jobs, window(), overflow::none);
  CHECK(sorted(k.vcs[0].delays) == std::vector<double>{0, 0, 90});
  CHECK(k.all.violation_s == 0);
}

TEST_CASE("the trace reader keeps the window's jobs of known VCs and names a broken line") {
  std::string error;
  const auto vcs = parse_vcs("vc,node num\nab12,2\ncd34,1\n", &error);
  REQUIRE(error.empty());
  REQUIRE(vcs.size() == 2);
  std::int64_t from = 0, to = 0;
  REQUIRE(parse_time("2017-10-01", &from));
  REQUIRE(parse_time("2017-10-02 00:00:00", &to));
  CHECK(to - from == 86400);
  const auto t = parse_jobs("timestamp,duration,num_gpus,gpu_time,cluster\n"
                            "2017-10-01 00:00:10,60.0,12,720.0,ab12\n"
                            "2017-09-30 23:59:59,60.0,1,60.0,ab12\n"
                            "2017-10-01 00:00:05,60.0,1,60.0,zz99\n"
                            "2017-10-01 00:00:01,60.0,16,960.0,cd34\n"
                            "2017-10-01 00:00:00,0.0,1,0.0,cd34\n",
                            vcs, from, to);
  REQUIRE(t.error.empty());
  REQUIRE(t.jobs.size() == 1);
  CHECK(t.jobs[0].gpus == 12);
  CHECK(t.jobs[0].submit == from + 10);
  CHECK(t.outside_window == 1);
  CHECK(t.unmapped == 1);
  CHECK(t.too_large == 1);
  CHECK(t.zero_length == 1);

  const auto bad = parse_jobs("h\n2017-10-01 00:00:10,sixty,1,60,ab12\n", vcs, from, to);
  CHECK(bad.error.find("trace line 2") != std::string::npos);
  CHECK(parse_jobs("h\n2017-10-01 00:00:10,60,100000,60,ab12\n", vcs, from, to).error.find("line 2") !=
        std::string::npos);
  parse_vcs("vc,node num\nab12,0\n", &error);
  CHECK(error.find("VC list line 2") != std::string::npos);
  std::int64_t s = 0;
  CHECK_FALSE(parse_time("2017-02-29", &s));
  CHECK_FALSE(parse_time("2017-10-01 24:00:00", &s));
}

TEST_CASE("with borrowing, a's extra jobs run at once on idle nodes of others, given back at the reclaim timeout") {
  // j1 and j2 borrow idle nodes at 10 and 20 instead of waiting 90 and 80 s for a's node;
  // b's j3 at 30 finds its node lent to j1 and borrows c's idle node rather than wait; c's
  // 16-GPU j4 at 40 reclaims it: j3's pods go at 40 + 30 (it restarts at once on its own node,
  // which j1 left at 60) and j4 starts then, 30 s late: the sharing anomaly of the reclaim
  // timeout. With a timeout of 0 the reclaim is at once and nobody waits.
  const auto r = run_kozmo(three_vcs, five_jobs, window(), overflow::borrowing);
  CHECK(r.name == "kozmo+borrowing");
  CHECK(r.all.unfinished == 0);
  CHECK(sorted(r.vcs[0].delays) == std::vector<double>{0, 0, 0});
  CHECK(r.vcs[1].delays == std::vector<double>{0});
  CHECK(r.vcs[1].preemptions == 1);
  CHECK(r.vcs[2].delays == std::vector<double>{30});
  const auto alone = run_private(three_vcs, five_jobs, window());
  CHECK(sharing_anomalies(r, alone) == 1);
  auto at_once = window();
  at_once.reclaim_timeout_s = 0;
  const auto r0 = run_kozmo(three_vcs, five_jobs, at_once, overflow::borrowing);
  CHECK(r0.vcs[2].delays == std::vector<double>{0});
  CHECK(sharing_anomalies(r0, alone) == 0);
}
