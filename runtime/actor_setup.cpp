#include "runtime/actor_setup.hpp"

#include <caf/actor_system_config.hpp>

#include <algorithm>
#include <thread>

namespace kozmo::runtime {

void tune_scheduler(caf::actor_system_config& cfg) {
  unsigned cores = std::max(2u, std::thread::hardware_concurrency());
  cfg.set("scheduler.max-threads", static_cast<int>(cores));
  cfg.set("work-stealing.moderate-poll-attempts", 1);
  cfg.set("work-stealing.aggressive-poll-attempts", 20);
}

} // namespace kozmo::runtime
