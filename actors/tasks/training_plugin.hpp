// Training-job tasks: `spec.type: pytorch | tensorflow | mpi | xgboost | paddle | jax | caffe2`
// with `spec.job` holding that kind's spec as users write it. An attempt is one job of the kind
// (the training controller runs it; Kozmo's scheduler gangs its pods), named like an attempt's
// pod ("<task>-<attempt>"), controlled by the task. Pure.
//
//   the job      metadata: the task's labels and annotations over the platform's defaults,
//                kozmo.io/task-name and kozmo.io/task-attempt, the task as controlling owner;
//                spec: spec.job with every replica's pod template decorated as an attempt's pod
//                is (task_pod.hpp's decorate_pod_spec: the PodTemplate under it, identity env,
//                spec.resources on the replica's main container, scheduler name, interruptible
//                and GPU selectors), and the two task labels on each template, so the job's
//                pods reach the task too.
//   phases       the job's conditions: Succeeded → success; Failed → a retryable user failure
//                (the next attempt is a new job); Suspended → Queued; Running or Restarting →
//                Running; Created (or none yet) → Queued. The job's pods are demystified as an
//                attempt's pod is: one that cannot start (InvalidImageName at once,
//                ImagePullBackOff past its grace period, ...) fails the attempt with its reason,
//                naming the pod, and the job is deleted; a pod waiting to be scheduled tells why.
//   validation   the job is decoded as the training controller will decode it
//                (training/job_model.hpp); a malformed one fails the task with InvalidSpec
//                before anything is created.
#pragma once

#include "actors/tasks/plugin.hpp"

#include <memory>
#include <string>
#include <vector>

namespace kozmo::tasks {

// spec.type of each training kind, in the training core's order: "pytorch", "tensorflow", ...
std::vector<std::string> training_task_types();

// The plugin of one type ("pytorch"); null for a type that is not a training kind.
std::shared_ptr<const plugin> training_plugin(const std::string& type);

// The REST resource of a type's job ({"kubeflow.org", "v1", "pytorchjobs"}).
object_kind training_job_kind(const std::string& type);

} // namespace kozmo::tasks
