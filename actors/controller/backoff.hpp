// Exponential back-off for an actor that retries (a failed plan, a bind, a re-watch): the
// delay policy of k8s/client/retry.hpp with a count of failures in a row. Pure.
//
//   backoff b{{250ms, 30s}};           // base, cap
//   delayed_send(self, b.next(), ...);  // 250ms, 500ms, 1s, ... 30s, 30s
//   b.reset();                         // after a success
#pragma once

#include "k8s/client/retry.hpp"

#include <chrono>
#include <random>

namespace kozmo::controller {

class backoff {
public:
  // `jitter`: up to this fraction of the delay is added at random (0: none), so that many
  // actors failing together do not retry together.
  explicit backoff(std::chrono::milliseconds base, std::chrono::milliseconds cap, double jitter = 0)
      : policy_{base, cap, 0}, jitter_(jitter) {}

  // The delay before the next retry; counts one more failure.
  std::chrono::milliseconds next() {
    auto d = client::backoff_delay(policy_, failures_++, 0);
    if (jitter_ > 0)
      d += std::chrono::milliseconds(
          static_cast<std::chrono::milliseconds::rep>(static_cast<double>(d.count()) * jitter_ * unit_(rng_)));
    return d;
  }
  void reset() { failures_ = 0; }
  int failures() const { return failures_; }

private:
  client::backoff_policy policy_;
  double jitter_;
  int failures_ = 0;
  std::minstd_rand rng_{std::random_device{}()};
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
};

} // namespace kozmo::controller
