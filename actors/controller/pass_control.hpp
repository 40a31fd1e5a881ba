// When a controller actor runs its pass (training's reconcile, a task's round): after each batch
// of events, one at a time, never while a plan of its is with the executor, and at the time its
// core asks to look again. The bookkeeping every such actor needs, in one place; the actor keeps
// only the sending. Pure: no CAF, no clock.
//
//   on an event:          if (pc.request()) send(self, pass_atom)
//   on pass_atom:         if (!pc.begin()) return;  ... run the core ...
//                         if (auto gen = pc.wake(result.wake_at)) delayed_send(wake_atom, *gen)
//                         pc.plan_sent();  request(executor, plan) ...
//   on the plan's answer: if (pc.plan_done()) send(self, pass_atom)
//   on (wake_atom, gen):  if (pc.woke(gen) && pc.request()) send(self, pass_atom)
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

namespace kozmo::controller {

class pass_control {
public:
  using time_point = std::chrono::system_clock::time_point;

  // Something changed: a pass is due. True when the caller must send itself the pass message
  // (none is in its mailbox and no plan is out).
  bool request() {
    dirty_ = true;
    if (queued_ || running_)
      return false;
    queued_ = true;
    return true;
  }
  // The pass message arrived: whether to run a pass now.
  bool begin() {
    queued_ = false;
    if (running_ || !dirty_)
      return false;
    dirty_ = false;
    return true;
  }
  void plan_sent() { running_ = true; }
  // The plan came back: true when more changed meanwhile and the caller must send itself the
  // pass message.
  bool plan_done() {
    running_ = false;
    if (!dirty_ || queued_)
      return false;
    queued_ = true;
    return true;
  }
  bool running() const { return running_; }
  // Something changed that no pass has looked at yet (workqueue_depth counts these).
  bool due() const { return dirty_; }

  // The core's next wake-up: the generation to send with a delayed message, or nullopt when no
  // new timer is needed (the same time as before, or none). Older timers become stale.
  std::optional<std::uint32_t> wake(std::optional<time_point> at) {
    if (at == wake_at_)
      return std::nullopt;
    wake_at_ = at;
    ++generation_;
    if (!at)
      return std::nullopt;
    return generation_;
  }
  // A timer fired: whether it is the current one (then the wake-up is spent).
  bool woke(std::uint32_t generation) {
    if (generation != generation_)
      return false;
    wake_at_.reset();
    ++generation_; // spent: the same timer cannot wake twice
    return true;
  }

  // The delay to a wake-up from `now`, a little after the mark (cores compare whole seconds:
  // waking before it would find nothing due), never negative.
  static std::chrono::milliseconds delay_to(time_point at, time_point now) {
    auto d = std::chrono::duration_cast<std::chrono::milliseconds>(at - now);
    return std::max(d, std::chrono::milliseconds{0}) + std::chrono::milliseconds{20};
  }

private:
  bool running_ = false; // a plan is with the executor
  bool dirty_ = false;   // something changed since the last pass
  bool queued_ = false;  // a pass message is in the mailbox
  std::uint32_t generation_ = 0;
  std::optional<time_point> wake_at_;
};

} // namespace kozmo::controller
