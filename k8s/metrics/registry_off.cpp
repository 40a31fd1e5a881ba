// Built with -Dmetrics=disabled (or without prometheus-cpp): every handle does nothing.
#include "k8s/metrics/registry.hpp"

namespace kozmo::metrics {

bool enabled() { return false; }
std::string render() { return {}; }
void counter::inc(double) const {}
void gauge::set(double) const {}
void gauge::inc(double) const {}
void gauge::dec(double) const {}
void histogram::observe(double) const {}
counter counter_family::series(labels) const { return {}; }
counter_family counters(std::string_view, std::string_view) { return {}; }
gauge gauge_family::series(labels) const { return {}; }
gauge_family gauges(std::string_view, std::string_view) { return {}; }
histogram histogram_family::series(labels) const { return {}; }
histogram_family histograms(std::string_view, std::string_view, std::vector<double>) { return {}; }
gauge add_gauge(std::string_view, std::string_view) { return {}; }
histogram add_histogram(std::string_view, std::string_view, std::vector<double>) { return {}; }

} // namespace kozmo::metrics
