#include "actors/controller/pass_loop.hpp"

#include "actors/controller/executor_actor.hpp"
#include "actors/controller/supervisor_actor.hpp"
#include "messages/atoms.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace kozmo::controller {
namespace {

using pass_atom = caf::atom_constant<caf::atom("pass")>;
using wake_atom = caf::atom_constant<caf::atom("wake")>;

} // namespace

void pass_loop::start(caf::event_based_actor* self, const child_tools& tools, pass_identity id, pass_hooks hooks) {
  self_ = self;
  executor_ = tools.executor;
  time_ = tools.time;
  backoff_.emplace(id.min_backoff, id.max_backoff);
  if (!id.controller.empty())
    series_ = series_for(id.controller);
  id_ = std::move(id);
  hooks_ = std::move(hooks);
}

pass_loop::~pass_loop() {
  if (counted_due_ && series_)
    series_->depth.dec();
}

void pass_loop::count_due() {
  if (!series_ || counted_due_ == control_.due())
    return;
  counted_due_ = !counted_due_;
  if (counted_due_)
    series_->depth.inc();
  else
    series_->depth.dec();
}

void pass_loop::pass_over(reconcile_result r) {
  if (series_)
    series_->observe(r, std::chrono::duration<double>(std::chrono::steady_clock::now() - pass_began_).count());
}

pass_control::time_point pass_loop::now() const { return time_->now(); }

void pass_loop::request() {
  if (control_.request())
    self_->send(self_, pass_atom::value);
  count_due();
}

caf::message_handler pass_loop::handlers() {
  return {
      [this](pass_atom) { run(); },
      [this](atoms::retry_atom) { request(); },
      [this](wake_atom, std::uint32_t generation) { woke(generation); },
  };
}

void pass_loop::woke(std::uint32_t generation) {
  if (control_.woke(generation))
    request();
}

void pass_loop::arm_wake(std::optional<pass_control::time_point> at) {
  if (auto gen = control_.wake(at))
    self_->delayed_send(self_, pass_control::delay_to(*at, now()), wake_atom::value, *gen);
}

void pass_loop::run() {
  if (gone_ || !control_.begin())
    return;
  count_due();
  pass_began_ = std::chrono::steady_clock::now();
  auto d = hooks_.pass();
  wake_set_ = d.wake_at.has_value();
  arm_wake(d.wake_at);
  if (d.writes.steps.empty()) {
    pass_over(result_of_pass(false, 0, wake_set_));
    return;
  }
  control_.plan_sent();
  auto send = [this, writes = std::move(d.writes)]() mutable {
    self_->request(executor_, caf::infinite, run_plan{std::move(writes)}).then([this](plan_outcome& out) {
      on_outcome(out);
    });
  };
  if (d.first)
    d.first(std::move(send));
  else
    send();
}

void pass_loop::on_outcome(plan_outcome& out) {
  bool again = control_.plan_done();
  pass_over(result_of_pass(out.what == plan_outcome::result::failed, out.code, wake_set_));
  const plan& p = out.plan;
  for (std::size_t i = 0; i < p.steps.size() && i < out.answers.size(); ++i)
    if (out.answers[i])
      hooks_.absorb(p.steps[i], *out.answers[i]);
  if (object_gone(out, id_.own)) {
    spdlog::debug("{} was deleted: nothing more to write", id_.who);
    gone_ = true;
    return;
  }
  switch (out.what) {
  case plan_outcome::result::stopped:
    spdlog::debug("{} is gone or being deleted: nothing written", id_.who);
    return; // the supervisor stops this actor when the watch reports the delete
  case plan_outcome::result::failed: {
    if (out.reread && out.failed_step < p.steps.size())
      hooks_.reread(p.steps[out.failed_step], *out.reread);
    if (hooks_.failed)
      hooks_.failed(out);
    auto delay = backoff_->next();
    if (out.code == 409)
      spdlog::debug("{}: {} (read again, retrying in {} ms)", id_.who, out.failure, delay.count());
    else
      spdlog::warn("{}: {} (retrying in {} ms)", id_.who, out.failure, delay.count());
    self_->delayed_send(self_, delay, atoms::retry_atom::value);
    break;
  }
  case plan_outcome::result::done:
    if (!hooks_.settled || hooks_.settled())
      backoff_->reset();
    break;
  }
  if (again)
    self_->send(self_, pass_atom::value);
}

} // namespace kozmo::controller
