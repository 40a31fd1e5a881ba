// Kubernetes strategic merge patch, applied the way kube-apiserver applies it
// (StrategicMergeMapPatch with MergeParallelList and IgnoreUnmatchedNulls), on the unstructured
// document. The steps and their order follow apimachinery's pkg/util/strategicpatch mergeMap /
// mergeSlice so that results match Kubernetes, list order included
// (shared/reference/strategic-merge-patch.md §2). Go walks its maps in random order; we walk
// the patch in the order it was written.
#include "k8s/json/patch.hpp"
#include "k8s/json/patch_meta.hpp"
#include "k8s/json/smp_support.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace kozmo::json {
namespace smp {
namespace {

constexpr std::string_view directive_marker = "$patch";
constexpr std::string_view retain_keys_directive = "$retainKeys";
constexpr std::string_view delete_from_primitive_list_prefix = "$deleteFromPrimitiveList";
constexpr std::string_view set_element_order_prefix = "$setElementOrder";

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Decoded JSON types as Go's reflect sees them: two values of different kinds never merge.
enum class go_kind { nil, boolean, number, string, slice, map };

go_kind kind_of(const value& v) {
  switch (v.type()) {
  case value::kind::null: return go_kind::nil;
  case value::kind::boolean: return go_kind::boolean;
  case value::kind::integer:
  case value::kind::number: return go_kind::number;
  case value::kind::string: return go_kind::string;
  case value::kind::array: return go_kind::slice;
  case value::kind::object: return go_kind::map;
  }
  return go_kind::nil;
}

// fmt's %s of a decoded JSON value.
std::string go_format_s(const value& v) {
  if (v.is_string() || v.is_array() || v.is_object())
    return go_format(v);
  if (v.is_null())
    return "%!s(<nil>)";
  return "%!s(" + go_type_name(v) + "=" + go_format(v) + ")";
}

error err_bad_patch_type(const value& directive, const value& map) {
  return error::bad_request("unknown patch type: " + go_format_s(directive) + " in map: " + go_format(map));
}

// "$setElementOrder/containers" → "containers".
expected<std::string> extract_key(std::string_view key, std::string_view prefix) {
  auto slash = key.find('/');
  if (slash == std::string_view::npos || key.substr(0, slash) != prefix) {
    if (prefix == delete_from_primitive_list_prefix)
      return error::bad_request("invalid patch format of primitive list");
    return error::bad_request("invalid patch format of setElementOrder list");
  }
  return std::string(key.substr(slash + 1));
}

// sliceElementType: all elements of all lists share one kind, which is not a list. nullopt when
// the lists are all empty.
expected<std::optional<go_kind>> element_kind(const value* a, std::size_t a_len, const array& b) {
  std::optional<go_kind> kind;
  auto check = [&](const value& v) -> status {
    if (!kind) {
      kind = kind_of(v);
      if (*kind == go_kind::slice)
        return error::bad_request("lists of lists are not supported");
    } else if (*kind != kind_of(v)) {
      array first(a, a + a_len);
      return error::bad_request("list element types are not identical: " +
                                go_format(value(array{value(std::move(first)), value(b)})));
    }
    return ok;
  };
  for (std::size_t i = 0; i < a_len; ++i)
    if (auto st = check(a[i]); !st)
      return st.err();
  for (const auto& v : b)
    if (auto st = check(v); !st)
      return st.err();
  return kind;
}

expected<std::optional<go_kind>> element_kind(const go_slice& a, const array& b) {
  return element_kind(a.buf->data(), a.len, b);
}

// kube-apiserver decodes the patched map into the typed object, which drops every directive
// key left in it (say a `$retainKeys` in a list element that was appended as sent). We store the
// document itself, so drop them here.
void strip_directives(value& v) {
  if (v.is_array()) {
    for (auto& item : v.as_array())
      strip_directives(item);
    return;
  }
  if (!v.is_object())
    return;
  auto& obj = v.as_object();
  std::vector<std::string> stale;
  for (auto& [k, member] : obj) {
    if (k == directive_marker || k == retain_keys_directive ||
        starts_with(k, std::string(set_element_order_prefix) + "/") ||
        starts_with(k, std::string(delete_from_primitive_list_prefix) + "/"))
      stale.push_back(k);
    else
      strip_directives(member);
  }
  for (const auto& k : stale)
    obj.erase(k);
}

// discardNullValuesFromPatch: a value stored where nothing was before keeps no null members.
// Nulls that are list elements stay.
void discard_nulls(value& v) {
  if (v.is_object()) {
    auto& obj = v.as_object();
    std::vector<std::string> nulls;
    for (auto& [k, member] : obj) {
      if (member.is_null())
        nulls.push_back(k);
      else
        discard_nulls(member);
    }
    for (const auto& k : nulls)
      obj.erase(k);
  } else if (v.is_array()) {
    for (auto& item : v.as_array())
      discard_nulls(item);
  }
}

// removeDirectives: a map carrying `$patch` is dropped (from its parent map or list).
std::optional<value> remove_directives(value v) {
  if (v.is_object()) {
    if (v.find(directive_marker))
      return std::nullopt;
    object kept;
    for (auto& [k, member] : v.as_object())
      if (auto m = remove_directives(std::move(member)))
        kept.set(k, std::move(*m));
    return value(std::move(kept));
  }
  if (v.is_array()) {
    array kept;
    for (auto& item : v.as_array())
      if (auto m = remove_directives(std::move(item)))
        kept.push_back(std::move(*m));
    return value(std::move(kept));
  }
  return v;
}

bool is_directive_marker_map(const value& v) { return v.is_object() && v.find(directive_marker); }

bool is_delete_directive(const value& v) {
  const value* d = v.find(directive_marker);
  return d && d->is_string() && d->as_string() == "delete";
}

// deleteFromSlice: every value of `current` that is in `to_delete` goes, duplicates included.
array delete_from_slice(const array& current, const array& to_delete) {
  array kept;
  for (const auto& v : current)
    if (std::find(to_delete.begin(), to_delete.end(), v) == to_delete.end())
      kept.push_back(v);
  return kept;
}

expected<bool> merge_key_equal(const value& left, const value& right, std::string_view merge_key) {
  if (merge_key.empty())
    return left == right;
  if (!left.is_object())
    return err_bad_arg_type("map[string]interface {}", left);
  if (!right.is_object())
    return err_bad_arg_type("map[string]interface {}", right);
  const value* l = left.find(merge_key);
  if (!l)
    return err_no_merge_key(left, merge_key);
  const value* r = right.find(merge_key);
  if (!r)
    return err_no_merge_key(right, merge_key);
  return *l == *r;
}

// validatePatchWithSetOrderList: the patch list (deletions aside) must name its items in the
// order of $setElementOrder, and name no item that $setElementOrder lacks.
status validate_set_order(const array& patch_list, const array& order, std::string_view merge_key) {
  if (order.empty() || patch_list.empty())
    return ok;
  array non_delete;
  if (merge_key.empty()) {
    non_delete = patch_list;
  } else {
    for (const auto& v : patch_list) {
      if (!v.is_object())
        return err_bad_arg_type("map[string]interface {}", v);
      if (!is_delete_directive(v))
        non_delete.push_back(v);
    }
  }
  std::size_t pi = 0, oi = 0;
  while (pi < non_delete.size() && oi < order.size()) {
    if (is_directive_marker_map(non_delete[pi])) {
      ++pi;
      continue;
    }
    auto equal = merge_key_equal(non_delete[pi], order[oi], merge_key);
    if (!equal)
      return equal.err();
    if (*equal)
      ++pi;
    ++oi;
  }
  if (pi < non_delete.size() && oi >= order.size())
    return error::bad_request("the order in patch list:\n" + go_format(value(patch_list)) + "\n doesn't match " +
                              std::string(set_element_order_prefix) + " list:\n" + go_format(value(order)));
  return ok;
}

// findMapInSliceBasedOnKeyValue over the visible part of a slice.
expected<std::optional<std::size_t>> find_by_key(const go_slice& s, std::string_view merge_key, const value& key) {
  for (std::size_t i = 0; i < s.len; ++i) {
    if (!s[i].is_object())
      return error::bad_request("value for key " + std::to_string(i) + " is not a map");
    const value* k = s[i].find(merge_key);
    if (k && *k == key)
      return std::optional<std::size_t>(i);
  }
  return std::optional<std::size_t>();
}

class merger {
public:
  explicit merger(const patch_schema& schema) : schema_(schema) {}

  expected<object> merge_map(object original, object patch, const type_meta* type);

private:
  const field_meta* field(const type_meta* type, std::string_view key) const {
    return type ? type->field(key) : nullptr;
  }
  const type_meta* type_of(const field_meta* f) const { return f ? schema_.type(f->type) : nullptr; }

  status apply_retain_keys(object& original, object& patch);
  status merge_set_element_order(object& original, object& patch, const type_meta* type);
  expected<array> merge_slice(go_slice original, const array& patch, const field_meta* f, bool is_delete_list);
  expected<array> merge_slice_handler(go_slice original, const array& patch, const field_meta* f, bool is_delete_list) {
    if ((f && f->merges()) || is_delete_list)
      return merge_slice(std::move(original), patch, f, is_delete_list);
    return patch; // a list without patch strategy is replaced
  }

  const patch_schema& schema_;
};

// $retainKeys: every non-null key the patch sets must be listed, and live keys not listed go.
status merger::apply_retain_keys(object& original, object& patch) {
  const value* found = patch.find(retain_keys_directive);
  if (!found)
    return ok;
  value retain = *found;
  patch.erase(retain_keys_directive);
  if (!retain.is_array())
    return error::bad_request("invalid patch format of retainKeys");
  const array& keys = retain.as_array();
  auto listed = [&](const std::string& k) { return std::find(keys.begin(), keys.end(), value(k)) != keys.end(); };
  for (const auto& [k, v] : patch) {
    if (v.is_null() || starts_with(k, delete_from_primitive_list_prefix) || starts_with(k, set_element_order_prefix))
      continue;
    if (!listed(k))
      return error::bad_request("invalid patch format of retainKeys");
  }
  std::vector<std::string> dropped;
  for (const auto& [k, v] : original)
    if (!listed(k))
      dropped.push_back(k);
  for (const auto& k : dropped)
    original.erase(k);
  return ok;
}

// mergePatchIntoOriginal: each $setElementOrder/<f> is handled together with <f>, and the merged
// list is ordered by $setElementOrder first, then patch order, then live order.
status merger::merge_set_element_order(object& original, object& patch, const type_meta* type) {
  std::vector<std::string> directives;
  for (const auto& [k, v] : patch)
    if (starts_with(k, set_element_order_prefix))
      directives.push_back(k);

  for (const auto& directive : directives) {
    value order = *patch.find(directive);
    patch.erase(directive);
    if (!order.is_array())
      return err_bad_arg_type("[]interface {}", order);
    auto key = extract_key(directive, set_element_order_prefix);
    if (!key)
      return key.err();
    const value* live_list = original.find(*key);
    const value* patch_list = patch.find(*key);
    if (live_list && !live_list->is_array())
      return err_bad_arg_type("[]interface {}", *live_list);
    if (patch_list && !patch_list->is_array())
      return err_bad_arg_type("[]interface {}", *patch_list);

    const field_meta* f = field(type, *key);
    std::string_view merge_key = f ? f->merge_key : std::string_view();
    const array no_items;
    const array& patch_items_raw = patch_list ? patch_list->as_array() : no_items;
    if (auto st = validate_set_order(patch_items_raw, order.as_array(), merge_key); !st)
      return st;

    // The live list as a Go slice: merging rewrites it in place, and what it then holds is
    // "the live order" used below (Kubernetes' results depend on that).
    go_slice live = live_list ? go_slice::decoded(live_list->as_array()) : go_slice{};
    array merged;
    if (live_list && !patch_list) {
      merged = live_list->as_array();
    } else if (!live_list && patch_list) {
      merged = remove_directives(*patch_list)->as_array();
    } else if (live_list && patch_list) {
      auto m = merge_slice_handler(live, patch_list->as_array(), f, false);
      if (!m)
        return m.err();
      merged = std::move(*m);
    } else {
      continue;
    }

    auto parts = partition(merged, order.as_array(), merge_key);
    if (!parts)
      return parts.err();
    array live_order = live.to_array();
    auto kind = element_kind(live, patch_items_raw);
    if (!kind)
      return kind.err();
    if (!*kind) { // both lists empty: nothing to order (Go reports an error here)
      original.set(*key, value(std::move(merged)));
      patch.erase(*key);
      continue;
    }
    auto both = normalize_element_order(std::move(parts->first), std::move(parts->second), order.as_array(),
                                        live_order, merge_key, **kind == go_kind::map);
    if (!both)
      return both.err();
    original.set(*key, value(std::move(*both)));
    patch.erase(*key);
  }
  return ok;
}

// mergeSlice: primitives are unioned (or deleted from, for $deleteFromPrimitiveList); maps are
// matched by merge key after the `$patch` elements (delete, replace) have been applied.
expected<array> merger::merge_slice(go_slice original, const array& patch, const field_meta* f, bool is_delete_list) {
  if (original.len == 0 && patch.empty())
    return original.to_array();
  auto kind = element_kind(original, patch);
  if (!kind)
    return kind.err();
  std::string_view merge_key = f ? f->merge_key : std::string_view();

  go_slice merged;
  array patch_order; // the patch items that decide the order
  if (*kind != go_kind::map) {
    if (is_delete_list)
      return delete_from_slice(original.to_array(), patch);
    merged = go_append(original, patch);
    go_deduplicate(merged);
    patch_order = patch;
  } else {
    if (merge_key.empty())
      return error::bad_request("cannot merge lists without merge key for " + std::string(f ? f->name : "list"));
    bool replace = false;
    for (const auto& v : patch) {
      const value* d = v.find(directive_marker);
      if (!d) {
        patch_order.push_back(v);
        continue;
      }
      if (d->is_string() && d->as_string() == "delete") {
        const value* key = v.find(merge_key);
        if (!key)
          return err_no_merge_key(v, merge_key);
        for (;;) { // remove every element with that key
          auto at = find_by_key(original, merge_key, *key);
          if (!at)
            return at.err();
          if (!*at)
            break;
          go_remove_at(original, **at);
        }
      } else if (d->is_string() && d->as_string() == "replace") {
        replace = true; // keep going: the other `$patch` elements are still pruned
      } else if (d->is_string() && d->as_string() == "merge") {
        return error::bad_request("merging lists cannot yet be specified in the patch");
      } else {
        return err_bad_patch_type(*d, v);
      }
    }
    if (replace) {
      original = go_slice::decoded(patch_order);
      patch_order.clear();
    }

    merged = original;
    const type_meta* element_type = type_of(f);
    for (const auto& v : patch_order) {
      const value* key = v.find(merge_key);
      if (!key)
        return err_no_merge_key(v, merge_key);
      auto at = find_by_key(merged, merge_key, *key);
      if (!at)
        return at.err();
      if (!*at) {
        merged = go_append(std::move(merged), v);
        continue;
      }
      auto m = merge_map(std::move(merged[**at].as_object()), v.as_object(), element_type);
      if (!m)
        return m.err();
      merged[**at] = value(std::move(*m));
    }
  }

  auto parts = partition(merged.to_array(), patch_order, merge_key);
  if (!parts)
    return parts.err();
  return normalize_element_order(std::move(parts->first), std::move(parts->second), patch_order,
                                 original.to_array(), merge_key, *kind == go_kind::map);
}

expected<object> merger::merge_map(object original, object patch, const type_meta* type) {
  if (const value* d = patch.find(directive_marker)) {
    if (d->is_string() && d->as_string() == "replace") {
      patch.erase(directive_marker);
      return patch;
    }
    if (d->is_string() && d->as_string() == "delete")
      return object{}; // the key stays, holding an empty map
    return err_bad_patch_type(*d, value(patch));
  }

  if (auto st = apply_retain_keys(original, patch); !st)
    return st.err();
  if (auto st = merge_set_element_order(original, patch, type); !st)
    return st.err();

  for (const auto& [patch_key, patch_v] : patch) {
    std::string key = patch_key;
    bool is_delete_list = false;
    if (starts_with(key, delete_from_primitive_list_prefix)) {
      auto list_key = extract_key(key, delete_from_primitive_list_prefix);
      if (!list_key)
        return list_key.err();
      key = std::move(*list_key);
      is_delete_list = true;
    }

    if (patch_v.is_null()) { // deletes the key; a null for an absent key is ignored
      original.erase(key);
      continue;
    }

    value* live = original.find(key);
    if (!live || kind_of(*live) != kind_of(patch_v)) {
      if (is_delete_list)
        continue; // nothing to delete from
      // A new value (or one of another type) is stored as sent, minus nulls and `$patch` maps.
      value v = patch_v;
      discard_nulls(v);
      if (auto kept = remove_directives(std::move(v)))
        original.set(key, std::move(*kept));
      else
        original.erase(key);
      continue;
    }

    const field_meta* f = field(type, key);
    switch (kind_of(*live)) {
    case go_kind::map: {
      if (f && f->replaces()) {
        *live = patch_v;
        break;
      }
      auto m = merge_map(std::move(live->as_object()), patch_v.as_object(), type_of(f));
      if (!m)
        return m.err();
      *live = value(std::move(*m));
      break;
    }
    case go_kind::slice: {
      auto m = merge_slice_handler(go_slice::decoded(live->as_array()), patch_v.as_array(), f, is_delete_list);
      if (!m)
        return m.err();
      *live = value(std::move(*m));
      break;
    }
    default:
      *live = patch_v;
      break;
    }
  }
  return original;
}

// Kinds with compiled-in patch metadata; everything else (custom resources) gets 415.
constexpr std::string_view builtin_kinds[] = {"Pod",         "Node",     "Service",   "ConfigMap",
                                              "Secret",      "Namespace", "Event",    "PodTemplate",
                                              "Lease",       "Endpoints", "ServiceAccount"};

std::string go_json_type(const value& v) {
  switch (v.type()) {
  case value::kind::boolean: return "bool";
  case value::kind::integer:
  case value::kind::number: return "number";
  case value::kind::string: return "string";
  case value::kind::array: return "array";
  default: return "object";
  }
}

} // namespace

expected<value> apply_strategic_patch(const value& target, const value& patch, const patch_schema& schema,
                                      std::string_view root_type) {
  if (patch.is_null()) // decodes to a nil map: nothing to do
    return target;
  if (!patch.is_object())
    return error::bad_request("json: cannot unmarshal " + go_json_type(patch) +
                              " into Go value of type map[string]interface {}");
  if (!target.is_object())
    return error::bad_request("invalid JSON document");
  merger m(schema);
  auto merged = m.merge_map(target.as_object(), patch.as_object(), schema.type(root_type));
  if (!merged)
    return merged.err();
  value result(std::move(*merged));
  strip_directives(result);
  return result;
}

} // namespace smp

bool strategic_patch_supported(std::string_view kind) {
  for (auto k : smp::builtin_kinds)
    if (k == kind)
      return true;
  return false;
}

expected<value> apply_strategic_patch(const value& target, const value& patch, std::string_view kind) {
  if (!strategic_patch_supported(kind))
    return error{"strategic merge patch format is not supported", 415, "UnsupportedMediaType"};
  return smp::apply_strategic_patch(target, patch, smp::builtin_schema(), kind);
}

} // namespace kozmo::json
