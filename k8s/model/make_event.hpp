// Building core/v1 Events about an object, as kubelets and schedulers post them.
#pragma once

#include "k8s/json/value.hpp"
#include "k8s/model/event.hpp"
#include "k8s/model/object_meta.hpp"

#include <chrono>
#include <string>

namespace kozmo::k8s {

// A pod's reference for make_event.
object_reference pod_reference(const std::string& ns, const std::string& name, const std::string& uid);

// An Event named <object>.<unique suffix> in the object's namespace (generateName), of type
// "Normal" or "Warning", counted once, first and last seen now.
// `source.component` is "kubelet", "default-scheduler", ...; `source.host` the node, if any.
json::value make_event(const object_reference& about, const event_source& source, const std::string& type,
                       const std::string& reason, const std::string& message,
                       std::chrono::system_clock::time_point now);

} // namespace kozmo::k8s
