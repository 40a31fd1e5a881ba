#include "k8s/json/value.hpp"

#include <limits>

#include <algorithm>

namespace kozmo::json {

object::object(std::initializer_list<member> init) {
  for (const auto& m : init)
    set(m.first, m.second);
}

value* object::find(std::string_view key) {
  for (auto& m : members_)
    if (m.first == key)
      return &m.second;
  return nullptr;
}

const value* object::find(std::string_view key) const {
  for (const auto& m : members_)
    if (m.first == key)
      return &m.second;
  return nullptr;
}

value& object::operator[](std::string_view key) {
  if (auto* v = find(key))
    return *v;
  members_.emplace_back(std::string(key), value{});
  return members_.back().second;
}

value& object::set(std::string_view key, value v) {
  if (auto* existing = find(key)) {
    *existing = std::move(v);
    return *existing;
  }
  members_.emplace_back(std::string(key), std::move(v));
  return members_.back().second;
}

bool object::erase(std::string_view key) {
  auto it = std::find_if(members_.begin(), members_.end(),
                         [&](const member& m) { return m.first == key; });
  if (it == members_.end())
    return false;
  members_.erase(it);
  return true;
}

bool operator==(const object& a, const object& b) {
  if (a.size() != b.size())
    return false;
  for (const auto& [k, v] : a) {
    const value* other = b.find(k);
    if (!other || !(*other == v))
      return false;
  }
  return true;
}

const value* value::find(std::string_view key) const {
  return is_object() ? as_object().find(key) : nullptr;
}

value* value::find(std::string_view key) {
  return is_object() ? as_object().find(key) : nullptr;
}

const value* value::at_path(std::initializer_list<std::string_view> path) const {
  const value* cur = this;
  for (auto key : path) {
    cur = cur->find(key);
    if (!cur)
      return nullptr;
  }
  return cur;
}

value* value::at_path(std::initializer_list<std::string_view> path) {
  value* cur = this;
  for (auto key : path) {
    cur = cur->find(key);
    if (!cur)
      return nullptr;
  }
  return cur;
}

value& value::operator[](std::string_view key) {
  if (is_null())
    v_ = json::object{};
  return as_object()[key];
}

std::string value::get_string(std::string_view key, std::string_view fallback) const {
  const value* v = find(key);
  return v && v->is_string() ? v->as_string() : std::string(fallback);
}

std::int64_t value::get_int(std::string_view key, std::int64_t fallback) const {
  const value* v = find(key);
  if (!v)
    return fallback;
  if (v->is_int())
    return v->as_int();
  if (v->is_double()) {
    // Saturated, not cast: a double outside int64's range has no integer to become.
    double d = v->as_double();
    if (d != d)
      return fallback;
    if (d >= 9223372036854775807.0)
      return std::numeric_limits<std::int64_t>::max();
    if (d <= -9223372036854775808.0)
      return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(d);
  }
  return fallback;
}

bool value::get_bool(std::string_view key, bool fallback) const {
  const value* v = find(key);
  return v && v->is_bool() ? v->as_bool() : fallback;
}

bool operator==(const value& a, const value& b) {
  // 1 and 1.0 compare equal, like decoded JSON numbers in Go.
  if (a.is_number() && b.is_number()) {
    if (a.is_int() && b.is_int())
      return a.as_int() == b.as_int();
    return a.as_double() == b.as_double();
  }
  return a.v_ == b.v_;
}

} // namespace kozmo::json
