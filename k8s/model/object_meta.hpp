// metav1.ObjectMeta and the small reference types every kind shares.
//
// Models are plain structs with the Kubernetes field names in snake_case. They hold what Kozmo
// reads; unknown fields are skipped when decoding. So to_json of a model is for building NEW
// objects only: an update of an existing object is a merge patch of the fields the caller
// changes, which never drops what the model does not know (see codec.hpp).
#pragma once

#include "k8s/model/flat_map.hpp"
#include "k8s/model/time.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kozmo::k8s {

// Labels, annotations, selectors: string keys to string values, in key order.
using string_map = flat_map<std::string, std::string>;

struct owner_reference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  std::optional<bool> controller;
  std::optional<bool> block_owner_deletion;
  friend bool operator==(const owner_reference&, const owner_reference&) = default;
};

struct object_meta {
  std::string name;
  std::string generate_name;
  std::string namespace_; // "namespace" on the wire
  std::string uid;
  std::string resource_version;
  std::int64_t generation = 0;
  string_map labels;
  string_map annotations;
  std::vector<owner_reference> owner_references;
  std::vector<std::string> finalizers;
  std::optional<time_point> creation_timestamp;
  std::optional<time_point> deletion_timestamp;
  std::optional<std::int64_t> deletion_grace_period_seconds;

  // The owner reference with controller: true, if any.
  const owner_reference* controller_ref() const {
    for (auto& o : owner_references)
      if (o.controller.value_or(false))
        return &o;
    return nullptr;
  }
  friend bool operator==(const object_meta&, const object_meta&) = default;
};

// corev1.ObjectReference (Event.involvedObject, Binding.target).
struct object_reference {
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string api_version;
  std::string resource_version;
  std::string field_path;
  friend bool operator==(const object_reference&, const object_reference&) = default;
};

// A status condition as pods and nodes carry it.
struct condition {
  std::string type;
  std::string status; // "True", "False", "Unknown"
  std::string reason;
  std::string message;
  std::optional<time_point> last_transition_time;
  std::optional<time_point> last_probe_time;     // pods
  std::optional<time_point> last_heartbeat_time; // nodes
  friend bool operator==(const condition&, const condition&) = default;
};

// Finds a condition by type in a list of conditions.
template <class Conditions>
auto find_condition(Conditions& list, std::string_view type) -> decltype(&list.front()) {
  for (auto& c : list)
    if (c.type == type)
      return &c;
  return nullptr;
}

} // namespace kozmo::k8s
