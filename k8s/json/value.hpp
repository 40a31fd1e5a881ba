// A JSON document tree that keeps every field, in order.
//
// The embedded API server stores objects as `json::value` so that a write never drops a field
// the typed model does not know, and patches (merge, JSON, strategic) operate on it. Objects
// keep insertion order (Kubernetes objects are small, so lookup is a linear scan) so that what
// a client wrote comes back in the same order. Integers and floating-point numbers stay
// distinct: "resourceVersion": 12 is written back as 12, not 12.0.
//
// Parsing is done with simdjson (see parse.cpp); this header does not include it.
#pragma once

#include "k8s/error.hpp"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kozmo::json {

class value;

using array = std::vector<value>;

// An object with insertion-ordered members and unique keys.
class object {
public:
  using member = std::pair<std::string, value>;
  using iterator = std::vector<member>::iterator;
  using const_iterator = std::vector<member>::const_iterator;

  object() = default;
  object(std::initializer_list<member> init);

  value* find(std::string_view key);
  const value* find(std::string_view key) const;
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  // The member named `key`, created as null at the end if missing.
  value& operator[](std::string_view key);
  // Sets `key` (keeping its position if present, appending otherwise).
  value& set(std::string_view key, value v);
  // Removes `key`; returns whether it was there.
  bool erase(std::string_view key);

  // Defined below `value` (the member type must be complete: clang with libstdc++ insists).
  std::size_t size() const;
  bool empty() const;
  iterator begin();
  iterator end();
  const_iterator begin() const;
  const_iterator end() const;

  // Order-insensitive equality: two objects are equal when they have the same keys with
  // equal values.
  friend bool operator==(const object& a, const object& b);

private:
  std::vector<member> members_;
};

class value {
public:
  enum class kind { null, boolean, integer, number, string, array, object };

  value() = default;
  value(std::nullptr_t) {}
  value(bool b) : v_(b) {}
  value(int i) : v_(static_cast<std::int64_t>(i)) {}
  value(long i) : v_(static_cast<std::int64_t>(i)) {}
  value(long long i) : v_(static_cast<std::int64_t>(i)) {}
  value(unsigned u) : v_(static_cast<std::int64_t>(u)) {}
  value(double d) : v_(d) {}
  value(const char* s) : v_(std::string(s)) {}
  value(std::string s) : v_(std::move(s)) {}
  value(std::string_view s) : v_(std::string(s)) {}
  value(json::array a) : v_(std::move(a)) {}
  value(json::object o) : v_(std::move(o)) {}

  kind type() const { return static_cast<kind>(v_.index()); }
  bool is_null() const { return type() == kind::null; }
  bool is_bool() const { return type() == kind::boolean; }
  bool is_int() const { return type() == kind::integer; }
  bool is_double() const { return type() == kind::number; }
  bool is_number() const { return is_int() || is_double(); }
  bool is_string() const { return type() == kind::string; }
  bool is_array() const { return type() == kind::array; }
  bool is_object() const { return type() == kind::object; }

  // Accessors assert the kind; use the `as_*` / `get_*` forms when unsure.
  bool as_bool() const { return std::get<bool>(v_); }
  std::int64_t as_int() const { return std::get<std::int64_t>(v_); }
  double as_double() const { return is_int() ? static_cast<double>(as_int()) : std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  std::string& as_string() { return std::get<std::string>(v_); }
  const json::array& as_array() const { return std::get<json::array>(v_); }
  json::array& as_array() { return std::get<json::array>(v_); }
  const json::object& as_object() const { return std::get<json::object>(v_); }
  json::object& as_object() { return std::get<json::object>(v_); }

  // Object member lookup; nullptr when this is not an object or has no such key.
  const value* find(std::string_view key) const;
  value* find(std::string_view key);
  // Follows a path of object keys: v.at_path({"metadata", "name"}).
  const value* at_path(std::initializer_list<std::string_view> path) const;
  value* at_path(std::initializer_list<std::string_view> path);

  // Member access that turns a null into an empty object first (for building documents).
  value& operator[](std::string_view key);

  // Typed reads with a fallback for missing or mistyped members.
  std::string get_string(std::string_view key, std::string_view fallback = {}) const;
  std::int64_t get_int(std::string_view key, std::int64_t fallback = 0) const;
  bool get_bool(std::string_view key, bool fallback = false) const;

  friend bool operator==(const value& a, const value& b);
  friend bool operator!=(const value& a, const value& b) { return !(a == b); }

private:
  std::variant<std::monostate, bool, std::int64_t, double, std::string, json::array, json::object> v_;
};

inline std::size_t object::size() const { return members_.size(); }
inline bool object::empty() const { return members_.empty(); }
inline object::iterator object::begin() { return members_.begin(); }
inline object::iterator object::end() { return members_.end(); }
inline object::const_iterator object::begin() const { return members_.begin(); }
inline object::const_iterator object::end() const { return members_.end(); }

// Parses one JSON text. Errors say where and what ("line 3: unexpected end of input").
expected<value> parse(std::string_view text);

// Compact JSON, escaped the way Go's encoding/json does (<, >, & and U+2028/9 as \uXXXX) so
// that what kubectl compares byte-for-byte matches a real server.
std::string dump(const value& v);
void dump_to(std::string& out, const value& v);
// Indented form for humans (files on disk, logs).
std::string dump_pretty(const value& v, int indent = 2);
// As YAML, `kubectl get -o yaml`'s layout; parse_yaml (yaml.hpp) reads it back to the same tree.
std::string dump_yaml(const value& v);

// Appends `s` as a quoted, escaped JSON string.
void write_string(std::string& out, std::string_view s);

// A string's text, or a number's JSON text ("2", "1.5"); "" for anything else. For values users
// may write either way in YAML (quantities: `cpu: 2` or `cpu: "2"`).
inline std::string scalar_text(const value& v) {
  if (v.is_string())
    return v.as_string();
  if (v.is_number())
    return dump(v);
  return {};
}

// The strings of an array (other members skipped); none when `list` is null or not an array.
inline std::vector<std::string> strings_of(const value* list) {
  std::vector<std::string> out;
  if (list && list->is_array())
    for (const auto& v : list->as_array())
      if (v.is_string())
        out.push_back(v.as_string());
  return out;
}

} // namespace kozmo::json
