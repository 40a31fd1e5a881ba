// Label and field selectors, parsed and matched the way kube-apiserver does (labels.Parse,
// fields.ParseSelector, metav1.LabelSelectorAsSelector), with its error wording so that a
// client sees the same 400 message from the embedded server as from a real one.
//
// Label syntax: comma-separated requirements, whitespace tolerant:
//   a=b  a==b  a!=b  a in (b,c)  a notin (b)  a  !a  a>3  a<3
// Field syntax: comma-separated f=v, f==v, f!=v; in values `\,` `\=` `\\` are escapes.
#pragma once

#include "k8s/error.hpp"
#include "k8s/json/value.hpp"
#include "k8s/model/object_meta.hpp"

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::k8s {

enum class selector_operator {
  in, not_in, equals, double_equals, not_equals, exists, does_not_exist, greater_than, less_than
};

struct label_requirement {
  std::string key;
  selector_operator op = selector_operator::exists;
  std::vector<std::string> values; // sorted, unique

  // A missing label matches only notin, != and !key.
  bool matches(const std::function<const std::string*(std::string_view)>& lookup) const;
  std::string to_string() const;
  friend bool operator==(const label_requirement&, const label_requirement&) = default;
};

class label_selector {
public:
  // Matches everything.
  label_selector() = default;
  // Matches nothing (a null LabelSelector object).
  static label_selector nothing();

  // Parses the string form, e.g. "app=demo,tier in (web,api),!canary". Errors read like
  // "unable to parse requirement: found '', expected: ',' or ')'".
  static expected<label_selector> parse(std::string_view text);
  // A metav1.LabelSelector object ({"matchLabels":{...},"matchExpressions":[...]}):
  // null → nothing(), {} → everything.
  static expected<label_selector> from_json(const json::value& object);
  // Builds a requirement (validated); errors as Kubernetes' NewRequirement.
  static expected<label_requirement> make_requirement(std::string key, selector_operator op,
                                                      std::vector<std::string> values);
  // One equality requirement per entry (not validated, like SelectorFromValidatedSet).
  static label_selector from_set(const string_map& labels);

  // `labels` is a JSON object of string values (metadata.labels); null matches as empty.
  bool matches(const json::value& labels) const;
  bool matches(const string_map& labels) const;
  bool matches(const std::map<std::string, std::string>& labels) const;

  // True when the selector does not restrict anything (not true for nothing()).
  bool empty() const { return !nothing_ && requirements_.empty(); }
  bool matches_nothing() const { return nothing_; }
  // Requirements sorted by key, joined by ",": "a=b,c in (d,e)".
  std::string to_string() const;
  const std::vector<label_requirement>& requirements() const { return requirements_; }
  // The value a selector requires for `key` via =, == or a one-value in (for indexed lookups).
  std::optional<std::string> requires_exact_match(std::string_view key) const;

  // Adds a requirement, keeping the key order.
  void add(label_requirement r);

  friend bool operator==(const label_selector&, const label_selector&) = default;

private:
  std::vector<label_requirement> requirements_;
  bool nothing_ = false;
};

enum class field_operator { equals, double_equals, not_equals };

struct field_requirement {
  std::string field;
  field_operator op = field_operator::equals;
  std::string value; // unescaped
  friend bool operator==(const field_requirement&, const field_requirement&) = default;
};

class field_selector {
public:
  field_selector() = default; // matches everything

  // Parses "spec.nodeName=n1,status.phase!=Running". Errors read like
  // "invalid selector: 'x'; can't understand 'x'".
  static expected<field_selector> parse(std::string_view text);

  const std::vector<field_requirement>& requirements() const { return requirements_; }
  bool empty() const { return requirements_.empty(); }

  // `lookup` returns a field's value, or nullopt when the object has no such field (which
  // compares as the empty string, as in Kubernetes).
  bool matches(const std::function<std::optional<std::string>(std::string_view field)>& lookup) const;

  // Fails with "field label not supported: spec.foo" (HTTP 400) for a field outside `fields`.
  status check_supported(std::span<const std::string_view> fields) const;

  // The value required for `field` via = or ==, if any.
  std::optional<std::string> requires_exact_match(std::string_view field) const;

  // Sorted, escaped: "metadata.name=a\,b,spec.nodeName=n1".
  std::string to_string() const;

  friend bool operator==(const field_selector&, const field_selector&) = default;

private:
  std::vector<field_requirement> requirements_;
};

// A value written into a field selector: `\`, `,` and `=` escaped with a backslash.
std::string escape_field_value(std::string_view value);

// Kubernetes name validation, with Kubernetes' messages (empty vector = valid).
std::vector<std::string> validate_qualified_name(std::string_view name); // label keys
std::vector<std::string> validate_label_value(std::string_view value);

} // namespace kozmo::k8s
