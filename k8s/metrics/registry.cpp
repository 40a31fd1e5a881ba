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

counter counter_family::series(labels values) const {
  auto l = label_map(values);
  auto& s = state();
  std::lock_guard lock(s.m);
  counter c;
  c.series_ = &static_cast<prometheus::Family<prometheus::Counter>*>(family_)->Add(l);
  return c;
}

counter_family counters(std::string_view name, std::string_view help) {
  auto& s = state();
  std::lock_guard lock(s.m);
  auto it = s.counters.find(name);
  if (it == s.counters.end())
    it = s.counters
             .emplace(std::string(name),
                      &prometheus::BuildCounter().Name(std::string(name)).Help(std::string(help)).Register(s.registry))
             .first;
  counter_family f;
  f.family_ = it->second;
  return f;
}

gauge gauge_family::series(labels values) const {
  auto l = label_map(values);
  auto& s = state();
  std::lock_guard lock(s.m);
  gauge g;
  g.series_ = &static_cast<prometheus::Family<prometheus::Gauge>*>(family_)->Add(l);
  return g;
}

gauge_family gauges(std::string_view name, std::string_view help) {
  auto& s = state();
  std::lock_guard lock(s.m);
  auto it = s.gauges.find(name);
  if (it == s.gauges.end())
    it = s.gauges
             .emplace(std::string(name),
                      &prometheus::BuildGauge().Name(std::string(name)).Help(std::string(help)).Register(s.registry))
             .first;
  gauge_family f;
  f.family_ = it->second;
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
