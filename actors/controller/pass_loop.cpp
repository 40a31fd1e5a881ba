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
  id_ = std::move(id);
  hooks_ = std::move(hooks);
}

pass_control::time_point pass_loop::now() const { return time_->now(); }

void pass_loop::request() {
  if (control_.request())
    self_->send(self_, pass_atom::value);
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
  auto d = hooks_.pass();
  arm_wake(d.wake_at);
  if (d.writes.steps.empty())
    return;
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
