// corev1.Event: what `kubectl describe` shows under "Events".
#pragma once

#include "k8s/model/object_meta.hpp"

#include <string_view>

namespace kozmo::k8s {

struct event_source {
  std::string component;
  std::string host;
  friend bool operator==(const event_source&, const event_source&) = default;
};

struct event {
  static constexpr std::string_view api_version = "v1";
  static constexpr std::string_view kind = "Event";
  static constexpr std::string_view resource = "events";
  static constexpr bool namespaced = true;

  object_meta metadata;
  object_reference involved_object;
  std::string reason;
  std::string message;
  event_source source;
  std::optional<time_point> first_timestamp;
  std::optional<time_point> last_timestamp;
  std::int32_t count = 0;
  std::string type; // "Normal" or "Warning"
  std::optional<time_point> event_time; // MicroTime on the wire
  std::string action;
  std::string reporting_component;
  std::string reporting_instance;
  friend bool operator==(const event&, const event&) = default;
};

} // namespace kozmo::k8s
