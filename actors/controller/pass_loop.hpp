// The pass loop of a controller child (a training job's actor, a task's actor): when its pure
// core runs, how the plan it decided goes to the executor, and what every answer does. The child
// supplies its world (the `pass` that runs its core), how it absorbs an answer, and nothing else:
//
//   state:     controller::pass_loop loop;
//   on start:  st.loop.start(self, tools, {who, own, min_backoff, max_backoff}, hooks); st.loop.request();
//   on events: st.loop.request();                 // a pass is due
//   behavior:  return st.loop.handlers().or_else(<the child's own handlers>);
//
// One failure policy for every child (plan.hpp's executor rules say what the executor did first):
//   - 409 Conflict: the executor re-read what conflicted; the child absorbs it, then the pass
//     runs again after the back-off (a stale view never spins at 0 ms until the watch catches up);
//   - 404 on the child's own object (a write to it or its status): it is gone, nothing more is
//     written; the supervisor stops the actor when the watch reports the delete;
//   - a guard that found the owner gone (`stopped`): nothing more this pass;
//   - anything else (5xx, 429, no answer, a refused create): the pass runs again after the
//     back-off, which grows while plans fail and resets once one goes through.
// Timers are delayed messages; a wake-up the core no longer wants is ignored (pass_control).
#pragma once

#include "actors/controller/clock.hpp"
#include "actors/controller/controller_metrics.hpp"
#include "actors/controller/pass_control.hpp"
#include "actors/controller/plan.hpp"
#include "actors/controller/primary.hpp"
#include "k8s/client/resource.hpp"
#include "k8s/client/retry.hpp"
#include "k8s/json/value.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace kozmo::controller {

struct child_tools;

// What one pass decided: the writes, in order, and when the core wants to look again.
struct pass_decision {
  plan writes; // no steps: nothing to write
  std::optional<pass_control::time_point> wake_at;
  // Optional: what must be answered before the writes go (a task's outputs stored in the cache
  // before the status that says Succeeded). Called with the continuation that sends the plan.
  std::function<void(std::function<void()> send)> first;
};

struct pass_hooks {
  // Runs the core on the child's view.
  std::function<pass_decision()> pass;
  // A step succeeded with this answer (the created or patched object).
  std::function<void(const step&, json::value&)> absorb;
  // A step met a 409: the object it conflicted on, as the server has it now.
  std::function<void(const step&, json::value&)> reread;
  // Optional: a failed plan, before the retry is timed (training notes a refused create here).
  std::function<void(const plan_outcome&)> failed;
  // Optional: after a plan went through, whether it settled the object (resets the back-off).
  // Default: yes. A pass that only reported a refusal keeps the back-off growing.
  std::function<bool()> settled;
};

struct pass_identity {
  std::string who;           // for logs: "PyTorchJob default/job", "default/task"
  client::resource_ref own;  // the primary object: a 404 writing it stops the child's writes
  std::chrono::milliseconds min_backoff{250};
  std::chrono::milliseconds max_backoff{std::chrono::seconds{30}};
  // The controller's name in metrics ("pytorchjob", "taskexecution"); empty: not counted.
  std::string controller = {};
};

// Each pass is measured as controller-runtime measures a Reconcile (controller_metrics.hpp): from
// the core's run to the plan's answer.
class pass_loop {
public:
  pass_loop() = default;
  pass_loop(const pass_loop&) = delete;
  pass_loop& operator=(const pass_loop&) = delete;
  ~pass_loop();

  void start(caf::event_based_actor* self, const child_tools& tools, pass_identity id, pass_hooks hooks);

  // Something changed: a pass is due (one per batch of events, none while a plan is out).
  void request();
  // The loop's messages (the pass, the retry, the wake-up); the child adds its own with or_else.
  caf::message_handler handlers();

  // The child's own object answered 404: no more passes.
  bool gone() const { return gone_; }
  const std::string& who() const { return id_.who; }
  pass_control::time_point now() const;

private:
  void run();
  void woke(std::uint32_t generation);
  void arm_wake(std::optional<pass_control::time_point> at);
  void on_outcome(plan_outcome& out);
  void pass_over(reconcile_result r);
  void count_due(); // keeps workqueue_depth in step with control_.due()

  caf::event_based_actor* self_ = nullptr;
  caf::actor executor_;
  std::shared_ptr<const clock> time_;
  pass_identity id_;
  pass_hooks hooks_;
  pass_control control_;
  std::optional<client::backoff> backoff_;
  bool gone_ = false;
  std::optional<controller_series> series_;
  bool counted_due_ = false;
  bool wake_set_ = false; // the running pass asked to look again later
  std::chrono::steady_clock::time_point pass_began_;
};

} // namespace kozmo::controller
