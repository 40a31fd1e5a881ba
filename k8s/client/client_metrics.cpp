#include "k8s/client/client_metrics.hpp"

#include "k8s/metrics/registry.hpp"

#include <array>
#include <map>
#include <mutex>
#include <string>

namespace kozmo::client {
namespace {

constexpr std::array<std::string_view, 5> methods{"GET", "POST", "PUT", "PATCH", "DELETE"};
constexpr std::array<std::string_view, 5> codes{"2xx", "3xx", "4xx", "5xx", "error"};

// Every series created at once, so a scrape shows them all (at zero) from the start.
struct client_metrics {
  // [method (methods..., other)][code]
  std::array<std::array<metrics::counter, codes.size()>, methods.size() + 1> requests{};

  client_metrics() {
    auto family = metrics::counters("kozmo_client_requests_total",
                                    "Kubernetes API requests (each attempt), by HTTP method and status class");
    for (std::size_t m = 0; m <= methods.size(); ++m)
      for (std::size_t c = 0; c < codes.size(); ++c)
        requests[m][c] = family.series({{"method", m < methods.size() ? methods[m] : "other"}, {"code", codes[c]}});
  }
};

// The rest_client_* series met so far, by their label values joined (a few dozen at most: HTTP
// statuses seen times methods times API servers).
struct rest_client_metrics {
  metrics::counter_family requests = metrics::counters(
      "rest_client_requests_total", "Number of HTTP requests, partitioned by status code, method, and host");
  metrics::histogram_family duration = metrics::histograms(
      "rest_client_request_duration_seconds", "Request latency in seconds, broken down by verb and host",
      {0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60});
  metrics::counter_family relists =
      metrics::counters("kozmo_watch_relists_total", "Watches that relisted after their resourceVersion expired (410 Gone)");
  std::mutex m;
  std::map<std::string, metrics::counter, std::less<>> counters;
  std::map<std::string, metrics::histogram, std::less<>> histograms;
};

rest_client_metrics& rest() {
  static rest_client_metrics* m = new rest_client_metrics;
  return *m;
}

client_metrics& get() {
  static client_metrics* m = new client_metrics;
  return *m;
}

// Registered at start-up, so the first scrape already lists them.
[[maybe_unused]] const bool registered = (get(), rest(), true);

} // namespace

void count_request(std::string_view method, int status) {
  std::size_t m = 0;
  while (m < methods.size() && methods[m] != method)
    ++m;
  std::size_t c = status >= 200 && status < 600 ? static_cast<std::size_t>(status / 100 - 2) : codes.size() - 1;
  get().requests[m][c].inc();
}

void observe_request(std::string_view host, std::string_view method, int status, double seconds) {
  std::string_view known = "other";
  for (auto m : methods)
    if (m == method)
      known = m;
  std::string code = status >= 100 && status < 600 ? std::to_string(status) : "<error>";
  auto& r = rest();
  std::string key = code;
  key.append(" ").append(known).append(" ").append(host);
  std::lock_guard lock(r.m);
  auto c = r.counters.find(key);
  if (c == r.counters.end())
    c = r.counters.emplace(key, r.requests.series({{"code", code}, {"method", known}, {"host", host}})).first;
  c->second.inc();
  key.assign(known).append(" ").append(host);
  auto h = r.histograms.find(key);
  if (h == r.histograms.end())
    h = r.histograms.emplace(key, r.duration.series({{"verb", known}, {"host", host}})).first;
  h->second.observe(seconds);
}

void count_relist(std::string_view resource) { rest().relists.series({{"resource", resource}}).inc(); }

} // namespace kozmo::client
