#include "k8s/client/client_metrics.hpp"

#include "k8s/metrics/registry.hpp"

#include <array>
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

client_metrics& get() {
  static client_metrics* m = new client_metrics;
  return *m;
}

// Registered at start-up, so the first scrape already lists them.
[[maybe_unused]] const bool registered = (get(), true);

} // namespace

void count_request(std::string_view method, int status) {
  std::size_t m = 0;
  while (m < methods.size() && methods[m] != method)
    ++m;
  std::size_t c = status >= 200 && status < 600 ? static_cast<std::size_t>(status / 100 - 2) : codes.size() - 1;
  get().requests[m][c].inc();
}

} // namespace kozmo::client
