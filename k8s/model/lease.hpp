// coordination.k8s.io/v1 Lease: leader election of controller replicas.
#pragma once

#include "k8s/model/object_meta.hpp"

#include <string_view>

namespace kozmo::k8s {

struct lease_spec {
  std::string holder_identity;
  std::optional<std::int32_t> lease_duration_seconds;
  std::optional<time_point> acquire_time; // MicroTime on the wire
  std::optional<time_point> renew_time;   // MicroTime on the wire
  std::optional<std::int32_t> lease_transitions;
  friend bool operator==(const lease_spec&, const lease_spec&) = default;
};

struct lease {
  static constexpr std::string_view api_version = "coordination.k8s.io/v1";
  static constexpr std::string_view kind = "Lease";
  static constexpr std::string_view resource = "leases";
  static constexpr bool namespaced = true;

  object_meta metadata;
  lease_spec spec;
  friend bool operator==(const lease&, const lease&) = default;
};

} // namespace kozmo::k8s
