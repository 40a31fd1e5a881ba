// What the CLI takes from the environment for the engine, which reads none itself: the worker
// count ($KOZMO_WORKERS), the namespace Kozmo runs in ($POD_NAMESPACE: the tasks' PodTemplates,
// the Lease's default namespace) and who this replica is ($POD_NAME, for leader election).
// ($KUBECONFIG and the in-cluster service account are still found by k8s/client's
// discover_config when api.kubeconfig is "".)
#pragma once

#include <kozmo/options.hpp>
#include <kozmo/status.hpp>

#include <string>

namespace kozmo::runtime {

// Fills what `eo` leaves to the environment: performance.workers when 0, the tasks' template
// namespace, and the election identity when empty. An error names a bad variable.
status apply_environment(engine_options& eo);

// $POD_NAMESPACE, or "" when unset.
std::string pod_namespace();

} // namespace kozmo::runtime
