// The actor system's scheduler as Kozmo runs it (engine, `kozmo extender`).
#pragma once

#include <caf/fwd.hpp>

namespace kozmo::runtime {

// One worker thread per core (CAF's default is at least four, which on a two-core machine only
// adds context switches), and idle workers that stop polling after a few 50 µs naps (CAF's
// default is 500 of them, 25 ms of wake-ups after every burst of messages) before they wait on
// their queue. Measured in bench/controller_head_to_head.sh (README, "kozmo controller against
// kube-scheduler").
void tune_scheduler(caf::actor_system_config& cfg);

} // namespace kozmo::runtime
