// Hand-offs from the client's io thread to the test thread. The timeouts are guards against
// a hung test, never assertions about speed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace kozmo::test {

constexpr auto guard_timeout = std::chrono::seconds(20);

template <class T>
class mailbox {
public:
  // Notifies under the lock: the taker may destroy the mailbox as soon as it has the item,
  // so put() must not touch it after unlocking.
  void put(T v) {
    std::lock_guard lk(mu_);
    items_.push_back(std::move(v));
    cv_.notify_all();
  }
  // The next item, or nullopt when none came within the guard timeout.
  std::optional<T> take() {
    std::unique_lock lk(mu_);
    if (!cv_.wait_for(lk, guard_timeout, [&] { return !items_.empty(); })) return std::nullopt;
    T v = std::move(items_.front());
    items_.pop_front();
    return v;
  }
  std::size_t size() const {
    std::lock_guard lk(mu_);
    return items_.size();
  }

private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> items_;
};

} // namespace kozmo::test
