// How many CPUs this process may use, and so how many actor worker threads it runs: the CPUs of
// its affinity mask (taskset, a cpuset), capped by a CFS quota on its cgroup or any ancestor
// (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`: a container's CPU limit),
// rounded up. A container limited to 1 CPU on a 64-core node otherwise gets 64 workers that the
// quota throttles. Pure parsing plus one reader that takes the files' places as arguments.
#pragma once

#include "k8s/error.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace kozmo::runtime {

// cgroup v2 `cpu.max` ("$MAX $PERIOD"): CPUs as a fraction; nullopt for "max" (no limit) or text
// that is not a quota.
std::optional<double> parse_cpu_max(std::string_view text);
// cgroup v1: cpu.cfs_quota_us (-1: no limit) over cpu.cfs_period_us.
std::optional<double> parse_cfs_quota(std::string_view quota_us, std::string_view period_us);

struct cpu_budget {
  unsigned affinity = 1;       // CPUs in the affinity mask
  std::optional<double> quota; // the tightest CFS quota found, in CPUs
  std::string quota_from;      // the file it came from
  unsigned workers = 1;        // max(1, min(affinity, ceil(quota)))
};

// Where the files are: the text of /proc/self/cgroup and /proc/self/mountinfo, and a prefix put
// before every cgroup path read (tests point it at a directory of their own).
struct cgroup_sources {
  std::string proc_self_cgroup;
  std::string mountinfo;
  std::string fs_prefix;
};

// The budget from `affinity` CPUs and the quotas the sources show. Unreadable or absent files
// mean no quota.
cpu_budget budget_from(unsigned affinity, const cgroup_sources& src);

// This process's budget (sched_getaffinity, /proc/self/cgroup, /proc/self/mountinfo).
cpu_budget current_cpu_budget();

// The worker count to run: `requested` when positive, else $KOZMO_WORKERS when set (a positive
// integer, or an error naming the variable), else the budget's.
expected<unsigned> worker_count(int requested, const char* env_value, const cpu_budget& budget);

} // namespace kozmo::runtime
