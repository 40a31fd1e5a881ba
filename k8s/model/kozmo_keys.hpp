// Every annotation and label key Kozmo reads or writes on Kubernetes objects, in one place, so
// that the part that writes a key and the part that reads it cannot drift apart. What each one
// means is in docs/gpu-scheduling.md ("Asking for GPUs", "What the scheduler writes"),
// docs/local.md (the shape file, "Scripting a pod's life on simulated nodes", the process runtime),
// docs/training.md and docs/tasks.md.
#pragma once

namespace kozmo::keys {

// --- GPU scheduling requests (actors/scheduler/pod_scheduling_spec.hpp) -------------------
// Kozmo's flat keys.
inline constexpr const char* virtual_cluster = "kozmo.io/virtual-cluster";
inline constexpr const char* priority = "kozmo.io/priority";
inline constexpr const char* leaf_cell_type = "kozmo.io/leaf-cell-type";
inline constexpr const char* leaf_cell_number = "kozmo.io/leaf-cell-number";
inline constexpr const char* pinned_cell = "kozmo.io/pinned-cell";
inline constexpr const char* lazy_preemption = "kozmo.io/lazy-preemption";
inline constexpr const char* gang = "kozmo.io/gang";
inline constexpr const char* gang_members = "kozmo.io/gang-members"; // "4x2,1x4": pods x GPUs
// Elastic gangs (scheduler_core.hpp note 10): the fewest pods the gang runs with; its
// gang-members are the most.
inline constexpr const char* gang_min_members = "kozmo.io/gang-min-members";
// Gang topology (docs/gpu-scheduling.md "Gang topology: levels, subgroups, soft topology"): a
// cell level name or cell type the whole gang must fit in (hard) or should (soft), and the
// pod's subgroup with its own level and minimum.
inline constexpr const char* gang_level = "kozmo.io/gang-level";
inline constexpr const char* preferred_level = "kozmo.io/preferred-level";
inline constexpr const char* subgroup = "kozmo.io/subgroup";
inline constexpr const char* subgroup_min_members = "kozmo.io/subgroup-min-members";
inline constexpr const char* subgroup_level = "kozmo.io/subgroup-level";
// HiveD's own, accepted unchanged; the HiveD spec wins over the flat keys.
inline constexpr const char* hived_spec = "hivedscheduler.microsoft.com/pod-scheduling-spec";
// Written by the scheduler at bind: the gang's placement (read back after a restart) and the
// pod's GPU indices.
inline constexpr const char* bind_info = "hivedscheduler.microsoft.com/pod-bind-info";
inline constexpr const char* leaf_cell_isolation = "hivedscheduler.microsoft.com/pod-leaf-cell-isolation";

// --- Simulated nodes (actors/kubelet) -------------------------------------------------------
// kozmo.io/sim-duration, sim-pull-duration, sim-exit-code, sim-fail-times, sim-fail,
// sim-restart-backoff, sim-stop-duration: see actors/kubelet/pod_script.hpp.
inline constexpr const char* sim_prefix = "kozmo.io/sim-";
// Node labels.
inline constexpr const char* simulated = "kozmo.io/simulated";
inline constexpr const char* gpu_type = "kozmo.io/gpu-type";
inline constexpr const char* gpus_of_type_prefix = "kozmo.io/gpus."; // + type: GPUs of that type
// The runtime that runs a pod's containers: "sim" (simulated) or "process" (local processes).
// A node label set by `kozmo local --runtime`, and a pod annotation that overrides it.
inline constexpr const char* runtime = "kozmo.io/runtime";

// --- Training jobs (actors/training) ----------------------------------------------------------
// On a job: the pods deleted and recreated to restart a replica (a decimal count), which its
// backoffLimit counts. An annotation because any CRD keeps it (the peer's prunes status fields
// it does not declare).
inline constexpr const char* recreated_pods = "kozmo.io/recreated-pods";

// --- Task executions (actors/tasks) -----------------------------------------------------------
// On a TaskExecution: the project its ResourcePool's perProject limit counts it in (else its
// namespace).
inline constexpr const char* project = "kozmo.io/project";
// On a task's pods: the task and the attempt (0-based) the pod runs.
inline constexpr const char* task_name = "kozmo.io/task-name";
inline constexpr const char* task_attempt = "kozmo.io/task-attempt";
// On a TaskExecution while the controller may still hold its pods or pool token.
inline constexpr const char* task_finalizer = "kozmo.io/task-execution";
// The cluster autoscaler's annotation: a task pod is never moved to shrink the cluster.
inline constexpr const char* safe_to_evict = "cluster-autoscaler.kubernetes.io/safe-to-evict";
// On a TaskExecution with spec.cache: "true" recomputes (once per value set) instead of reusing
// stored outputs, and stores the new ones over them.
inline constexpr const char* cache_overwrite = "kozmo.io/cache-overwrite";

} // namespace kozmo::keys
