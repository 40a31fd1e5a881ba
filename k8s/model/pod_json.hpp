// Edits of pods and containers held as JSON (built from a user's template, so that every field
// the user wrote reaches the pod): the few that more than one builder needs.
#pragma once

#include "k8s/json/value.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kozmo::k8s {

// A map of strings as a JSON object (labels, annotations, a selector's matchLabels).
inline json::value string_map_json(const std::map<std::string, std::string>& m) {
  json::value out = json::object{};
  for (const auto& [k, v] : m)
    out[k] = v;
  return out;
}

// Appends the variables a container does not set already: the user's own value wins.
inline void add_env_if_absent(json::value& container, const std::vector<std::pair<std::string, std::string>>& env) {
  json::value& list = container["env"];
  if (!list.is_array())
    list = json::array{};
  for (const auto& [name, value] : env) {
    bool present = std::any_of(list.as_array().begin(), list.as_array().end(),
                               [&name = name](const json::value& e) { return e.get_string("name") == name; });
    if (!present)
      list.as_array().push_back(json::object{{"name", name}, {"value", value}});
  }
}

} // namespace kozmo::k8s
