// Client-side rate limit: a token bucket like client-go's (golang.org/x/time/rate). It starts
// full with `burst` tokens and refills at `qps` tokens per second. A caller reserves a token
// and waits the returned delay before sending; reservations may borrow from the future, so
// callers queue up fairly without polling. Time is passed in, so tests need no clock.
//
// Not thread-safe: the client uses it from its io thread only.
#pragma once

#include <chrono>

namespace kozmo::client {

class token_bucket {
public:
  using clock = std::chrono::steady_clock;

  // qps <= 0 means unlimited: reserve() always returns zero.
  token_bucket(double qps, int burst, clock::time_point now);

  // Takes one token and returns how long to wait before using it (zero when one was free).
  clock::duration reserve(clock::time_point now);

  // Tokens available at `now` (negative when reservations are queued); for tests and metrics.
  double tokens(clock::time_point now) const;

private:
  double qps_;
  double burst_;
  double tokens_;
  clock::time_point last_;
};

} // namespace kozmo::client
