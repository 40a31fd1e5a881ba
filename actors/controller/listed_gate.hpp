// "Queue until listed": what a controller actor holds until the kinds it reads are listed. The
// gate counts what is still being listed (a watch's first LIST, a start-up read) and keeps, in
// arrival order, the work that came in meanwhile. watch_into.hpp counts a watch or a start-up
// LIST on it; an actor asks `listed()` and hands its work to `when_listed`.
//
// Rules:
//  1. The gate is open when nothing it waits for is left: one that waits for nothing is open from
//     the start (and `on_open` never runs).
//  2. `expect()` counts one more thing to wait for, `done()` one less. The `done()` that leaves
//     nothing runs `on_open`, then the held work, each once, in the order it was held.
//  3. `when_listed(work)` runs `work` at once when the gate is open, else holds it (rule 2); work
//     that runs while the gate opens already sees it open.
//  4. REQUIRES: everything is expected while the actor sets itself up, before its first message;
//     an open gate never closes again.
// Pure: no CAF (the actor side is watch_into.hpp).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace kozmo::controller {

class listed_gate {
public:
  // Runs once, when the last awaited thing is done, before the held work.
  std::function<void()> on_open;
  // A watch that could not say whether it is listed (it ended); unset: the actor ends with the error.
  std::function<void(const std::string& error)> on_error;

  bool listed() const { return waiting_ == 0; }

  void expect() { ++waiting_; }

  void done() {
    if (waiting_ == 0 || --waiting_ > 0)
      return;
    if (on_open)
      on_open();
    for (auto& work : std::exchange(held_, {}))
      work();
  }

  void when_listed(std::function<void()> work) {
    if (listed())
      return work();
    held_.push_back(std::move(work));
  }

private:
  int waiting_ = 0;
  std::vector<std::function<void()>> held_;
};

} // namespace kozmo::controller
