// Time as Kozmo's actors read it, behind an interface so that a test can set it. Wall-clock
// time, because what it is compared with comes from the API server (startTime, the
// creationTimestamp of a pod, an Event's lastTimestamp).
//
// Actors keep a `std::shared_ptr<const clock>` from their configuration (the system clock
// when none is given) and never call std::chrono::system_clock::now() themselves. A test
// with CAF's test coordinator advances a manual_clock by the same step as the coordinator's
// timers, so "an hour later" takes no time at all.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

namespace kozmo::controller {

class clock {
public:
  using time_point = std::chrono::system_clock::time_point;
  virtual ~clock() = default;
  virtual time_point now() const = 0;

  // Milliseconds since the epoch (the scheduler core's unit).
  std::int64_t now_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(now().time_since_epoch()).count();
  }
};

class system_clock final : public clock {
public:
  time_point now() const override { return std::chrono::system_clock::now(); }
};

// The process's real clock.
inline std::shared_ptr<const clock> real_clock() {
  static const auto c = std::make_shared<const system_clock>();
  return c;
}

// A clock that moves only when told to. Thread-safe.
class manual_clock final : public clock {
public:
  explicit manual_clock(time_point start = std::chrono::system_clock::now()) : at_(start.time_since_epoch().count()) {}
  time_point now() const override { return time_point(time_point::duration(at_.load())); }
  void advance(std::chrono::system_clock::duration d) { at_ += d.count(); }
  void set(time_point t) { at_ = t.time_since_epoch().count(); }

private:
  std::atomic<time_point::rep> at_;
};

} // namespace kozmo::controller
