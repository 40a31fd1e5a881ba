#include "k8s/client/rate_limiter.hpp"

#include <algorithm>

namespace kozmo::client {

token_bucket::token_bucket(double qps, int burst, clock::time_point now)
    : qps_(qps), burst_(std::max(1, burst)), tokens_(burst_), last_(now) {}

double token_bucket::tokens(clock::time_point now) const {
  if (now <= last_) return tokens_;
  double elapsed = std::chrono::duration<double>(now - last_).count();
  return std::min(burst_, tokens_ + elapsed * qps_);
}

token_bucket::clock::duration token_bucket::reserve(clock::time_point now) {
  if (qps_ <= 0) return clock::duration::zero();
  tokens_ = tokens(now);
  last_ = std::max(last_, now);
  tokens_ -= 1;
  if (tokens_ >= 0) return clock::duration::zero();
  // The deficit is paid back at qps tokens per second.
  auto wait = std::chrono::duration<double>(-tokens_ / qps_);
  return std::chrono::duration_cast<clock::duration>(wait);
}

} // namespace kozmo::client
