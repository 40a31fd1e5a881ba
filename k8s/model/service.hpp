// corev1.Service: the headless services that give training workers stable DNS names.
#pragma once

#include "k8s/model/object_meta.hpp"

#include <string_view>

namespace kozmo::k8s {

// intstr.IntOrString ("targetPort": 8080 or "http").
struct int_or_string {
  bool is_string = false;
  std::int64_t int_value = 0;
  std::string string_value;
  friend bool operator==(const int_or_string&, const int_or_string&) = default;
};

struct service_port {
  std::string name;
  std::string protocol; // "TCP"
  std::int32_t port = 0;
  std::optional<int_or_string> target_port;
  std::int32_t node_port = 0;
  friend bool operator==(const service_port&, const service_port&) = default;
};

struct service_spec {
  std::vector<service_port> ports;
  string_map selector;
  std::string cluster_ip; // "None" for a headless service
  std::vector<std::string> cluster_ips;
  std::string type;       // "ClusterIP", "NodePort", "LoadBalancer", "ExternalName"
  bool publish_not_ready_addresses = false;
  friend bool operator==(const service_spec&, const service_spec&) = default;
};

struct service {
  static constexpr std::string_view api_version = "v1";
  static constexpr std::string_view kind = "Service";
  static constexpr std::string_view resource = "services";
  static constexpr bool namespaced = true;

  object_meta metadata;
  service_spec spec;
  friend bool operator==(const service&, const service&) = default;
};

} // namespace kozmo::k8s
