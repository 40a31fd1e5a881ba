// One way for a controller actor to watch a kind and to wait until it is listed. For actor files
// only (CAF appears here as <caf/fwd.hpp>).
//
//   watch_into<T>(self, cli, cfg, &gate) ──spawns, links──▶ watch actor<T> ──object_event<T>──▶ self
//   subscribe_to(self, watch, &gate)       a watch spawned elsewhere (the shared pods watch)
//   self ──(synced_atom)──▶ watch ──ok──▶ gate.done()             only when a gate is given
//   list_into(self, cli, ref, gate, on_list)   a LIST read once before the gate opens
//
// Rules:
//  1. The actor is subscribed to every object of the watch (index_kind::all) before it asks
//     whether the kind is listed, so every listed object has reached it as an object_event when
//     the gate counts the kind done (listed_gate.hpp says what the gate then runs).
//  2. A watch spawned here is linked to the actor: each ends with the other. A watch spawned
//     elsewhere is only subscribed to.
//  3. A watch that cannot say whether it is listed (it ended) goes to `gate.on_error`, or, when
//     that is unset, ends the actor with the error.
//  4. `list_into` reads the whole collection (client::list_all) and, while the server gives no
//     answer (any error), reads it again after `read_backoff()`'s next delay, saying so in the
//     log; `on_list` runs on the actor's thread with the list, then the gate counts it done.
#pragma once

#include "actors/controller/listed_gate.hpp"
#include "actors/watch/watch_actor.hpp"
#include "k8s/client/retry.hpp"

#include <caf/fwd.hpp>

#include <functional>
#include <memory>
#include <string>

namespace kozmo::json {
class value;
}

namespace kozmo::controller {

// Spawns the watch of T (pods, nodes, services, custom objects) that `cfg` describes, links it
// to `self` and subscribes `self`; with a gate, the gate waits until the kind is listed.
template <class T>
caf::actor watch_into(caf::event_based_actor* self, std::shared_ptr<client::client> cli, watch::watch_config cfg,
                      listed_gate* gate = nullptr);

// For a subscription that waits for no listing: subscribe_to(self, w, no_gate, index, key).
inline constexpr listed_gate* no_gate = nullptr;

// Subscribes `self` to a watch someone else spawned (to all its objects, or to those of one
// index key: a node's pods); with a gate, the gate waits until it is listed.
void subscribe_to(caf::event_based_actor* self, const caf::actor& watch, listed_gate* gate = nullptr,
                  watch::index_kind index = watch::index_kind::all, std::string key = {});
// The same, for an actor that follows each watch's listing on its own: `on_listed` runs on the
// actor's thread once this watch is listed (a watch that ended first ends the actor).
void subscribe_to(caf::event_based_actor* self, const caf::actor& watch, std::function<void()> on_listed,
                  watch::index_kind index = watch::index_kind::all, std::string key = {});

// A read that failed with something that is not an answer is tried again after this back-off:
// 250 ms doubling to 30 s, with up to a quarter of jitter.
inline client::backoff read_backoff() {
  return client::backoff{std::chrono::milliseconds(250), std::chrono::seconds(30), 0.25};
}

// Reads `ref` once before the gate opens (rule 4). `who` names the actor in the log.
void list_into(caf::event_based_actor* self, std::shared_ptr<client::client> cli, client::resource_ref ref,
               std::string who, listed_gate& gate, std::function<void(const json::value& list)> on_list);

} // namespace kozmo::controller
