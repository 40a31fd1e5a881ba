#include "actors/tasks/task_controller.hpp"

#include "actors/controller/event_recorder_actor.hpp"
#include "actors/controller/executor_actor.hpp"
#include "actors/controller/supervisor_actor.hpp"
#include "actors/tasks/cache_store_actor.hpp"
#include "actors/tasks/pod_plugin.hpp"
#include "actors/tasks/resource_manager_actor.hpp"
#include "actors/tasks/task_actor.hpp"
#include "actors/tasks/task_spec.hpp"
#include "actors/tasks/template_store_actor.hpp"
#include "actors/tasks/training_plugin.hpp"
#include "k8s/client/client.hpp"
#include "k8s/model/kozmo_keys.hpp"

#include <caf/all.hpp>

namespace kozmo::tasks {

std::vector<caf::actor> spawn_task_controller(caf::actor_system& sys, caf::actor pods_watch,
                                              task_controller_config cfg) {
  std::vector<caf::actor> out;
  // Every write of the task controller goes after the nodes' and the scheduler's waiting
  // writes on a shared client (client::background_view).
  cfg.cli = cfg.cli->background_view();
  if (!cfg.recorder) {
    cfg.recorder = controller::spawn_event_recorder(sys, cfg.cli);
    out.push_back(cfg.recorder);
  }
  auto pool_writer = controller::spawn_executor(sys, cfg.cli, cfg.recorder);
  out.push_back(pool_writer);
  auto pools = spawn_resource_manager(sys, {cfg.cli, pool_writer});
  out.push_back(pools);
  auto templates = spawn_template_store(sys, {cfg.cli, cfg.template_namespace});
  out.push_back(templates);
  auto cache = spawn_cache_store(sys, {cfg.cli, nullptr});
  out.push_back(cache);

  auto task_cfg = std::make_shared<task_actor_config>();
  task_cfg->platform = std::make_shared<const platform_config>(std::move(cfg.platform));
  task_cfg->plugins = std::make_shared<const plugin_registry>(plugin_registry::with_builtins(cfg.training_jobs));
  task_cfg->pools = pools;
  task_cfg->templates = templates;
  task_cfg->cache = cache;

  controller::supervisor_config sc;
  sc.name = "tasks";
  sc.cli = cfg.cli;
  sc.ns = cfg.ns;
  sc.primaries.push_back({{group, version, task_resource, "", "", ""}, task_kind, api_version});
  sc.pods_watch = std::move(pods_watch);
  if (cfg.training_jobs)
    for (const auto& type : training_task_types()) {
      auto k = training_job_kind(type);
      sc.owned.push_back({{k.group, k.version, k.resource, "", "", ""}, keys::task_name});
    }
  sc.route_label = keys::task_name;
  sc.recorder = cfg.recorder;
  std::shared_ptr<const task_actor_config> shared = std::move(task_cfg);
  sc.spawn_child = [shared](caf::event_based_actor* parent, const controller::child_tools& tools,
                            std::shared_ptr<const k8s::custom_object> task, controller::owned_view view) {
    return spawn_task_actor(parent->system(), parent, shared, tools, std::move(task), std::move(view));
  };
  out.push_back(controller::spawn_supervisor(sys, std::move(sc)));
  return out;
}

} // namespace kozmo::tasks
