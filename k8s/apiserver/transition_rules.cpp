#include "k8s/apiserver/transition_rules.hpp"

#include <string>
#include <unordered_map>

namespace kozmo::apiserver {

bool is_immutability_rule(std::string_view rule) {
  std::string compact;
  for (char c : rule)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
      compact += c;
  return compact == "self==oldSelf";
}

namespace {

// How a CEL error names the type of the value that broke a rule (Kubernetes prints the type,
// not the value: `Invalid value: "object"`).
std::string cel_type(const json::value& v) {
  if (v.is_object())
    return "object";
  if (v.is_array())
    return "array";
  if (v.is_string())
    return "string";
  if (v.is_int())
    return "integer";
  if (v.is_number())
    return "number";
  if (v.is_bool())
    return "boolean";
  return "null";
}

// The values of a map-list item's keys, or nothing when one is missing (no correlation then).
bool list_key_of(const json::value& item, const json::value& keys, json::array& out) {
  if (!item.is_object())
    return false;
  for (const auto& key : keys.as_array()) {
    const json::value* v = key.is_string() ? item.find(key.as_string()) : nullptr;
    if (!v)
      return false;
    out.push_back(*v);
  }
  return true;
}

class checker {
public:
  std::vector<field_error> errs;

  // Depth is bounded by the schema's own depth, which the CRD fixed (objects deeper than their
  // schema stop at preserve-unknown-fields).
  void walk(const json::value& schema, const json::value& now, const json::value& before, const std::string& path) {
    if (!schema.is_object())
      return;
    check_rules(schema, now, before, path);
    if (now.is_object() && before.is_object()) {
      walk_members(schema, now.as_object(), before.as_object(), path);
      return;
    }
    if (now.is_array() && before.is_array())
      walk_map_list(schema, now.as_array(), before.as_array(), path);
  }

private:
  void check_rules(const json::value& schema, const json::value& now, const json::value& before, const std::string& path) {
    const json::value* rules = schema.find("x-kubernetes-validations");
    if (!rules || !rules->is_array())
      return;
    for (const auto& rule : rules->as_array()) {
      if (!is_immutability_rule(rule.get_string("rule")) || now == before)
        continue;
      std::string message = rule.get_string("message");
      if (message.empty())
        message = "failed rule: " + rule.get_string("rule");
      errs.push_back(field_error::invalid(path, go_quote(cel_type(now)), message));
    }
  }

  void walk_members(const json::value& schema, const json::object& now, const json::object& before, const std::string& path) {
    const json::value* props = schema.find("properties");
    const json::value* extra = schema.find("additionalProperties");
    for (const auto& [key, child] : now) {
      const json::value* old_child = before.find(key);
      if (!old_child)
        continue;
      const json::value* sub = props && props->is_object() ? props->find(key) : nullptr;
      if (!sub && extra && extra->is_object())
        sub = extra;
      if (sub)
        walk(*sub, child, *old_child, path.empty() ? key : path + "." + key);
    }
  }

  void walk_map_list(const json::value& schema, const json::array& now, const json::array& before, const std::string& path) {
    const json::value* items = schema.find("items");
    const json::value* keys = schema.find("x-kubernetes-list-map-keys");
    if (!items || schema.get_string("x-kubernetes-list-type") != "map" || !keys || !keys->is_array())
      return;
    // The stored items by key, so that a long list costs one pass over each side.
    std::unordered_map<std::string, const json::value*> stored;
    for (const auto& old_item : before) {
      json::array old_key;
      if (list_key_of(old_item, *keys, old_key))
        stored.emplace(json::dump(json::value(std::move(old_key))), &old_item);
    }
    for (std::size_t i = 0; i < now.size(); ++i) {
      json::array key;
      if (!list_key_of(now[i], *keys, key))
        continue;
      auto it = stored.find(json::dump(json::value(std::move(key))));
      if (it != stored.end())
        walk(*items, now[i], *it->second, path + "[" + std::to_string(i) + "]");
    }
  }
};

} // namespace

std::vector<field_error> check_transition_rules(const json::value& schema, const json::value& obj,
                                                const json::value& old) {
  checker c;
  c.walk(schema, obj, old, "");
  return std::move(c.errs);
}

} // namespace kozmo::apiserver
