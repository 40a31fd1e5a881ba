// Strategic-merge-patch metadata as data: which fields of which Kubernetes types carry the Go
// struct tags `patchStrategy` / `patchMergeKey`, and which struct type a field (or each element
// of a list field) has, so that nested fields resolve ("Pod" → spec: PodSpec → containers:
// Container → env: merge by name).
//
// Internal to k8s/json (and its tests): the public entry points are in patch.hpp.
//
// A field not described here is "untyped": a map merges key by key, a list is replaced whole.
// That is exactly what SMP does with a field that has no patch tags, so the table lists only
// tagged fields and the struct fields that lead to them.
#pragma once

#include "k8s/json/value.hpp"

#include <string_view>
#include <vector>

namespace kozmo::json::smp {

struct field_meta {
  std::string_view name;      // JSON field name
  std::string_view strategy;  // Go patchStrategy tag: "", "merge", "merge,retainKeys", "replace", "retainKeys"
  std::string_view merge_key; // Go patchMergeKey tag; empty for lists of primitives
  std::string_view type;      // struct type of the value, or of each list element; empty = untyped

  bool merges() const;        // strategy contains "merge"
  bool replaces() const;      // strategy contains "replace"
};

struct type_meta {
  std::string_view name;
  std::vector<field_meta> fields;

  const field_meta* field(std::string_view json_name) const;
};

// A set of types that reference each other by name.
class patch_schema {
public:
  explicit patch_schema(std::vector<type_meta> types) : types_(std::move(types)) {}

  // nullptr when `name` is empty or unknown (an untyped value).
  const type_meta* type(std::string_view name) const;

private:
  std::vector<type_meta> types_;
};

// The built-in core/v1, meta/v1 and coordination/v1 types. Each supported kind is a type of the
// same name ("Pod", "Node", ...).
const patch_schema& builtin_schema();

// Applies `patch` to `target` with the metadata of `root_type` in `schema` (the root type may be
// unknown to the schema: everything is then untyped). Used by apply_strategic_patch and by tests
// that replay Kubernetes' own SMP test cases with their test struct.
expected<value> apply_strategic_patch(const value& target, const value& patch,
                                      const patch_schema& schema, std::string_view root_type);

} // namespace kozmo::json::smp
