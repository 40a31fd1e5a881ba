#include "runtime/cpu_budget.hpp"

#include "runtime/config_file.hpp"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

namespace kozmo::runtime {
namespace {

std::string_view trim(std::string_view s) {
  constexpr std::string_view blanks = " \t\r\n";
  auto first = s.find_first_not_of(blanks);
  if (first == std::string_view::npos)
    return {};
  return s.substr(first, s.find_last_not_of(blanks) - first + 1);
}

std::optional<long long> to_integer(std::string_view s) {
  s = trim(s);
  long long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
  return v;
}

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  while (true) {
    line = trim(line);
    if (line.empty())
      return out;
    auto sp = line.find(' ');
    out.push_back(line.substr(0, sp));
    if (sp == std::string_view::npos)
      return out;
    line.remove_prefix(sp);
  }
}

std::vector<std::string_view> lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    auto nl = text.find('\n');
    out.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos)
      break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

// mountinfo writes a space, tab, newline or backslash in a path as \ooo.
std::string unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      auto d = s.substr(i + 1, 3);
      if (std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out.push_back(static_cast<char>((d[0] - '0') * 64 + (d[1] - '0') * 8 + (d[2] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

// Whether a comma-separated list holds `item`.
bool has_item(std::string_view list, std::string_view item) {
  while (true) {
    auto comma = list.find(',');
    if (list.substr(0, comma) == item)
      return true;
    if (comma == std::string_view::npos)
      return false;
    list.remove_prefix(comma + 1);
  }
}

// A cgroup file's text; "" when it cannot be read (absent: no limit there).
std::string text_of(const std::string& path) {
  auto text = read_file(path);
  return text ? std::move(*text) : std::string();
}

struct mount {
  std::string root;  // the part of the hierarchy mounted
  std::string point; // where
};

// The cgroup2 mount, and the v1 mount that carries the cpu controller.
struct mounts {
  std::optional<mount> v2;
  std::optional<mount> v1_cpu;
};

mounts parse_mountinfo(std::string_view text) {
  mounts out;
  for (auto line : lines(text)) {
    auto f = fields(line);
    auto dash = std::find(f.begin(), f.end(), std::string_view("-"));
    if (f.size() < 5 || dash == f.end() || dash + 1 == f.end())
      continue;
    std::string_view type = *(dash + 1);
    mount m{unescape(f[3]), unescape(f[4])};
    if (type == "cgroup2") {
      if (!out.v2)
        out.v2 = std::move(m);
    } else if (type == "cgroup" && f.end() - dash > 3 && !out.v1_cpu) {
      // the super options name the controllers: rw,cpu,cpuacct
      if (has_item(*(dash + 3), "cpu"))
        out.v1_cpu = std::move(m);
    }
  }
  return out;
}

// The directories from `path` (a cgroup path as /proc/self/cgroup gives it) up to the mount's
// root, translated under the mount point; empty when the path is not below the mount's root.
std::vector<std::string> dirs_up(const mount& m, std::string path, const std::string& prefix) {
  std::vector<std::string> out;
  std::string root = m.root == "/" ? "" : m.root;
  if (path.compare(0, root.size(), root) != 0)
    return out;
  std::string rel = path.substr(root.size());
  if (!rel.empty() && rel.front() != '/')
    return out; // "/kubepods2" is not below "/kubepods"
  while (!rel.empty() && rel.back() == '/')
    rel.pop_back();
  while (true) {
    std::string dir = prefix + m.point + rel;
    out.push_back(dir);
    if (rel.empty())
      break;
    auto slash = rel.rfind('/');
    rel = slash == std::string::npos ? std::string() : rel.substr(0, slash);
  }
  return out;
}

void keep_tighter(cpu_budget& b, std::optional<double> q, const std::string& from) {
  if (q && (!b.quota || *q < *b.quota)) {
    b.quota = q;
    b.quota_from = from;
  }
}

} // namespace

std::optional<double> parse_cpu_max(std::string_view text) {
  auto f = fields(trim(text));
  if (f.empty() || f[0] == "max")
    return std::nullopt;
  auto quota = to_integer(f[0]);
  auto period = f.size() > 1 ? to_integer(f[1]) : std::optional<long long>(100000);
  if (!quota || !period || *quota <= 0 || *period <= 0)
    return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

std::optional<double> parse_cfs_quota(std::string_view quota_us, std::string_view period_us) {
  auto quota = to_integer(quota_us);
  auto period = to_integer(period_us);
  if (!quota || !period || *quota <= 0 || *period <= 0)
    return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

cpu_budget budget_from(unsigned affinity, const cgroup_sources& src) {
  cpu_budget b;
  b.affinity = std::max(1u, affinity);
  auto m = parse_mountinfo(src.mountinfo);
  for (auto line : lines(src.proc_self_cgroup)) {
    // hierarchy-ID:controllers:path
    auto c1 = line.find(':');
    auto c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos)
      continue;
    std::string_view id = line.substr(0, c1);
    std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
    std::string path(trim(line.substr(c2 + 1)));
    if (id == "0" && controllers.empty() && m.v2) {
      for (const auto& dir : dirs_up(*m.v2, path, src.fs_prefix))
        keep_tighter(b, parse_cpu_max(text_of(dir + "/cpu.max")), dir + "/cpu.max");
      continue;
    }
    if (has_item(controllers, "cpu") && m.v1_cpu)
      for (const auto& dir : dirs_up(*m.v1_cpu, path, src.fs_prefix))
        keep_tighter(b, parse_cfs_quota(text_of(dir + "/cpu.cfs_quota_us"), text_of(dir + "/cpu.cfs_period_us")),
                     dir + "/cpu.cfs_quota_us");
  }
  unsigned workers = b.affinity;
  if (b.quota)
    workers = std::min(workers, static_cast<unsigned>(std::ceil(*b.quota)));
  b.workers = std::max(1u, workers);
  return b;
}

cpu_budget current_cpu_budget() {
  unsigned affinity = 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    affinity = static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
  return budget_from(affinity, {text_of("/proc/self/cgroup"), text_of("/proc/self/mountinfo"), ""});
}

expected<unsigned> worker_count(int requested, const char* env_value, const cpu_budget& budget) {
  if (requested < 0 || requested > 1024)
    return error::bad_request("workers: want 0 (one per CPU this process may use) or a whole number up to 1024, got " +
                              std::to_string(requested));
  if (requested > 0)
    return static_cast<unsigned>(requested);
  if (env_value && *env_value) {
    auto v = to_integer(env_value);
    if (!v || *v <= 0 || *v > 1024)
      return error::bad_request(std::string("KOZMO_WORKERS: want a whole number of worker threads from 1 to 1024, got \"") +
                                env_value + "\"");
    return static_cast<unsigned>(*v);
  }
  return budget.workers;
}

} // namespace kozmo::runtime
