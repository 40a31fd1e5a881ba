// Pod templates under task pods: a PodTemplate (the task's spec.podTemplateName, else the
// platform's default-pod-template-name, looked up in the task's namespace) is the base and the
// task's pod is laid over it. The peer's rules:
//   - pod level: the template's spec, with every field the task sets laid over it (objects
//     merge key by key, lists are the template's followed by the task's, a set scalar wins);
//   - containers: each of the task's containers starts from the template's container named
//     "default" (if any), then, for the primary container, the one named "primary", then the
//     task's own container over them; other template containers are not copied (init
//     containers alike with "default-init" / "primary-init");
//   - metadata: the template's labels and annotations under the task's.
// "Set" follows the peer's merge library: an empty string, zero, false or null does not
// override. Pure.
#pragma once

#include "k8s/json/value.hpp"

#include <string>

namespace kozmo::tasks {

// `templ` is the PodTemplate object (its .template holds metadata and spec); `pod` is the
// task's pod (metadata + spec). Returns the merged pod.
json::value merge_pod_template(const json::value& templ, const json::value& pod, const std::string& primary);

// The merge of two values by the rules above (`over` laid over `base`).
json::value merge_values(const json::value& base, const json::value& over);

} // namespace kozmo::tasks
