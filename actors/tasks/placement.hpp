// Where a task pod may run: GPU accelerator selectors, interruptible (spot) nodes, the
// platform's default tolerations and node selector. Edits a pod spec as JSON (so nothing the
// user wrote is lost). The peer's rules. Pure.
#pragma once

#include "actors/tasks/platform_config.hpp"
#include "actors/tasks/task_spec.hpp"
#include "k8s/json/value.hpp"

#include <vector>

namespace kozmo::tasks {

// ANDs `requirements` into every required node selector term of the pod (terms are ORed, so
// each keeps its meaning and gains the requirement); with no term yet, adds one with them.
void add_required_node_selector_requirements(json::value& pod_spec, const std::vector<json::value>& requirements);

// Only when a container limits the GPU resource: the device as a required node affinity on the
// device label (In [device]) with a NoSchedule toleration for it; a partition size likewise on
// the partition label (In [size], tolerated Equal); `unpartitioned` as DoesNotExist on the
// partition label (nothing to tolerate).
void apply_gpu_selectors(json::value& pod_spec, const gpu_accelerator& accelerator, const platform_config& config);

// Tolerations (interruptible ones when `interruptible`, then the defaults) ahead of the pod's
// own; the platform's default node selector under the pod's; the interruptible or
// non-interruptible node selector requirement.
void apply_interruptible_and_defaults(json::value& pod_spec, bool interruptible, const platform_config& config);

} // namespace kozmo::tasks
