// The pod of one attempt of a container or pod task: what the task wrote, over its pod
// template, with the platform's settings. Pure.
//
//   metadata  name "<task>-<attempt>" (names.hpp); the task's labels and annotations (not
//             kubectl's last-applied-configuration) over the platform's default labels and
//             annotations (safe-to-evict "false" by default); kozmo.io/task-name and
//             kozmo.io/task-attempt; the task as controlling owner.
//   spec      the pod template under the task's pod (pod_template_merge.hpp); command and args
//             templates rendered (command_template.hpp); identity env (KOZMO_TASK_NAME, ...)
//             and spec.environment added where a container does not set them; resources per
//             resources.hpp (the primary container assigned or merged with spec.resources, the
//             others kept in range); restartPolicy Never (retries are the task's); the
//             platform's scheduler name when the pod names none; tolerations, node selector and
//             node affinity per placement.hpp; spec.secrets by reference (env secretKeyRef, or a
//             secret volume with each key mounted read-only at its path), in every container;
//             with spec.dataLoading, the copilot's volumes and containers (copilot.hpp).
#pragma once

#include "actors/tasks/platform_config.hpp"
#include "actors/tasks/task_spec.hpp"
#include "k8s/error.hpp"
#include "k8s/json/value.hpp"
#include "k8s/model/custom_object.hpp"

namespace kozmo::tasks {

struct attempt_pod_input {
  const k8s::custom_object* task = nullptr;
  const task_spec* spec = nullptr;
  const platform_config* config = nullptr;
  int attempt = 0;
  bool interruptible = false;
  const json::value* pod_template = nullptr; // a PodTemplate object, or null
};

// Where data loading puts a task's inputs and outputs inside its pod (the peer's layout).
inline constexpr const char* inputs_path = "/var/kozmo/inputs";
inline constexpr const char* outputs_path = "/var/kozmo/outputs";

// Errors are the user's (a template variable that does not exist): the task fails with them.
expected<json::value> build_attempt_pod(const attempt_pod_input& in);

// Where a pod spec sits in what the task builds, for decorate_pod_spec.
struct pod_spec_site {
  std::string primary;  // the container spec.resources applies to
  std::string path;     // error messages: "spec.pod.spec", "spec.job.pytorchReplicaSpecs.Worker.template.spec"
  std::string pod_name; // {{ .PerRetryUniqueKey }} in command templates
};

// What the task adds to a pod spec it runs (the attempt's pod, each replica template of a
// training job): command and args templates rendered, identity env and spec.environment where
// a container does not set them, resources (the primary container merged with spec.resources,
// assigned for a container task; the others kept in range), the platform's scheduler name when
// none is named, and placement (interruptible, GPU selectors). Errors are the user's.
status decorate_pod_spec(json::value& pod_spec, const attempt_pod_input& in, const pod_spec_site& site);

// The metadata of what an attempt creates (its pod, its job): name `<task>-<attempt>`, the
// namespace, the platform's default labels (and, for a pod, annotations) under the task's own
// (not kubectl's last-applied-configuration), kozmo.io/task-name and kozmo.io/task-attempt, and
// the task as controlling owner.
json::value attempt_metadata(const k8s::custom_object& task, const platform_config& config, int attempt,
                             bool for_pod);

// The controller reference a task puts on what it creates.
json::value owner_reference(const k8s::custom_object& task);

} // namespace kozmo::tasks
