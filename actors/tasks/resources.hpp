// Resource overrides: the requests and limits a task pod's containers get, from what the task
// wrote, the platform's defaults and the platform's caps. The peer's rules. Pure.
//
// For one resource, with request R, limit L, platform default D and platform cap C (zero means
// unset, and a zero cap means no cap):
//   R = R, else L, else D;   L = L, else R;   then R ≤ C, L ≤ C, R ≤ L.
// E.g. with D = 10, C = 20: (0, 0) → 10/10; (1, 40) → 1/20; (40, 50) → 20/20; (10, 2) → 2/2.
//
// cpu and memory are always settled this way when assigning; ephemeral-storage and the GPU
// only when the container asks for them. "gpu" is renamed to the platform's GPU resource name
// (default nvidia.com/gpu); "storage" is dropped (no cluster enforces it); a zero GPU is left out.
#pragma once

#include "actors/tasks/platform_config.hpp"
#include "k8s/json/value.hpp"
#include "k8s/model/quantity.hpp"

namespace kozmo::tasks {

struct resource_requirement {
  k8s::quantity request;
  k8s::quantity limit;
};

// One resource, by the rule above.
resource_requirement adjust_or_default(const k8s::quantity& request, const k8s::quantity& limit,
                                       const k8s::quantity& platform_default, const k8s::quantity& platform_cap);

enum class resource_mode {
  assign,           // container tasks: every resource settled, defaults where unset
  merge_existing,   // a pod task's primary container: overrides over what it has, then assign
  ensure_in_range,  // a pod task's other containers: only what they set, capped (never raised)
};

// `resources` is a container's {requests, limits} as JSON (null for none); `overrides` the
// task's spec.resources (null for none). Returns the container's new resources.
json::value apply_resources(const json::value& resources, const json::value& overrides, resource_mode mode,
                            const platform_config& config);

// Whether any container of a pod spec (JSON) limits or requests `resource`.
bool pod_uses_resource(const json::value& pod_spec, const std::string& resource);

} // namespace kozmo::tasks
