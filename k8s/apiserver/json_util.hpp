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
