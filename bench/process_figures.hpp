// What an in-process bench reads of its own process: CPU seconds, the API requests its clients
// made (kozmo_client_requests_total), any metric family's sum, and perf's control FIFO.
#pragma once

#include "k8s/metrics/registry.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include <unistd.h>

namespace kozmo::bench {

// CPU seconds this process has used (user + system): the server, the controllers and the
// kubelets all run in it.
inline double cpu_seconds() {
  std::ifstream stat("/proc/self/stat");
  std::string field;
  double ticks = 0;
  for (int i = 1; i <= 15 && stat >> field; ++i)
    if (i == 14 || i == 15)
      ticks += std::strtod(field.c_str(), nullptr);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The API requests every client of the process has made so far, by "METHOD code" (the
// kozmo_client_requests_total series): each costs the embedded server and a client alike.
inline std::map<std::string, double> requests_so_far() {
  const std::string series = "\nkozmo_client_requests_total{";
  const std::string text = metrics::render();
  std::map<std::string, double> out;
  for (auto at = text.find(series); at != std::string::npos; at = text.find(series, at + 1)) {
    const auto close = text.find("} ", at);
    if (close == std::string::npos)
      break;
    const std::string labels = text.substr(at + series.size(), close - at - series.size());
    auto label = [&](const std::string& name) {
      const auto from = labels.find(name + "=\"");
      if (from == std::string::npos)
        return std::string();
      const auto begin = from + name.size() + 2;
      return labels.substr(begin, labels.find('"', begin) - begin);
    };
    out[label("method") + " " + label("code")] += std::strtod(text.c_str() + close + 2, nullptr);
  }
  return out;
}

// The sum of a metric family's series whose labels hold `labels` (e.g. controller="trainjob").
inline double metric_sum(const std::string& family, const std::string& labels) {
  const std::string text = metrics::render();
  const std::string head = "\n" + family + "{";
  double sum = 0;
  for (auto at = text.find(head); at != std::string::npos; at = text.find(head, at + 1)) {
    const auto close = text.find("} ", at);
    if (close == std::string::npos)
      break;
    if (text.substr(at, close - at).find(labels) != std::string::npos)
      sum += std::strtod(text.c_str() + close + 2, nullptr);
  }
  return sum;
}

// "POST 2xx 4.00, PATCH 2xx 3.12, ..." per job, the series that moved between `before` and `after`.
inline std::string requests_per_job(const std::map<std::string, double>& before, const std::map<std::string, double>& after,
                             int jobs, double& total) {
  std::string out;
  total = 0;
  for (const auto& [key, value] : after) {
    const auto it = before.find(key);
    const double delta = value - (it == before.end() ? 0 : it->second);
    if (delta <= 0)
      continue;
    total += delta;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s %.2f", out.empty() ? "" : ", ", key.c_str(), delta / jobs);
    out += buf;
  }
  return out;
}

// KOZMO_BENCH_PERF_CTL=FIFO: perf's control FIFO (`perf record -D -1 --control fifo:FIFO`), told
// to enable around each measured window only, so a profile holds neither start-up nor teardown.
inline void perf_control(const char* command) {
  static const char* fifo = std::getenv("KOZMO_BENCH_PERF_CTL");
  if (!fifo)
    return;
  std::ofstream ctl(fifo);
  ctl << command << "\n" << std::flush;
}

} // namespace kozmo::bench
