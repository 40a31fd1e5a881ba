// The leader elector: one actor per process that holds (or waits for) a coordination.k8s.io/v1
// Lease with client-go's rules (leader_election.hpp decides; this reads and writes).
//
//   elector ──GET lease, then POST or PUT with its resourceVersion──▶ API server
//   elector ──started_leading() once it holds the Lease──▶ the host (starts its controllers)
//   elector ──stopped_leading() when no renewal succeeded for renewDeadline──▶ the host,
//            which must stop writing at once; the elector then quits
//   elector ──"<identity> became leader" (Normal, LeaderElection) about the Lease──▶ recorder
//
// Who leads is told as client-go tells it: an Event on the Lease when a candidate takes it, and
// the gauge kozmo_leader_election_leading (1 on the replica that leads, 0 on a standby).
//
// Every retryPeriod (jittered by up to 1.2 x while waiting, as client-go's acquire loop) it
// tries once; a try still out when the next tick comes is not doubled, but the deadline is
// checked at every tick, so a request that hangs cannot keep a lost leader writing. Sending it
// `release_atom` (a graceful stop) gives the Lease up if it holds it (an empty holder, a 1 s
// lease: the standby takes over at its next try) and answers when that is written or failed.
#pragma once

#include "actors/controller/clock.hpp"
#include "actors/controller/leader_election.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <functional>
#include <memory>
#include <string>

namespace kozmo::client {
class client;
}

namespace kozmo::controller {

struct elector_config {
  std::string lease_namespace = "kozmo-system";
  std::string lease_name = "kozmo-controller";
  std::string identity;                 // "" = default_identity()
  election_timing timing;
  std::function<void()> started_leading; // called once, on the elector's thread
  std::function<void()> stopped_leading; // called once, on the elector's thread
  std::shared_ptr<const clock> time = real_clock(); // the wall time written in the Lease
  caf::actor recorder;                   // the event recorder; null: no Events
};

caf::actor spawn_leader_elector(caf::actor_system& sys, std::shared_ptr<client::client> cli, elector_config cfg);

} // namespace kozmo::controller
