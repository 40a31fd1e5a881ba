#include "actors/controller/executor_actor.hpp"

#include "actors/controller/event_recorder_actor.hpp"
#include "k8s/client/client.hpp"
#include "messages/atoms.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <unordered_map>

namespace kozmo::controller {

namespace {

// The answer to one call of a running plan, back from the client's io thread.
struct call_done {
  std::uint64_t run = 0;
  std::size_t index = 0;
  bool reread = false; // the GET that follows a 409
  std::shared_ptr<expected<json::value>> result;
};

template <class I>
typename I::result_type inspect(I& f, call_done& x) {
  return f(caf::meta::type_name("call_done"), x.run, x.index, x.reread);
}

struct execution {
  caf::response_promise rp;
  plan p;
  plan_outcome out;
  std::size_t next = 0;
  int in_flight = 0;
  bool over = false; // failed or stopped: the rest is dropped
  std::vector<std::size_t> held_events;
};

struct executor_state {
  static inline const char* name = "executor";
  std::shared_ptr<client::client> cli;
  std::shared_ptr<client::client> closing; // cli's view for plan::closing
  caf::actor recorder;
  std::unordered_map<std::uint64_t, execution> runs;
  std::uint64_t next_run = 0;
};

using executor_actor = caf::stateful_actor<executor_state>;

client::json_callback reply_to(executor_actor* self, std::uint64_t run, std::size_t index, bool reread = false) {
  caf::actor me = caf::actor_cast<caf::actor>(self);
  return [me, run, index, reread](expected<json::value> r) {
    caf::anon_send(me, call_done{run, index, reread, std::make_shared<expected<json::value>>(std::move(r))});
  };
}

// The object a step addresses, by name (for the re-read after a 409).
client::resource_ref object_of(const step& s) {
  client::resource_ref ref;
  if (const auto* c = std::get_if<create_step>(&s)) {
    ref = c->where;
    const auto* meta = c->object.find("metadata");
    ref.name = meta ? meta->get_string("name") : std::string();
  } else if (const auto* p = std::get_if<patch_step>(&s)) {
    ref = p->ref;
  } else if (const auto* d = std::get_if<delete_step>(&s)) {
    ref = d->ref;
  }
  ref.subresource.clear();
  return ref;
}

// patch_step::chain_resource_version: the precondition from the last answer about the object.
json::value chained(const execution& ex, std::size_t index, const patch_step& st) {
  auto target = object_of(ex.p.steps[index]);
  for (std::size_t j = index; j-- > 0;) {
    if (!ex.out.answers[j] || !same_object(object_of(ex.p.steps[j]), target))
      continue;
    const auto* rv = ex.out.answers[j]->at_path({"metadata", "resourceVersion"});
    if (!rv || !rv->is_string())
      break;
    json::value patch = st.patch;
    patch["metadata"]["resourceVersion"] = rv->as_string();
    return patch;
  }
  return st.patch;
}

void launch(executor_actor* self, std::uint64_t run, execution& ex, std::size_t index) {
  auto& cli = ex.p.closing ? *self->state.closing : *self->state.cli;
  ++ex.in_flight;
  auto done = reply_to(self, run, index);
  std::visit(
      [&](const auto& st) {
        using S = std::decay_t<decltype(st)>;
        if constexpr (std::is_same_v<S, create_step>) {
          cli.create(st.where, st.object, std::move(done));
        } else if constexpr (std::is_same_v<S, patch_step>) {
          if (st.chain_resource_version)
            cli.patch(st.ref, st.type, chained(ex, index, st), {}, std::move(done));
          else
            cli.patch(st.ref, st.type, st.patch, {}, std::move(done));
        } else if constexpr (std::is_same_v<S, delete_step>) {
          client::delete_options o;
          o.precondition_uid = st.uid;
          o.propagation_policy = st.propagation;
          cli.remove(st.ref, o, std::move(done));
        } else if constexpr (std::is_same_v<S, guard_step>) {
          cli.get(st.owner, std::move(done));
        } else {
          --ex.in_flight; // events are held by the caller of launch
        }
      },
      ex.p.steps[index]);
}

void fail(execution& ex, std::size_t index, const std::string& message, int code) {
  if (ex.over)
    return;
  ex.over = true;
  ex.out.what = plan_outcome::result::failed;
  ex.out.failed_step = index;
  ex.out.failure = describe(ex.p.steps[index]) + ": " + message;
  ex.out.message = message;
  ex.out.code = code;
}

void finish(executor_actor* self, std::uint64_t run) {
  auto it = self->state.runs.find(run);
  it->second.out.plan = std::move(it->second.p);
  it->second.rp.deliver(std::move(it->second.out));
  self->state.runs.erase(it);
}

// Rule 1: the next wave of the plan, once the previous one is done.
void advance(executor_actor* self, std::uint64_t run) {
  auto& ex = self->state.runs.at(run);
  if (ex.in_flight > 0)
    return;
  if (ex.over)
    return finish(self, run);
  if (!ex.held_events.empty() && self->state.recorder) {
    // Rule 6: what comes after an event waits until the event is written.
    auto held = std::move(ex.held_events);
    ex.held_events.clear();
    ex.in_flight += static_cast<int>(held.size());
    auto written = [self, run] {
      if (auto it = self->state.runs.find(run); it != self->state.runs.end() && --it->second.in_flight == 0)
        advance(self, run);
    };
    for (auto i : held)
      self->request(self->state.recorder, caf::infinite, atoms::written_atom::value,
                    std::get<event_step>(ex.p.steps[i]).note)
          .then([written](caf::ok_atom) { written(); }, [written](caf::error&) { written(); });
    return;
  }
  ex.held_events.clear();
  const auto& steps = ex.p.steps;
  if (ex.next == steps.size())
    return finish(self, run);
  auto first = steps[ex.next].index();
  while (ex.next < steps.size()) {
    const step& s = steps[ex.next];
    if (std::holds_alternative<event_step>(s)) {
      ex.held_events.push_back(ex.next++);
      continue;
    }
    bool batchable = std::holds_alternative<create_step>(s) || std::holds_alternative<delete_step>(s);
    if (ex.in_flight > 0 && (!batchable || s.index() != first))
      break;
    if (ex.in_flight == 0 && !ex.held_events.empty())
      break; // rule 6: the events before this step are written first

    first = s.index();
    launch(self, run, ex, ex.next++);
    if (!batchable)
      break;
  }
  if (ex.in_flight == 0)
    advance(self, run); // events to write first, or only events were left
}

// Rule 5: is the owner still the object the plan was made for?
bool owner_unchanged(const json::value& owner, const std::string& uid) {
  const auto* meta = owner.find("metadata");
  return meta && meta->get_string("uid") == uid && !meta->find("deletionTimestamp");
}

void on_call(executor_actor* self, call_done& msg) {
  auto it = self->state.runs.find(msg.run);
  if (it == self->state.runs.end())
    return;
  auto& ex = it->second;
  --ex.in_flight;
  auto& result = *msg.result;
  const step& s = ex.p.steps[msg.index];
  if (msg.reread) {
    if (result)
      ex.out.reread = std::move(*result);
    return advance(self, msg.run);
  }
  if (const auto* g = std::get_if<guard_step>(&s)) {
    if (!result && result.err().code != 404) {
      fail(ex, msg.index, result.err().message, result.err().code);
    } else if (!result || !owner_unchanged(*result, g->uid)) {
      if (g->fail_if_gone) {
        fail(ex, msg.index, "the owner was replaced or is being deleted", 0);
      } else if (!ex.over) {
        ex.over = true;
        ex.out.what = plan_outcome::result::stopped;
      }
    }
    return advance(self, msg.run);
  }
  if (!result) {
    const auto& e = result.err();
    if (e.code == 404 && std::holds_alternative<delete_step>(s)) // rule 4
      return advance(self, msg.run);
    bool first_failure = !ex.over;
    fail(ex, msg.index, e.message, e.code);
    if (e.code == 409 && first_failure) { // rule 3
      ++ex.in_flight;
      self->state.cli->get(object_of(s), reply_to(self, msg.run, msg.index, true));
    }
    return advance(self, msg.run);
  }
  ex.out.answers[msg.index] = std::move(*result);
  advance(self, msg.run);
}

caf::behavior executor(executor_actor* self, std::shared_ptr<client::client> cli, caf::actor recorder) {
  self->state.cli = std::move(cli);
  self->state.closing = self->state.cli->view(client::lane::closing);
  self->state.recorder = std::move(recorder);
  return {
      [self](run_plan& req) -> caf::result<plan_outcome> {
        auto& st = self->state;
        auto id = ++st.next_run;
        auto& ex = st.runs[id];
        ex.rp = self->make_response_promise();
        ex.p = std::move(req.plan);
        ex.out.answers.resize(ex.p.steps.size());
        advance(self, id);
        return caf::delegated<plan_outcome>();
      },
      [self](call_done& msg) { on_call(self, msg); },
  };
}

} // namespace

caf::actor spawn_executor(caf::actor_system& sys, std::shared_ptr<client::client> cli, caf::actor recorder) {
  return sys.spawn(executor, std::move(cli), std::move(recorder));
}

} // namespace kozmo::controller
