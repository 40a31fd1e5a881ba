// Kozmo's Prometheus metrics: one process-wide registry, served as text at GET /metrics by the
// embedded API server (`kozmo local`) and by the extender. Each area owns its families and
// registers them itself (k8s/client/client_metrics.cpp, actors/<area>/<area>_metrics.cpp);
// this header knows none of them.
//
//   // in an area's metrics file, once:
//   const auto binds = metrics::counters("kozmo_cellgroup_binds_total", "Pod bindings ...");
//   metrics::counter succeeded = binds.series({{"outcome", "succeeded"}});
//   // on the hot path: an atomic add, no lookup by name
//   succeeded.inc();
//   std::string text = metrics::render(); // Prometheus text exposition, format 0.0.4
//
// Handles are cheap to copy and never dangle (the registry lives as long as the process).
// prometheus-cpp stays inside registry.cpp; built with -Dmetrics=disabled every handle does
// nothing and render() returns "".
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kozmo::metrics {

// The Content-Type of render()'s text.
inline constexpr const char* content_type = "text/plain; version=0.0.4; charset=utf-8";

// False when built without prometheus-cpp.
bool enabled();

// The text exposition of every family registered so far.
std::string render();

using labels = std::initializer_list<std::pair<std::string_view, std::string_view>>;

class counter {
public:
  void inc(double by = 1) const;

private:
  friend class counter_family;
  void* series_ = nullptr;
};

class gauge {
public:
  void set(double value) const;
  void inc(double by = 1) const;
  void dec(double by = 1) const;

private:
  friend gauge add_gauge(std::string_view, std::string_view);
  friend class gauge_family;
  void* series_ = nullptr;
};

class histogram {
public:
  void observe(double value) const;

private:
  friend histogram add_histogram(std::string_view, std::string_view, std::vector<double>);
  friend class histogram_family;
  void* series_ = nullptr;
};

class counter_family {
public:
  // The series with these label values (created at zero on the first call).
  counter series(labels values) const;

private:
  friend counter_family counters(std::string_view, std::string_view);
  void* family_ = nullptr;
};

class gauge_family {
public:
  // The series with these label values (created at zero on the first call).
  gauge series(labels values) const;

private:
  friend gauge_family gauges(std::string_view, std::string_view);
  void* family_ = nullptr;
};

class histogram_family {
public:
  // The series with these label values (created empty on the first call).
  histogram series(labels values) const;

private:
  friend histogram_family histograms(std::string_view, std::string_view, std::vector<double>);
  void* family_ = nullptr;
};

// Register a family; registering a name twice returns the same family (a histogram keeps the
// bucket bounds it was first registered with).
counter_family counters(std::string_view name, std::string_view help);
gauge_family gauges(std::string_view name, std::string_view help);
histogram_family histograms(std::string_view name, std::string_view help, std::vector<double> bucket_bounds);

// One object's place in a gauge family that counts objects by state (training jobs by kind and
// phase, tasks by phase): it adds 1 to the series of its current labels, moves when they change,
// and takes its 1 away when destroyed (the actor that owns it stopped). Not thread-safe: one
// owner. Label values are compared, so calling move_to on every pass costs no registry lookup.
class gauge_slot {
public:
  gauge_slot() = default;
  gauge_slot(const gauge_slot&) = delete;
  gauge_slot& operator=(const gauge_slot&) = delete;
  ~gauge_slot() { leave(); }

  void move_to(const gauge_family& family, labels values);
  void leave();

private:
  gauge held_;
  bool holding_ = false;
  std::string key_; // the label values held, joined
};

// A family with the two series {outcome="succeeded"} and {outcome="failed"}.
struct outcome_counters {
  counter succeeded;
  counter failed;
  outcome_counters(std::string_view name, std::string_view help)
      : succeeded(counters(name, help).series({{"outcome", "succeeded"}})),
        failed(counters(name, help).series({{"outcome", "failed"}})) {}
  void count(bool ok) const { (ok ? succeeded : failed).inc(); }
};
// A gauge or histogram without labels.
gauge add_gauge(std::string_view name, std::string_view help);
histogram add_histogram(std::string_view name, std::string_view help, std::vector<double> bucket_bounds);

} // namespace kozmo::metrics
