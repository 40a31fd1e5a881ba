#include "runtime/actor_setup.hpp"

#include "runtime/cpu_budget.hpp"

#include <caf/actor_system_config.hpp>

#include <spdlog/spdlog.h>

#include <cstdlib>

namespace kozmo::runtime {

expected<unsigned> tune_scheduler(caf::actor_system_config& cfg, int requested, const char* workers_env) {
  auto budget = current_cpu_budget();
  auto workers = worker_count(requested, workers_env, budget);
  if (!workers)
    return workers;
  if (budget.quota)
    spdlog::info("actors: {} worker thread(s); this process may use {} CPU(s): {} in its affinity mask, a quota of "
                 "{:.2f} ({})", *workers, budget.workers, budget.affinity, *budget.quota, budget.quota_from);
  else
    spdlog::info("actors: {} worker thread(s); this process may use {} CPU(s) (its affinity mask, no cgroup quota)",
                 *workers, budget.workers);
  cfg.set("scheduler.max-threads", static_cast<int>(*workers));
  cfg.set("work-stealing.moderate-poll-attempts", 1);
  cfg.set("work-stealing.aggressive-poll-attempts", 20);
  return workers;
}

expected<int> workers_from_environment() {
  cpu_budget unset;
  unset.workers = 0; // no variable: 0, the engine's "one per CPU"
  auto workers = worker_count(0, std::getenv("KOZMO_WORKERS"), unset);
  if (!workers)
    return workers.err();
  return static_cast<int>(*workers);
}

} // namespace kozmo::runtime
