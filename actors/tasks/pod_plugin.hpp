// The container and pod plugins: an attempt is one pod, built by task_pod.hpp and read by
// demystify. They differ only in what the user writes (one container, or a pod with a primary
// container whose exit decides) and share everything else. Pure.
#pragma once

#include "actors/tasks/plugin.hpp"

#include <memory>

namespace kozmo::tasks {

std::shared_ptr<const plugin> container_plugin();
std::shared_ptr<const plugin> pod_plugin();

} // namespace kozmo::tasks
