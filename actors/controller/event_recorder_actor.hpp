// The event recorder: the one way Kozmo's actors post Kubernetes Events. Notes go in fire and
// forget; the recorder correlates them (event_correlator.hpp: spam filter, aggregation of
// similar messages, a count on repeats) and writes Events as background traffic, so an Event
// never holds up a bind or a status write.
//
//   any actor ──event_note──▶ recorder ──POST events / PATCH events/NAME──▶ API server
//   executor ──(written_atom, event_note)──▶ recorder ──ok_atom once the write is handed to the
//                                                       client (or folded, or dropped)
//
// One write per Event at a time: a repeat that arrives while its Event is being written is
// folded into the next patch (the latest count). An Event that expired (PATCH answers 404) is
// created again under a new name with its count. A failed write is logged at debug level and
// forgotten: Events are best-effort, as in Kubernetes.
#pragma once

#include "actors/controller/clock.hpp"
#include "actors/controller/event_correlator.hpp"
#include "actors/controller/event_note.hpp"

#include "messages/local_message.hpp"

#include <caf/fwd.hpp>

#include <memory>

namespace kozmo::client {
class client;
}

namespace kozmo::controller {

KOZMO_LOCAL_MESSAGE(event_note)

struct recorder_config {
  correlator_options correlation;
  std::shared_ptr<const clock> time = real_clock();
};

caf::actor spawn_event_recorder(caf::actor_system& sys, std::shared_ptr<client::client> cli,
                                recorder_config cfg = {});

// Records `note` through `recorder` (anon_send: callable from any thread). A null recorder
// drops the note.
void record(const caf::actor& recorder, event_note note);

} // namespace kozmo::controller
