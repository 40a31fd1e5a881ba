// The pod template store: every PodTemplate, kept current by a watch, for the task actors that
// build pods over them (a change applies to the next attempt that is built).
//
//   podtemplates watch ──object_event──▶ template store
//   task ──template_request (request)──▶ template store ──template_reply
//
// A template is looked up in the task's namespace, then in the platform's namespace (the
// controller's own, `fallback_namespace`). A miss is confirmed with a GET before it is answered,
// so a template created a moment before its task (one `kubectl apply` of both) is never missed
// because the watch has not shown it yet.
#pragma once

#include <caf/fwd.hpp>

#include <memory>
#include <string>

namespace kozmo::client {
class client;
}

namespace kozmo::tasks {

struct template_store_config {
  std::shared_ptr<client::client> cli;
  std::string fallback_namespace = "kozmo-system";
};

caf::actor spawn_template_store(caf::actor_system& sys, template_store_config cfg);

} // namespace kozmo::tasks
