#include "k8s/client/retry.hpp"

#include <algorithm>
#include <charconv>

namespace kozmo::client {

bool is_idempotent(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE" ||
         method == "OPTIONS";
}

bool is_retryable_status(int status) {
  return status == 429 || (status >= 500 && status != 501 && status < 600);
}

std::optional<std::chrono::seconds> parse_retry_after(std::string_view header) {
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  while (!header.empty() && header.back() == ' ') header.remove_suffix(1);
  if (header.empty()) return std::nullopt;
  long long secs = 0;
  auto [end, ec] = std::from_chars(header.data(), header.data() + header.size(), secs);
  if (ec != std::errc{} || end != header.data() + header.size() || secs < 0)
    return std::nullopt;
  return std::chrono::seconds(secs);
}

std::optional<std::chrono::milliseconds> retry_delay(const backoff_policy& p,
                                                     std::string_view method,
                                                     const attempt_failure& failure, int attempt,
                                                     double random01) {
  using kind = attempt_failure::kind;
  if (attempt >= p.max_retries) return std::nullopt;
  bool idempotent = is_idempotent(method);
  switch (failure.what) {
    case kind::permanent:
      return std::nullopt;
    case kind::not_sent:
      break;
    case kind::maybe_sent:
      if (!idempotent) return std::nullopt;
      break;
    case kind::http_status:
      if (!is_retryable_status(failure.status)) return std::nullopt;
      if (!idempotent && failure.status != 429) return std::nullopt;
      if (failure.retry_after) {
        // A server asking for minutes is better answered with an error than a hung caller.
        auto capped = std::min(*failure.retry_after, std::chrono::seconds(60));
        return std::chrono::duration_cast<std::chrono::milliseconds>(capped);
      }
      break;
  }
  return backoff_delay(p, attempt, random01);
}

} // namespace kozmo::client
