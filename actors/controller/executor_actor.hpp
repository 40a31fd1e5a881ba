// The executor: carries out plans (plan.hpp) against the API server and answers each with a
// plan_outcome, so that a controller actor only decides and never juggles API callbacks.
//
//   controller actor ──run_plan (request)──▶ executor ──REST calls──▶ API server
//   controller actor ◀──plan_outcome (reply)── executor ──event_note──▶ event recorder
//
// One executor serves many controller actors (the kit's supervisor spawns one for its
// children); plans run concurrently, each by the rules of plan.hpp. It never blocks: every
// call is asynchronous and its answer comes back as a message.
#pragma once

#include "actors/controller/plan.hpp"

#include <caf/fwd.hpp>
#include "messages/local_message.hpp"

#include <memory>

namespace kozmo::client {
class client;
}

namespace kozmo::controller {

struct run_plan {
  controller::plan plan;
};

KOZMO_LOCAL_MESSAGE(run_plan)
KOZMO_LOCAL_MESSAGE(plan_outcome)

// `recorder` receives the plans' event steps (event_recorder_actor.hpp); null drops them.
caf::actor spawn_executor(caf::actor_system& sys, std::shared_ptr<client::client> cli, caf::actor recorder);

} // namespace kozmo::controller
