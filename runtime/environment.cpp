#include "runtime/environment.hpp"

#include "actors/controller/leader_election.hpp"
#include "runtime/actor_setup.hpp"

#include <cstdlib>

namespace kozmo::runtime {

std::string pod_namespace() {
  const char* ns = std::getenv("POD_NAMESPACE");
  return ns && *ns ? ns : "";
}

status apply_environment(engine_options& eo) {
  if (eo.performance.workers == 0) {
    auto workers = workers_from_environment();
    if (!workers)
      return workers.err();
    eo.performance.workers = *workers;
  }
  if (eo.parts.task_template_namespace.empty())
    eo.parts.task_template_namespace = pod_namespace();
  if (eo.leader_election.enabled && eo.leader_election.identity.empty())
    eo.leader_election.identity = controller::default_identity(); // $POD_NAME or the host name
  return ok;
}

} // namespace kozmo::runtime
