// When a failed request is tried again, and after how long. Pure: the client feeds in what
// happened and a random number, and schedules a timer for the answer.
//
// Rules (client-go's spirit, made explicit):
//  1. Retried failures: connection errors, 429 Too Many Requests, and 5xx except 501.
//  2. Idempotent methods (GET, HEAD, PUT, DELETE, OPTIONS) are retried on all of them.
//  3. Other methods (POST, PATCH) only when the request provably did not reach the server:
//     the connection was never established, or the server answered 429 (the API server's
//     flow control rejects before the handler runs).
//  4. A Retry-After header (seconds) on 429/5xx sets the delay; otherwise the delay is
//     base * 2^attempt, capped, plus up to 20% jitter.
//  5. TLS failures (bad certificate, rejected client certificate) are never retried: they do
//     not heal by themselves.
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>
#include <random>
#include <string_view>

namespace kozmo::client {

struct backoff_policy {
  std::chrono::milliseconds base{100};
  std::chrono::milliseconds cap{5000};
  int max_retries = 5;
};

// What went wrong on one attempt.
struct attempt_failure {
  enum class kind {
    not_sent,     // connect failed (refused, unreachable, timed out): the server saw nothing
    maybe_sent,   // the connection broke or timed out after the request was (partly) written
    http_status,  // the server answered with `status`
    permanent,    // TLS verification, bad config: retrying cannot help
  };
  kind what = kind::not_sent;
  int status = 0;
  std::optional<std::chrono::seconds> retry_after;
};

bool is_idempotent(std::string_view method);

// 429, or a 5xx other than 501 Not Implemented.
bool is_retryable_status(int status);

// Parses a Retry-After header given in seconds (HTTP dates are not used by Kubernetes).
std::optional<std::chrono::seconds> parse_retry_after(std::string_view header);

// The back-off before retry number `attempt` (0 for the first retry): base * 2^attempt, capped,
// plus up to 20 % jitter scaled by `random01` in [0, 1) (0: none).
inline std::chrono::milliseconds backoff_delay(const backoff_policy& p, int attempt, double random01) {
  std::chrono::milliseconds d = p.base;
  for (int i = 0; i < attempt && d < p.cap; ++i) d *= 2;
  d = std::min(d, p.cap);
  const double r = random01 < 0 ? 0 : random01 > 1 ? 1 : random01;
  return d + std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(static_cast<double>(d.count()) * 0.2 * r));
}

// The delay before retrying, or nullopt when the failure must be reported. `attempt` counts
// retries already made.
std::optional<std::chrono::milliseconds> retry_delay(const backoff_policy& p,
                                                     std::string_view method,
                                                     const attempt_failure& failure, int attempt,
                                                     double random01);

// The same exponential back-off with a count of failures in a row, for an actor that retries
// (a failed plan, a bind, a re-watch):
//
//   backoff b{250ms, 30s};             // base, cap
//   delayed_send(self, b.next(), ...);  // 250ms, 500ms, 1s, ... 30s, 30s
//   b.reset();                         // after a success
class backoff {
public:
  // `jitter`: up to this fraction of the delay is added at random (0: none), so that many
  // actors failing together do not retry together.
  backoff(std::chrono::milliseconds base, std::chrono::milliseconds cap, double jitter = 0)
      : policy_{base, cap, 0}, jitter_(jitter) {}

  // The delay before the next retry; counts one more failure.
  std::chrono::milliseconds next() {
    auto d = backoff_delay(policy_, failures_++, 0);
    if (jitter_ > 0 && !seeded_) {
      // Seeded at the first jittered retry, not at construction: one back-off per task actor, and
      // opening the random device for each showed in a burst's profile.
      rng_.seed(std::random_device{}());
      seeded_ = true;
    }
    if (jitter_ > 0)
      d += std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(
          static_cast<double>(d.count()) * jitter_ * std::uniform_real_distribution<double>(0, 1)(rng_)));
    return d;
  }
  void reset() { failures_ = 0; }
  int failures() const { return failures_; }

private:
  backoff_policy policy_;
  double jitter_;
  int failures_ = 0;
  bool seeded_ = false;
  std::minstd_rand rng_;
};

} // namespace kozmo::client
