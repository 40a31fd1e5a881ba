// A quantity held in a JSON object, as Kubernetes writes them ({"storage": "10Gi"}, {"pods": 4}).
#pragma once

#include "k8s/json/value.hpp"
#include "k8s/model/quantity.hpp"

#include <string_view>

namespace kozmo::k8s {

// The member `key` of `object` as a quantity; zero when the object, the member or a readable
// quantity is missing (what a controller counts for an unset amount).
inline quantity quantity_member(const json::value* object, std::string_view key) {
  const json::value* v = object != nullptr && object->is_object() ? object->find(key) : nullptr;
  if (v == nullptr)
    return {};
  auto q = quantity::parse(json::scalar_text(*v));
  return q ? *q : quantity{};
}

} // namespace kozmo::k8s
