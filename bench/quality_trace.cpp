// Reading the trace and the VC list, the cluster's configuration, and the table.
#include "bench/quality_replay.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>

namespace kozmo::quality {

namespace {

// Days from 1970-01-01 to y-m-d (proleptic Gregorian).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool read_int(std::string_view s, std::int64_t* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

std::vector<std::string_view> split(std::string_view line, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = line.find(sep, start);
    out.push_back(line.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

// Calls `each(line_number, line)` for every non-empty line after the header.
template <class Each>
void for_lines(std::string_view text, Each each) {
  std::size_t start = 0;
  int number = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++number;
    if (number > 1 && !line.empty() && !each(number, line)) return;
    start = end + 1;
  }
}

} // namespace

bool parse_time(std::string_view text, std::int64_t* seconds) {
  if (text.size() != 10 && text.size() != 19) return false;
  if (text[4] != '-' || text[7] != '-') return false;
  std::int64_t y, mo, d, h = 0, mi = 0, s = 0;
  if (!read_int(text.substr(0, 4), &y) || !read_int(text.substr(5, 2), &mo) || !read_int(text.substr(8, 2), &d))
    return false;
  if (text.size() == 19) {
    if (text[10] != ' ' || text[13] != ':' || text[16] != ':') return false;
    if (!read_int(text.substr(11, 2), &h) || !read_int(text.substr(14, 2), &mi) || !read_int(text.substr(17, 2), &s))
      return false;
  }
  static const int month_days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1 || d > month_days[mo - 1] || h > 23 || mi > 59 || s > 59) return false;
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (mo == 2 && d == 29 && !leap) return false;
  *seconds = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 + h * 3600 + mi * 60 + s;
  return true;
}

std::vector<vc_def> parse_vcs(std::string_view csv, std::string* error) {
  std::vector<vc_def> vcs;
  for_lines(csv, [&](int number, std::string_view line) {
    const auto fields = split(line, ',');
    std::int64_t nodes = 0;
    if (fields.size() != 2 || fields[0].empty() || !read_int(fields[1], &nodes) || nodes < 1 || nodes > 100000) {
      *error = "VC list line " + std::to_string(number) + ": expected \"name,nodes\" with 1..100000 nodes: " +
               std::string(line);
      return false;
    }
    for (const auto& v : vcs)
      if (v.name == fields[0]) {
        *error = "VC list line " + std::to_string(number) + ": VC " + v.name + " listed twice";
        return false;
      }
    vcs.push_back({std::string(fields[0]), static_cast<int>(nodes)});
    return true;
  });
  if (error->empty() && vcs.empty()) *error = "VC list: no VC";
  return vcs;
}

trace_result parse_jobs(std::string_view csv, const std::vector<vc_def>& vcs, std::int64_t from, std::int64_t to) {
  trace_result r;
  std::map<std::string_view, int> index;
  for (std::size_t v = 0; v < vcs.size(); ++v) index[vcs[v].name] = static_cast<int>(v);
  for_lines(csv, [&](int number, std::string_view line) {
    const auto f = split(line, ',');
    std::int64_t submit = 0;
    double duration = 0, gpus = 0;
    char* end = nullptr;
    bool ok = f.size() == 5 && parse_time(f[0], &submit);
    if (ok) {
      const std::string d(f[1]), g(f[2]);
      duration = std::strtod(d.c_str(), &end);
      ok = !d.empty() && *end == '\0' && std::isfinite(duration);
      gpus = std::strtod(g.c_str(), &end);
      ok = ok && !g.empty() && *end == '\0' && gpus == std::floor(gpus);
    }
    // A month of 8,192 GPUs at most: anything beyond is not a job, it is a broken line.
    if (!ok || duration < 0 || duration > 1e9 || gpus < 0 || gpus > 8192) {
      r.error = "trace line " + std::to_string(number) +
                ": expected \"YYYY-MM-DD HH:MM:SS,duration s,GPUs,GPU time,VC\": " + std::string(line);
      return false;
    }
    if (submit < from || submit >= to) {
      ++r.outside_window;
      return true;
    }
    const auto vc = index.find(f[4]);
    if (vc == index.end()) {
      ++r.unmapped;
      return true;
    }
    const int g = static_cast<int>(gpus);
    const auto length = static_cast<std::int64_t>(std::llround(duration));
    if (g == 0 || length == 0) {
      ++r.zero_length;
      return true;
    }
    if (g > vcs[static_cast<std::size_t>(vc->second)].nodes * 8) {
      ++r.too_large;
      return true;
    }
    r.jobs.push_back({submit, length, g, vc->second});
    return true;
  });
  std::stable_sort(r.jobs.begin(), r.jobs.end(), [](const job& a, const job& b) { return a.submit < b.submit; });
  return r;
}

std::string hived_config(const std::vector<vc_def>& vcs, int rack_nodes, std::int64_t reclaim_s) {
  const bool borrowing = reclaim_s >= 0;
  int nodes = 0;
  for (const auto& v : vcs) nodes += v.nodes;
  int rack = std::max(1, std::min(rack_nodes, nodes));
  while (nodes % rack != 0) --rack;
  std::string y = "physicalCluster:\n  cellTypes:\n"
                  "    NODE: {childCellType: GPU, childCellNumber: 8, isNodeLevel: true}\n"
                  "    RACK: {childCellType: NODE, childCellNumber: " + std::to_string(rack) + "}\n"
                  "  physicalCells:\n";
  for (int r = 0; r < nodes / rack; ++r) {
    y += "  - {cellType: RACK, cellChildren: [";
    for (int k = 0; k < rack; ++k) y += (k ? ", {cellAddress: n" : "{cellAddress: n") + std::to_string(r * rack + k) + "}";
    y += "]}\n";
  }
  if (borrowing) y += "borrowing: {enabled: true, reclaimTimeout: " + std::to_string(reclaim_s) + "s}\n";
  y += "virtualClusters:\n";
  for (const auto& v : vcs) {
    y += "  vc-" + v.name + ":\n    virtualCells: [{cellType: RACK.NODE, cellNumber: " + std::to_string(v.nodes) + "}]\n";
    if (borrowing)
      y += "    lendingLimit: {NODE: " + std::to_string(v.nodes) + "}\n    borrowingLimit: {NODE: " +
           std::to_string(nodes) + "}\n";
  }
  return y;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(values.size())));
  rank = std::clamp<std::size_t>(rank, 1, values.size());
  return values[rank - 1];
}

int sharing_anomalies(const policy_result& shared, const policy_result& alone) {
  int n = 0;
  for (std::size_t v = 0; v < shared.vcs.size() && v < alone.vcs.size(); ++v) {
    const auto& s = shared.vcs[v].delays;
    const auto& a = alone.vcs[v].delays;
    if (percentile(s, 0.5) > percentile(a, 0.5) || percentile(s, 0.95) > percentile(a, 0.95)) ++n;
  }
  return n;
}

std::string format_table(const std::vector<vc_def>& vcs, const std::vector<policy_result>& results) {
  const policy_result* alone = nullptr;
  for (const auto& r : results)
    if (r.name == "private") alone = &r;
  std::string out;
  char line[320];
  std::snprintf(line, sizeof line, "%-7s %5s %-19s %6s %9s %9s %6s %9s %9s %7s %9s %9s  %s\n", "vc", "GPUs", "policy",
                "jobs", "wait p50", "wait p95", "util%", "frag GPUs", "viol VC-h", "preempt", "wasted GPU-h", "scattered",
                "vs private (p50/p95)");
  out += line;
  for (std::size_t v = 0; v <= vcs.size(); ++v) {
    const bool all = v == vcs.size();
    for (const auto& r : results) {
      const vc_figures& f = all ? r.all : r.vcs[v];
      const double gpus = all ? r.total_gpus : r.quota_gpus[v];
      const double p50 = percentile(f.delays, 0.5), p95 = percentile(f.delays, 0.95);
      std::string versus;
      if (alone && &r != alone && r.name.rfind("kozmo", 0) == 0 && !all) {
        const double a50 = percentile(alone->vcs[v].delays, 0.5), a95 = percentile(alone->vcs[v].delays, 0.95);
        char buf[96];
        std::snprintf(buf, sizeof buf, "%.0f/%.0f%s", a50, a95, p50 > a50 || p95 > a95 ? "  ANOMALY" : "");
        versus = buf;
      }
      std::snprintf(line, sizeof line, "%-7s %5.0f %-19s %6d %9.0f %9.0f %6.1f %9.2f %9.1f %7d %12.1f %9d  %s%s\n",
                    all ? "all" : vcs[v].name.c_str(), gpus, r.name.c_str(), f.jobs, p50, p95,
                    r.window_s > 0 ? 100.0 * f.busy_gpu_s / (gpus * r.window_s) : 0.0,
                    r.window_s > 0 ? f.fragmented_gpu_s / r.window_s : 0.0, f.violation_s / 3600, f.preemptions,
                    f.wasted_gpu_s / 3600, f.scattered, versus.c_str(),
                    f.unfinished ? ("  (" + std::to_string(f.unfinished) + " never ran)").c_str() : "");
      out += line;
    }
  }
  if (alone)
    for (const auto& r : results)
      if (&r != alone && r.name.rfind("kozmo", 0) == 0)
        out += "sharing anomalies (" + r.name + " worse than private at p50 or p95): " +
               std::to_string(sharing_anomalies(r, *alone)) + " of " + std::to_string(vcs.size()) + " VCs\n";
  return out;
}

} // namespace kozmo::quality
