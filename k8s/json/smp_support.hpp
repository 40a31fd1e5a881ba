// Pieces of strategic merge patch that reproduce Go behaviour Kubernetes' results depend on.
// Internal to k8s/json.
//
// - go_slice: a Go slice (shared backing array, length, capacity). SMP rewrites the live list
//   in place while deleting and appending, and later uses that rewritten array as "the live
//   order" (see reference §2, "Quirk"); Kubernetes' own test expectations depend on it.
// - Ordering: the partition / normalizeElementOrder / mergeSortedSlice steps that decide where
//   patch items and server-only items end up.
// - go_format: Go's %v of decoded JSON, for error messages in Kubernetes' wording.
#pragma once

#include "k8s/json/value.hpp"

#include <memory>
#include <string>
#include <string_view>

namespace kozmo::json::smp {

// A Go []interface{}: `len` elements visible, `buf->size()` is the capacity. Copies share the
// backing array, like Go slice headers.
struct go_slice {
  std::shared_ptr<array> buf = std::make_shared<array>();
  std::size_t len = 0;

  // The slice encoding/json builds when it decodes `a` (appended one element at a time).
  static go_slice decoded(const array& a);

  std::size_t cap() const { return buf->size(); }
  value& operator[](std::size_t i) { return (*buf)[i]; }
  const value& operator[](std::size_t i) const { return (*buf)[i]; }
  array to_array() const { return array(buf->begin(), buf->begin() + static_cast<std::ptrdiff_t>(len)); }
};

// append(s, items...) with Go's growth: in place while the capacity allows, else a new array.
go_slice go_append(go_slice s, const array& items);
go_slice go_append(go_slice s, const value& item);
// s = append(s[:i], s[i+1:]...): shifts the tail left inside the same array.
void go_remove_at(go_slice& s, std::size_t i);
// apimachinery's deduplicateScalars, in place (it reorders: a duplicate is replaced by the last).
void go_deduplicate(go_slice& s);

// The merge-key value of a list element, or nullptr when it has none or is not an object.
const value* merge_key_value(const value& item, std::string_view merge_key);

// partitionMapsByPresentInList / partitionPrimitivesByPresentInList: items of `merged` whose key
// (or value, when merge_key is empty) appears in `by`, and the others, both in merged's order.
expected<std::pair<array, array>> partition(const array& merged, const array& by, std::string_view merge_key);

// normalizeElementOrder: sorts patch items by `patch_order`, server-only items by
// `server_order`, then interleaves them (mergeSortedSlice). `maps` says the elements are objects.
expected<array> normalize_element_order(array patch_items, array server_only, const array& patch_order,
                                        const array& server_order, std::string_view merge_key, bool maps);

// Go's fmt %v of a decoded JSON value: map[k:v ...] with sorted keys, [a b], <nil>, 1e+06.
std::string go_format(const value& v);
// reflect.TypeOf(v) of a decoded JSON value, as Go prints it with %s.
std::string go_type_name(const value& v);

// Kubernetes' mergepatch error texts.
error err_no_merge_key(const value& item, std::string_view merge_key);
error err_bad_arg_type(std::string_view expected, const value& actual);

} // namespace kozmo::json::smp
