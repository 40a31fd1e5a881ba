// corev1.Namespace.
#pragma once

#include "k8s/model/object_meta.hpp"

#include <string_view>

namespace kozmo::k8s {

struct namespace_object {
  static constexpr std::string_view api_version = "v1";
  static constexpr std::string_view kind = "Namespace";
  static constexpr std::string_view resource = "namespaces";
  static constexpr bool namespaced = false;

  object_meta metadata;
  std::vector<std::string> finalizers; // spec.finalizers
  std::string phase;                   // status.phase: "Active" or "Terminating"
  friend bool operator==(const namespace_object&, const namespace_object&) = default;
};

} // namespace kozmo::k8s
