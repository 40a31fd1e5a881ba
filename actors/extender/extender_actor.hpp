// The extender actor: in extender-only deployments (kube-scheduler + this extender, one
// process) it OWNS the GPU scheduler core through extender_logic, so every decision is
// serialised by its mailbox.
//
//   pods watch  ──object_event<pod>──▶  extender actor ◀──filter/preempt/bind/inspect── server io thread
//   nodes watch ──object_event<node>──▶      │            (actor_backend: anon_send + answer callback)
//                                            ├──pods/binding──▶ API server
//                                            └──Warning Events (invalid spec, lazy preemption)──▶ event recorder
//
// Requests that need the cluster's state (filter, preempt, bind) wait until both watches have
// applied their first LIST, so that bound pods are recovered from their bind-info before any
// new placement is made. Inspect is answered at once.
#pragma once

#include "actors/extender/extender_backend.hpp"
#include "actors/extender/extender_logic.hpp"
#include "k8s/client/client.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <memory>
#include <string>

namespace kozmo::extender {

struct extender_actor_config {
  std::string event_component = "kozmo-extender"; // Event source.component
  caf::actor recorder; // the event recorder; null: the extender spawns its own
};

caf::actor spawn_extender_actor(caf::actor_system& sys, std::shared_ptr<client::client> cli,
                                std::shared_ptr<extender_logic> logic, caf::actor pods_watch, caf::actor nodes_watch,
                                extender_actor_config cfg = {});

// The server's backend that forwards each request to the extender actor.
std::shared_ptr<extender_backend> make_actor_backend(caf::actor extender);

} // namespace kozmo::extender
