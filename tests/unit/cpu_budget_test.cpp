#include "runtime/cpu_budget.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>

using namespace kozmo::runtime;
namespace fs = std::filesystem;

namespace {

// A directory standing for the filesystem root; removed at the end.
struct fake_root {
  fs::path dir;
  fake_root() {
    dir = fs::temp_directory_path() / ("kozmo-cpu-budget-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir);
  }
  ~fake_root() { fs::remove_all(dir); }
  void write(const std::string& path, const std::string& text) {
    auto p = dir / fs::path(path).relative_path();
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
};

// What a pod's container sees with cgroup v2 and a cgroup namespace: its own cgroup at the root.
const char* v2_mountinfo = "24 30 0:22 / /proc rw,nosuid - proc proc rw\n"
                           "31 30 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw\n";

} // namespace

TEST_CASE("cgroup v2's cpu.max reads as CPUs, and 'max' as no limit") {
  CHECK(parse_cpu_max("150000 100000\n") == 1.5);
  CHECK(parse_cpu_max("50000 100000") == 0.5);
  CHECK_FALSE(parse_cpu_max("max 100000\n"));
  CHECK_FALSE(parse_cpu_max(""));
  CHECK_FALSE(parse_cpu_max("ten 100000"));
  CHECK_FALSE(parse_cpu_max("0 100000"));
}

TEST_CASE("cgroup v1's CFS quota reads as CPUs, and -1 as no limit") {
  CHECK(parse_cfs_quota("200000\n", "100000\n") == 2.0);
  CHECK_FALSE(parse_cfs_quota("-1\n", "100000\n"));
  CHECK_FALSE(parse_cfs_quota("", "100000"));
}

TEST_CASE("a container limited to 1.5 CPUs on a 64-core node runs 2 workers") {
  fake_root root;
  root.write("/sys/fs/cgroup/cpu.max", "150000 100000\n");
  auto b = budget_from(64, {"0::/\n", v2_mountinfo, root.dir.string()});
  REQUIRE(b.quota);
  CHECK(*b.quota == 1.5);
  CHECK(b.workers == 2);
  CHECK(b.quota_from == root.dir.string() + "/sys/fs/cgroup/cpu.max");
}

TEST_CASE("a quota below one CPU still gets one worker, and one above the affinity mask changes nothing") {
  fake_root root;
  root.write("/sys/fs/cgroup/cpu.max", "20000 100000\n");
  CHECK(budget_from(8, {"0::/\n", v2_mountinfo, root.dir.string()}).workers == 1);
  root.write("/sys/fs/cgroup/cpu.max", "800000 100000\n");
  CHECK(budget_from(2, {"0::/\n", v2_mountinfo, root.dir.string()}).workers == 2);
}

TEST_CASE("without a quota anywhere the affinity mask decides") {
  fake_root root;
  root.write("/sys/fs/cgroup/cpu.max", "max 100000\n");
  auto b = budget_from(6, {"0::/\n", v2_mountinfo, root.dir.string()});
  CHECK_FALSE(b.quota);
  CHECK(b.workers == 6);
  // No cgroup files at all (not Linux's /sys, or hidden): no quota either.
  CHECK(budget_from(3, {"", "", root.dir.string() + "/nowhere"}).workers == 3);
}

TEST_CASE("a quota on an ancestor cgroup limits the process below it (cgroup v2, no namespace)") {
  fake_root root;
  root.write("/sys/fs/cgroup/kubepods.slice/pod1/ctr/cpu.max", "max 100000\n");
  root.write("/sys/fs/cgroup/kubepods.slice/pod1/cpu.max", "300000 100000\n");
  root.write("/sys/fs/cgroup/kubepods.slice/cpu.max", "max 100000\n");
  auto b = budget_from(16, {"0::/kubepods.slice/pod1/ctr\n", v2_mountinfo, root.dir.string()});
  REQUIRE(b.quota);
  CHECK(*b.quota == 3.0);
  CHECK(b.workers == 3);
  CHECK(b.quota_from == root.dir.string() + "/sys/fs/cgroup/kubepods.slice/pod1/cpu.max");
}

TEST_CASE("cgroup v1: the cpu hierarchy's quota counts, wherever it is mounted and whatever its root") {
  fake_root root;
  // The cpu controller co-mounted with cpuacct, the container's own cgroup as the mount's root.
  std::string mountinfo =
      "40 30 0:35 /kubepods/pod2/ctr /sys/fs/cgroup/cpu,cpuacct ro,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
      "41 30 0:36 /kubepods/pod2/ctr /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,memory\n";
  std::string cgroups = "5:memory:/kubepods/pod2/ctr\n4:cpu,cpuacct:/kubepods/pod2/ctr\n";
  root.write("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "100000\n");
  root.write("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  root.write("/sys/fs/cgroup/memory/cpu.cfs_quota_us", "50000\n"); // not the cpu hierarchy
  root.write("/sys/fs/cgroup/memory/cpu.cfs_period_us", "100000\n");
  auto b = budget_from(4, {cgroups, mountinfo, root.dir.string()});
  REQUIRE(b.quota);
  CHECK(*b.quota == 1.0);
  CHECK(b.workers == 1);
}

TEST_CASE("a mount point with a space in it is read from mountinfo's escaped form") {
  fake_root root;
  root.write("/cg roups/cpu.max", "100000 100000\n");
  std::string mountinfo = "31 30 0:26 / /cg\\040roups rw - cgroup2 cgroup2 rw\n";
  CHECK(budget_from(4, {"0::/\n", mountinfo, root.dir.string()}).workers == 1);
}

TEST_CASE("the worker count: a host's request, then KOZMO_WORKERS, then the budget") {
  cpu_budget b;
  b.workers = 2;
  CHECK(*worker_count(0, nullptr, b) == 2);
  CHECK(*worker_count(0, "", b) == 2);
  CHECK(*worker_count(0, "6", b) == 6);
  CHECK(*worker_count(3, "6", b) == 3);
  auto negative = worker_count(-1, "6", b);
  REQUIRE_FALSE(negative);
  CHECK_THAT(negative.err().message, Catch::Contains("workers") && Catch::Contains("-1"));
  for (const char* bad : {"0", "-2", "two", "4x", "5000"}) {
    auto w = worker_count(0, bad, b);
    REQUIRE_FALSE(w);
    CHECK_THAT(w.err().message, Catch::Contains("KOZMO_WORKERS") && Catch::Contains(bad));
  }
}
