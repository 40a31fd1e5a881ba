// Small helpers for editing objects that came from clients and may have any shape.
#pragma once

#include "k8s/json/value.hpp"

#include <string_view>

namespace kozmo::apiserver {

// The member `key` of `v` as an object: `v` becomes an object if it is not one, and the member
// is created (or replaced, when it holds something else) as an empty object.
inline json::value& member_object(json::value& v, std::string_view key) {
  if (!v.is_object())
    v = json::object{};
  json::value& m = v.as_object()[key];
  if (!m.is_object())
    m = json::object{};
  return m;
}

// Sets `key` of an object unless it holds a value already (null counts as unset), as the API's
// defaulting does.
inline void set_default(json::value& obj, std::string_view key, json::value v) {
  if (!obj.is_object())
    return;
  if (const auto* existing = obj.find(key); existing && !existing->is_null())
    return;
  obj.as_object().set(key, std::move(v));
}

// The member `key` of `v` as an array, with the same rules.
inline json::value& member_array(json::value& v, std::string_view key) {
  if (!v.is_object())
    v = json::object{};
  json::value& m = v.as_object()[key];
  if (!m.is_array())
    m = json::array{};
  return m;
}

} // namespace kozmo::apiserver
