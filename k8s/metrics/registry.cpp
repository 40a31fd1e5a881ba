#include "k8s/metrics/registry.hpp"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <map>
#include <mutex>

namespace kozmo::metrics {
namespace {

struct histogram_entry {
  prometheus::Family<prometheus::Histogram>* family;
  prometheus::Histogram::BucketBoundaries bounds;
};

struct registry_state {
  prometheus::Registry registry;
  std::mutex m; // registration only; increments never take it
  std::map<std::string, prometheus::Family<prometheus::Counter>*, std::less<>> counters;
  std::map<std::string, prometheus::Family<prometheus::Gauge>*, std::less<>> gauges;
  std::map<std::string, histogram_entry*, std::less<>> histograms;
};

std::map<std::string, std::string> label_map(labels values) {
  std::map<std::string, std::string> l;
  for (const auto& [k, v] : values)
    l.emplace(k, v);
  return l;
}

registry_state& state() {
  // Never destroyed: actors and io threads may still count while static destructors run.
  static registry_state* r = new registry_state;
  return *r;
}

} // namespace

bool enabled() { return true; }

std::string render() { return prometheus::TextSerializer{}.Serialize(state().registry.Collect()); }

void counter::inc(double by) const { static_cast<prometheus::Counter*>(series_)->Increment(by); }

void gauge::set(double value) const { static_cast<prometheus::Gauge*>(series_)->Set(value); }
void gauge::inc(double by) const { static_cast<prometheus::Gauge*>(series_)->Increment(by); }
void gauge::dec(double by) const { static_cast<prometheus::Gauge*>(series_)->Decrement(by); }

void histogram::observe(double value) const { static_cast<prometheus::Histogram*>(series_)->Observe(value); }

namespace {

// A family's series for `values`, created on first use.
template <class Metric>
Metric* series_of(void* family, labels values) {
  auto l = label_map(values);
  auto& s = state();
  std::lock_guard lock(s.m);
  return &static_cast<prometheus::Family<Metric>*>(family)->Add(l);
}

// The family registered under `name` (once: later calls get the same one).
template <class Index, class Build>
void* family_of(Index& index, std::string_view name, std::string_view help, Build build) {
  auto& s = state();
  std::lock_guard lock(s.m);
  auto it = index.find(name);
  if (it == index.end())
    it = index.emplace(std::string(name), &build().Name(std::string(name)).Help(std::string(help)).Register(s.registry))
             .first;
  return it->second;
}

} // namespace

counter counter_family::series(labels values) const {
  counter c;
  c.series_ = series_of<prometheus::Counter>(family_, values);
  return c;
}

counter_family counters(std::string_view name, std::string_view help) {
  counter_family f;
  f.family_ = family_of(state().counters, name, help, [] { return prometheus::BuildCounter(); });
  return f;
}

gauge gauge_family::series(labels values) const {
  gauge g;
  g.series_ = series_of<prometheus::Gauge>(family_, values);
  return g;
}

gauge_family gauges(std::string_view name, std::string_view help) {
  gauge_family f;
  f.family_ = family_of(state().gauges, name, help, [] { return prometheus::BuildGauge(); });
  return f;
}

histogram histogram_family::series(labels values) const {
  auto l = label_map(values);
  auto& s = state();
  std::lock_guard lock(s.m);
  auto* e = static_cast<histogram_entry*>(family_);
  histogram h;
  h.series_ = &e->family->Add(l, e->bounds);
  return h;
}

histogram_family histograms(std::string_view name, std::string_view help, std::vector<double> bucket_bounds) {
  auto& s = state();
  std::lock_guard lock(s.m);
  auto it = s.histograms.find(name);
  if (it == s.histograms.end()) {
    auto* e = new histogram_entry{
        &prometheus::BuildHistogram().Name(std::string(name)).Help(std::string(help)).Register(s.registry),
        prometheus::Histogram::BucketBoundaries(bucket_bounds.begin(), bucket_bounds.end())};
    it = s.histograms.emplace(std::string(name), e).first;
  }
  histogram_family f;
  f.family_ = it->second;
  return f;
}

gauge add_gauge(std::string_view name, std::string_view help) {
  auto& s = state();
  std::lock_guard lock(s.m);
  gauge g;
  g.series_ = &prometheus::BuildGauge().Name(std::string(name)).Help(std::string(help)).Register(s.registry).Add({});
  return g;
}

histogram add_histogram(std::string_view name, std::string_view help, std::vector<double> bucket_bounds) {
  auto& s = state();
  std::lock_guard lock(s.m);
  histogram h;
  h.series_ = &prometheus::BuildHistogram()
                   .Name(std::string(name))
                   .Help(std::string(help))
                   .Register(s.registry)
                   .Add({}, prometheus::Histogram::BucketBoundaries(bucket_bounds.begin(), bucket_bounds.end()));
  return h;
}

} // namespace kozmo::metrics
