// corev1.PodTemplate (the kind); pod_template_spec itself lives in pod.hpp.
#pragma once

#include "k8s/model/pod.hpp"

#include <string_view>

namespace kozmo::k8s {

struct pod_template {
  static constexpr std::string_view api_version = "v1";
  static constexpr std::string_view kind = "PodTemplate";
  static constexpr std::string_view resource = "podtemplates";
  static constexpr bool namespaced = true;

  object_meta metadata;
  pod_template_spec template_; // "template" on the wire
  friend bool operator==(const pod_template&, const pod_template&) = default;
};

} // namespace kozmo::k8s
