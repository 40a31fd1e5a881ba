// An Event one of Kozmo's controllers wants recorded: about which object, from which
// component, what happened. The event recorder (event_recorder_actor.hpp) turns notes into
// core/v1 Events, counting repeats the way Kubernetes' own recorder does.
#pragma once

#include "k8s/model/event.hpp"
#include "k8s/model/object_meta.hpp"

#include <string>

namespace kozmo::controller {

struct event_note {
  k8s::object_reference about;
  k8s::event_source source; // component ("kozmo-scheduler", "kubelet", ...) and host (a node)
  std::string type;         // "Normal" or "Warning"
  std::string reason;       // CamelCase: "FailedScheduling", "Preempted"
  std::string message;
};

// A note about a pod (the most common subject).
event_note pod_note(const std::string& ns, const std::string& name, const std::string& uid,
                    const k8s::event_source& source, std::string type, std::string reason, std::string message);

} // namespace kozmo::controller
