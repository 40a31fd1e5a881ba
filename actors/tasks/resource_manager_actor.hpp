// The resource manager: the one actor that owns every ResourcePool's tokens (the pure book is
// resource_pools.hpp), so a pool is never over quota, also under races: allocations and
// releases are decided one at a time, here.
//
//   resourcepools watch ──object_event──▶ resource manager   (quota, perNamespace, perProject)
//   task ──pool_acquire (request)──▶ resource manager ──pool_answer
//   resource manager ──pool_granted──▶ task                   (a waiting request served)
//   task ──pool_release──▶ resource manager
//   resource manager ──run_plan (status patches)──▶ executor  (status.inUse / waiting / holders)
//
// Restart: before it answers anything, it lists the TaskExecutions and holds again every token
// their statuses say is held (status.pool.held), and waits for the pools to be listed; requests
// that arrive earlier wait. Pool statuses are written at most every `status_interval`.
#pragma once

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <memory>

namespace kozmo::client {
class client;
}

namespace kozmo::tasks {

struct resource_manager_config {
  std::shared_ptr<client::client> cli;
  caf::actor executor; // writes the pools' statuses
  std::chrono::milliseconds status_interval{250};
};

caf::actor spawn_resource_manager(caf::actor_system& sys, resource_manager_config cfg);

} // namespace kozmo::tasks
