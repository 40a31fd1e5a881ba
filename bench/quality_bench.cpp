// Placement quality on a public trace: the Microsoft Philly job log (Pollux's derivative with
// its VCs, ../shared/traces/philly-pollux/) replayed in simulated time through the pure
// scheduler core, beside a quota-only baseline, in one run on the same arrivals.
//
//   quality_bench [--trace philly|FILE.csv[.gz]] [--vcs FILE.csv] [--from YYYY-MM-DD] [--days N]
//                 [--scale S] [--rack-nodes N] [--shortcuts on|off] [--reserve-after SECONDS]
//                 [--reclaim-timeout SECONDS]
//
// Cluster: philly_vc.csv's 11 VCs with their 8-GPU nodes (352), racks of 8 nodes (44; the
// HiveD config has one cell type per level: GPU -> NODE -> RACK), each VC owning its nodes as
// RACK.NODE cells. The trace's VC hashes are the same as philly_vc.csv's for those 11; the
// other 4 hashes (18 jobs in all, 7 in the default window) are dropped and counted.
// Window: --from 2017-10-01 --days 61 (the Helios window, to 2017-11-30 inclusive).
// --scale S multiplies every job's duration (S > 1: a busier cluster). --shortcuts off runs the
// core without its counters and queueing hints (scheduler_options::shortcuts, the oracle tests'
// mode): the decisions must be the same, only slower. --reserve-after S sets the core's
// head-of-line reservation age (scheduler_options::reserve_after_ms; default 300 s, 0 = never).
//
// Policies (each on the same arrivals; quality_replay.hpp's notes define the figures):
//   kozmo                every job a guaranteed gang (priority 0) in its VC; a gang that does
//                        not fit waits in the core's queue (oldest first, no head-of-line
//                        blocking, reservation after 5 minutes)
//   kozmo+opportunistic  the same, but a job submitted while its VC's quota is taken (running
//                        plus waiting guaranteed GPUs + G > quota) goes in as opportunistic
//                        (priority -1), preemptible by guaranteed gangs; a preempted job
//                        restarts from zero (queued again, with the same rule)
//   kozmo+borrowing      kozmo with borrowing on (scheduler_core note 9): every VC lends all
//                        its idle nodes and may borrow any; a lender's gang takes a lent node
//                        back by preemption 30 s after it asks (--reclaim-timeout; the
//                        borrower restarts from zero)
//   quota-baseline       quality_baseline.cpp: scalar quota, strict FIFO per VC, GPUs anywhere
//   private              each VC alone on a cluster of its quota, the kozmo policy
#include "bench/quality_replay.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#ifndef KOZMO_SOURCE_ROOT
#define KOZMO_SOURCE_ROOT "."
#endif

using namespace kozmo::quality;

namespace {

int refuse(const std::string& why) {
  std::fprintf(stderr,
               "quality_bench: %s\n"
               "usage: quality_bench [--trace philly|FILE.csv[.gz]] [--vcs FILE.csv] [--from YYYY-MM-DD] [--days N]\n"
               "                     [--scale S] [--rack-nodes N] [--shortcuts on|off]\n"
               "                     [--reserve-after SECONDS] [--reclaim-timeout SECONDS]\n",
               why.c_str());
  return 2;
}

// The whole file; a .gz through gzip (Debian's essential set has it). False when unreadable.
bool read_text(const std::string& path, std::string* out) {
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) {
    std::ifstream probe(path);
    if (!probe) return false;
    const std::string command = "gzip -dc '" + path + "'";
    if (path.find('\'') != std::string::npos) return false;
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) return false;
    char buf[1 << 16];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out->append(buf, n);
    return pclose(pipe) == 0;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

bool read_number(const char* text, double lo, double hi, double* out) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(v) || v < lo || v > hi) return false;
  *out = v;
  return true;
}

} // namespace

int main(int argc, char** argv) {
  const std::string philly_dir = std::string(KOZMO_SOURCE_ROOT) + "/../shared/traces/philly-pollux/";
  std::string trace = "philly", vcs_path, from_text = "2017-10-01";
  double days = 61, scale = 1, rack = 8;
  bool shortcuts = true;
  double reserve_after = 300, reclaim = 30;
  for (int a = 1; a < argc; ++a) {
    const std::string flag = argv[a];
    if (a + 1 >= argc) return refuse(flag + " needs a value");
    const char* value = argv[++a];
    if (flag == "--trace") trace = value;
    else if (flag == "--vcs") vcs_path = value;
    else if (flag == "--from") from_text = value;
    else if (flag == "--days") {
      if (!read_number(value, 1, 366, &days) || days != std::floor(days))
        return refuse("--days must be a whole number of days from 1 to 366");
    } else if (flag == "--scale") {
      if (!read_number(value, 0.01, 100, &scale)) return refuse("--scale must be a number from 0.01 to 100");
    } else if (flag == "--shortcuts") {
      if (std::string(value) != "on" && std::string(value) != "off") return refuse("--shortcuts must be on or off");
      shortcuts = std::string(value) == "on";
    } else if (flag == "--reserve-after") {
      if (!read_number(value, 0, 86400, &reserve_after) || reserve_after != std::floor(reserve_after))
        return refuse("--reserve-after must be whole seconds from 0 (never) to 86400");
    } else if (flag == "--reclaim-timeout") {
      if (!read_number(value, 0, 86400, &reclaim) || reclaim != std::floor(reclaim))
        return refuse("--reclaim-timeout must be whole seconds from 0 (at once) to 86400");
    } else if (flag == "--rack-nodes") {
      if (!read_number(value, 1, 64, &rack) || rack != std::floor(rack))
        return refuse("--rack-nodes must be a whole number from 1 to 64");
    } else {
      return refuse("unknown option " + flag);
    }
  }
  std::int64_t from = 0;
  if (!parse_time(from_text, &from)) return refuse("--from must be a date YYYY-MM-DD");
  std::string trace_path = trace;
  if (trace == "philly") {
    trace_path = philly_dir + "philly.csv.gz";
    if (vcs_path.empty()) vcs_path = philly_dir + "philly_vc.csv";
  }
  if (vcs_path.empty()) return refuse("--vcs FILE is needed with a trace file (philly_vc.csv's format)");

  const auto wall = std::chrono::steady_clock::now();
  std::string vcs_text, trace_text, error;
  if (!read_text(vcs_path, &vcs_text)) return refuse("cannot read the VC list " + vcs_path);
  if (!read_text(trace_path, &trace_text)) return refuse("cannot read the trace " + trace_path);
  const auto vcs = parse_vcs(vcs_text, &error);
  if (!error.empty()) return refuse(error);
  replay_options o;
  o.from = from;
  o.to = from + static_cast<std::int64_t>(days) * 86400;
  o.scale = scale;
  o.rack_nodes = static_cast<int>(rack);
  o.shortcuts = shortcuts;
  o.reserve_after_s = static_cast<std::int64_t>(reserve_after);
  o.reclaim_timeout_s = static_cast<std::int64_t>(reclaim);
  const trace_result t = parse_jobs(trace_text, vcs, o.from, o.to);
  if (!t.error.empty()) return refuse(t.error);
  if (t.jobs.empty()) return refuse("no job of the trace falls in the window from " + from_text);

  int nodes = 0;
  for (const auto& v : vcs) nodes += v.nodes;
  std::printf("quality_bench: %s, %s + %d days, %zu jobs in %zu VCs on %d nodes x 8 GPUs; durations x %g\n",
              trace_path.c_str(), from_text.c_str(), static_cast<int>(days), t.jobs.size(), vcs.size(), nodes, scale);
  std::printf("dropped: %d of VCs not in the list, %d larger than their VC, %d of 0 GPUs or 0 s\n", t.unmapped,
              t.too_large, t.zero_length);
  std::fflush(stdout);

  std::vector<policy_result> results;
  auto timed = [&](auto run) {
    const auto start = std::chrono::steady_clock::now();
    results.push_back(run());
    results.back().wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  timed([&] { return run_kozmo(vcs, t.jobs, o, overflow::none); });
  timed([&] { return run_kozmo(vcs, t.jobs, o, overflow::opportunistic); });
  timed([&] { return run_kozmo(vcs, t.jobs, o, overflow::borrowing); });
  timed([&] { return run_quota_baseline(vcs, t.jobs, o); });
  timed([&] { return run_private(vcs, t.jobs, o); });
  std::fputs(format_table(vcs, results).c_str(), stdout);
  std::printf("wall time:");
  for (const auto& r : results) std::printf(" %s %.1f s,", r.name.c_str(), r.wall_s);
  std::printf(" total %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count());
  return 0;
}
