// What the GPU scheduler tells users about their pods, in one place: the PodScheduled=False
// condition and the Events (`kubectl describe pod`) for a pod that waits, a spec that cannot be
// read, a bind that failed, and what the core noticed on its own (lazy preemption, a group
// downgraded after a reconfiguration). Writes are fire and forget; Events go through the
// event recorder, which counts repeats.
//
// A waiting pod's first reason is written at once. Its reason changes with every bind and
// release in its VC (it counts the free GPUs), so later reasons are written at most
// `refreshes_per_second` pods a second in all, the latest reason of each pod, oldest change
// first: a backlog of thousands of waiting pods then costs the API server a trickle instead of
// two writes per pod on every change, and pods that can be bound are not queued behind them.
#pragma once

#include "actors/controller/event_note.hpp"
#include "actors/scheduler/scheduler_core.hpp"

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace kozmo::client {
class client;
}

namespace kozmo::scheduler {

class pod_reporter {
public:
  // `record` hands a note to the event recorder (the actor passes controller::record's call).
  using clock = std::chrono::steady_clock;
  pod_reporter(std::shared_ptr<client::client> cli, std::function<void(controller::event_note)> record,
               std::string component, double refreshes_per_second = 50);

  // A pod the core could not place yet (the core says a reason only when it changed): the
  // first reason now, a later one queued for flush().
  void waiting(const pod_ref& pod, const std::string& reason);
  // Writes the queued reasons the budget allows; true while some stay queued.
  bool flush(clock::time_point now);
  // Reasons queued, not written yet.
  std::size_t queued() const { return queued_.size(); }
  // A scheduling spec that cannot be read or does not match the configuration: said once per
  // distinct message.
  void bad_spec(const pod_ref& pod, const std::string& message);
  // The pod left the scheduler or was decided (bound, preempting): a queued reason is dropped,
  // and a later wait or bad spec of a namesake is said at once again.
  void forget(const std::string& uid);
  // Each notice, logged and posted on every pod of its group.
  void notices(std::vector<group_notice> notices);
  void event(const pod_ref& pod, const char* type, const std::string& reason, const std::string& message);

private:
  void unschedulable(const pod_ref& pod, const std::string& reason, const std::string& message);

  std::shared_ptr<client::client> cli_;
  std::function<void(controller::event_note)> record_;
  std::string component_;
  std::map<std::string, std::string> spec_error_; // uid -> the spec error already reported
  // Waiting pods said once; the later reasons queued (latest per pod) and in which order.
  struct queued_wait {
    pod_ref pod;
    std::string reason;
  };
  std::unordered_set<std::string> said_;
  std::unordered_map<std::string, queued_wait> queued_;
  std::deque<std::string> order_;  // uids; a forgotten one is skipped when reached
  double rate_;
  double tokens_;
  clock::time_point last_{};
  void write_wait(const pod_ref& pod, const std::string& reason);
};

} // namespace kozmo::scheduler
