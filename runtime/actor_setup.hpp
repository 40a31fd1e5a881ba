// The actor system's scheduler as Kozmo runs it (engine, `kozmo extender`).
#pragma once

#include "k8s/error.hpp"

#include <caf/fwd.hpp>

namespace kozmo::runtime {

// One worker thread per CPU this process may use (runtime/cpu_budget.hpp: the affinity mask
// capped by a cgroup CPU quota; CAF's default is at least four, which on a two-core machine or
// in a container limited to one CPU only adds context switches), or `requested` when positive,
// or `workers_env` ($KOZMO_WORKERS, which the CLI reads; the engine passes none); and idle workers that stop polling after a few 50 µs naps (CAF's default is
// 500 of them, 25 ms of wake-ups after every burst of messages) before they wait on their queue.
// Measured in bench/controller_head_to_head.sh (docs/benchmarks.md, "kozmo controller against
// kube-scheduler"). Returns the worker count, or an error naming a bad $KOZMO_WORKERS.
expected<unsigned> tune_scheduler(caf::actor_system_config& cfg, int requested = 0, const char* workers_env = nullptr);

// $KOZMO_WORKERS as a worker count for engine_options (0 when unset), or an error naming it.
expected<int> workers_from_environment();

} // namespace kozmo::runtime
