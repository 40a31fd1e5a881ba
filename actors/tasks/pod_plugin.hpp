// The container and pod plugins: an attempt is one pod, built by task_pod.hpp and read by
// demystify. They differ only in what the user writes (one container, or a pod with a primary
// container whose exit decides) and share everything else. Pure.
#pragma once

#include "actors/demystify/demystify.hpp"
#include "actors/tasks/plugin.hpp"

#include <memory>

namespace kozmo::tasks {

std::shared_ptr<const plugin> container_plugin();
std::shared_ptr<const plugin> pod_plugin();

// How a pod reads (demystify) as an attempt's phase, for every plugin that runs pods; with
// `cleanup_failures`, every failure also deletes what the attempt created (a training job).
phase_info phase_of(const demystify::verdict& v, bool cleanup_failures = false);
// The platform's grace periods, as demystify takes them.
demystify::grace_periods grace_of(const platform_config& c);

} // namespace kozmo::tasks
