// Actors under CAF's test coordinator, for tests of rules that depend on time and on message
// order: the test delivers every message and fires every timer, and the actors read a manual clock
// that moves in step with the coordinator's. Nothing sleeps, so "ten minutes later" takes no time.
// Also an executor of the test's, which keeps the plans it is given and answers them as told.
#pragma once

#include "actors/controller/clock.hpp"
#include "actors/controller/executor_actor.hpp"

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <chrono>
#include <memory>
#include <vector>

namespace kozmo::testing {

using namespace std::chrono_literals;

// An actor system whose messages run and whose timers fire only when the test says so.
struct coordinated {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  std::shared_ptr<controller::manual_clock> clock =
      std::make_shared<controller::manual_clock>(std::chrono::system_clock::time_point(1'800'000'000s));
  std::vector<caf::actor> actors;

  coordinated() {
    cfg.set("scheduler.policy", caf::atom("testing"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
  }
  ~coordinated() {
    for (auto& a : actors)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    sched->run();
  }
  caf::actor keep(caf::actor a) {
    actors.push_back(a);
    return a;
  }
  // Moves the actors' clock and the coordinator's timers together, then runs what is due.
  void advance(std::chrono::milliseconds d) {
    clock->advance(d);
    sched->advance_time(d);
    sched->run();
  }
};

struct plans {
  std::vector<controller::plan> received;
  std::vector<caf::response_promise> pending;
};

using answer_atom = caf::atom_constant<caf::atom("answer")>;

// Keeps every plan; answers plan `i` when the test sends (answer_atom, i, outcome).
inline caf::behavior scripted_executor(caf::event_based_actor* self, std::shared_ptr<plans> out) {
  return {
      [self, out](controller::run_plan& r) -> caf::result<controller::plan_outcome> {
        out->received.push_back(r.plan);
        out->pending.push_back(self->make_response_promise<controller::plan_outcome>());
        return caf::delegated<controller::plan_outcome>();
      },
      [out](answer_atom, std::size_t index, controller::plan_outcome& outcome) {
        out->pending.at(index).deliver(std::move(outcome));
      },
  };
}

} // namespace kozmo::testing
