#include "actors/tasks/plugin.hpp"

#include "actors/tasks/pod_plugin.hpp"
#include "actors/tasks/training_plugin.hpp"

namespace kozmo::tasks {

void plugin_registry::add(std::shared_ptr<const plugin> p) { plugins_.push_back(std::move(p)); }

const plugin* plugin_registry::find(const std::string& type) const {
  for (const auto& p : plugins_)
    if (p->type() == type)
      return p.get();
  return nullptr;
}

std::vector<std::string> plugin_registry::types() const {
  std::vector<std::string> out;
  for (const auto& p : plugins_)
    out.push_back(p->type());
  return out;
}

plugin_registry plugin_registry::with_builtins(bool training_jobs) {
  plugin_registry r;
  r.add(container_plugin());
  r.add(pod_plugin());
  if (training_jobs)
    for (const auto& t : training_task_types())
      r.add(training_plugin(t));
  return r;
}

} // namespace kozmo::tasks
