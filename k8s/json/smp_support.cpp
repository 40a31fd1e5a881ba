#include "k8s/json/smp_support.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>
#include <system_error>
#include <vector>

namespace kozmo::json::smp {
namespace {

// --- Go slices -----------------------------------------------------------------------------

constexpr std::size_t interface_size = 16; // bytes of one interface{} element

// Go's malloc size classes up to 32 KiB; a grown slice's capacity is rounded up to one.
constexpr std::size_t size_classes[] = {
    8,    16,   24,   32,   48,   64,   80,   96,   112,  128,   144,   160,   176,   192,   208,   224,   240,
    256,  288,  320,  352,  384,  416,  448,  480,  512,  576,   640,   704,   768,   896,   1024,  1152,  1280,
    1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096,  4864,  5376,  6144,  6528,  6784,  6912,  8192,
    9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768};

std::size_t round_up_size(std::size_t bytes) {
  for (auto c : size_classes)
    if (bytes <= c)
      return c;
  constexpr std::size_t page = 8192;
  return (bytes + page - 1) / page * page;
}

// runtime.growslice: the capacity of the new array when `new_len` elements do not fit.
std::size_t grown_capacity(std::size_t old_cap, std::size_t new_len) {
  std::size_t new_cap = old_cap;
  if (new_len > 2 * old_cap) {
    new_cap = new_len;
  } else if (old_cap < 256) {
    new_cap = 2 * old_cap;
  } else {
    while (new_cap < new_len)
      new_cap += (new_cap + 3 * 256) / 4;
  }
  return round_up_size(new_cap * interface_size) / interface_size;
}

// --- ordering ------------------------------------------------------------------------------

const value null_value;

// The value `index` compares for an item: its merge key for maps (nil when absent), else itself.
const value& order_key(const value& item, std::string_view merge_key, bool maps) {
  if (!maps)
    return item;
  const value* k = merge_key_value(item, merge_key);
  return k ? *k : null_value;
}

// apimachinery's index(): the first position of `item` in `list`, or -1.
long index_of(const array& list, const value& item, std::string_view merge_key, bool maps) {
  const value& want = order_key(item, merge_key, maps);
  for (std::size_t i = 0; i < list.size(); ++i)
    if (order_key(list[i], merge_key, maps) == want)
      return static_cast<long>(i);
  return -1;
}

status validate_merge_key(const array& list, std::string_view merge_key) {
  for (const auto& item : list) {
    if (!item.is_object())
      return err_bad_arg_type("map[string]interface {}", item);
    if (!item.find(merge_key))
      return err_no_merge_key(item, merge_key);
  }
  return ok;
}

bool is_delete_directive(const value& item) {
  const value* d = item.find("$patch");
  return d && d->is_string() && d->as_string() == "delete";
}

// normalizeSliceOrder: sort `to_sort` by the positions of its items in `order`; items marked
// `$patch: delete` go last. Go sorts with a "less" that answers true whenever either item is
// missing from `order`; that is not a strict order, so when it happens the insertion sort Go
// uses for short slices is reproduced step by step.
expected<array> normalize_slice_order(array to_sort, const array& order, std::string_view merge_key, bool maps) {
  array to_delete;
  if (maps) {
    if (auto st = validate_merge_key(to_sort, merge_key); !st)
      return st.err();
    if (auto st = validate_merge_key(order, merge_key); !st)
      return st.err();
    array keep;
    for (auto& item : to_sort)
      (is_delete_directive(item) ? to_delete : keep).push_back(std::move(item));
    to_sort = std::move(keep);
  }

  std::vector<std::pair<long, std::size_t>> ranked; // (position in order, original index)
  ranked.reserve(to_sort.size());
  bool all_found = true;
  for (std::size_t i = 0; i < to_sort.size(); ++i) {
    long pos = index_of(order, to_sort[i], merge_key, maps);
    all_found = all_found && pos >= 0;
    ranked.emplace_back(pos, i);
  }
  if (all_found) {
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  } else {
    auto less = [](const auto& a, const auto& b) { return a.first >= 0 && b.first >= 0 ? a.first < b.first : true; };
    for (std::size_t i = 1; i < ranked.size(); ++i)
      for (std::size_t j = i; j > 0 && less(ranked[j], ranked[j - 1]); --j)
        std::swap(ranked[j], ranked[j - 1]);
  }

  array sorted;
  sorted.reserve(to_sort.size() + to_delete.size());
  for (const auto& r : ranked)
    sorted.push_back(std::move(to_sort[r.second]));
  for (auto& d : to_delete)
    sorted.push_back(std::move(d));
  return sorted;
}

// mergeSortedSlice: inserts server-only items (`left`) among patch items (`right`). A server-only
// item goes first only when both items are in the live order and it comes earlier there.
array merge_sorted(array left, array right, const array& server_order, std::string_view merge_key, bool maps) {
  std::vector<long> li, ri;
  for (const auto& l : left)
    li.push_back(index_of(server_order, l, merge_key, maps));
  for (const auto& r : right)
    ri.push_back(index_of(server_order, r, merge_key, maps));

  array out;
  out.reserve(left.size() + right.size());
  std::size_t i = 0, j = 0;
  while (i < left.size() || j < right.size()) {
    bool take_left = j >= right.size() || (i < left.size() && li[i] >= 0 && ri[j] >= 0 && li[i] < ri[j]);
    if (take_left)
      out.push_back(std::move(left[i++]));
    else
      out.push_back(std::move(right[j++]));
  }
  return out;
}

// --- Go formatting -------------------------------------------------------------------------

// strconv.FormatFloat(d, 'g', -1, 64), which is what %v prints for a float64.
void format_go_float(std::string& out, double d) {
  if (std::isnan(d)) {
    out += "NaN";
    return;
  }
  if (std::isinf(d)) {
    out += d > 0 ? "+Inf" : "-Inf";
    return;
  }
  char buf[64];
  auto sci = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view s(buf, static_cast<std::size_t>(sci.ptr - buf));
  int exp = 0;
  auto e = s.find('e');
  std::from_chars(s.data() + e + (s[e + 1] == '+' ? 2 : 1), s.data() + s.size(), exp);
  if (s[e + 1] == '-')
    exp = -exp;
  if (exp < -4 || exp >= 6) { // shortest %g switches to exponent form at precision 6
    out.append(s);
    return;
  }
  auto fixed = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed);
  out.append(buf, fixed.ptr);
}

void format_go(std::string& out, const value& v) {
  switch (v.type()) {
  case value::kind::null: out += "<nil>"; return;
  case value::kind::boolean: out += v.as_bool() ? "true" : "false"; return;
  case value::kind::integer: format_go_float(out, static_cast<double>(v.as_int())); return;
  case value::kind::number: format_go_float(out, v.as_double()); return;
  case value::kind::string: out += v.as_string(); return;
  case value::kind::array: {
    out += '[';
    bool first = true;
    for (const auto& item : v.as_array()) {
      if (!first)
        out += ' ';
      first = false;
      format_go(out, item);
    }
    out += ']';
    return;
  }
  case value::kind::object: {
    std::vector<const object::member*> members;
    for (const auto& m : v.as_object())
      members.push_back(&m);
    std::sort(members.begin(), members.end(), [](auto* a, auto* b) { return a->first < b->first; });
    out += "map[";
    bool first = true;
    for (const auto* m : members) {
      if (!first)
        out += ' ';
      first = false;
      out += m->first;
      out += ':';
      format_go(out, m->second);
    }
    out += ']';
    return;
  }
  }
}

} // namespace

go_slice go_slice::decoded(const array& a) {
  std::size_t cap = 0;
  for (std::size_t len = 0; len < a.size(); ++len)
    if (len == cap)
      cap = grown_capacity(cap, len + 1);
  go_slice s;
  s.buf = std::make_shared<array>(cap);
  std::copy(a.begin(), a.end(), s.buf->begin());
  s.len = a.size();
  return s;
}

go_slice go_append(go_slice s, const array& items) {
  std::size_t new_len = s.len + items.size();
  if (new_len > s.cap()) {
    auto grown = std::make_shared<array>(grown_capacity(s.cap(), new_len));
    std::copy(s.buf->begin(), s.buf->begin() + static_cast<std::ptrdiff_t>(s.len), grown->begin());
    s.buf = std::move(grown);
  }
  std::copy(items.begin(), items.end(), s.buf->begin() + static_cast<std::ptrdiff_t>(s.len));
  s.len = new_len;
  return s;
}

go_slice go_append(go_slice s, const value& item) { return go_append(std::move(s), array{item}); }

void go_remove_at(go_slice& s, std::size_t i) {
  for (std::size_t j = i; j + 1 < s.len; ++j)
    s[j] = s[j + 1];
  --s.len;
}

void go_deduplicate(go_slice& s) {
  if (s.len == 0)
    return;
  std::size_t length = s.len - 1;
  for (std::size_t i = 0; i < length; ++i) {
    for (std::size_t j = i + 1; j <= length; ++j) {
      if (s[i] == s[j]) {
        s[j] = s[length];
        s.len = length;
        --length;
        --j;
      }
    }
  }
}

const value* merge_key_value(const value& item, std::string_view merge_key) { return item.find(merge_key); }

expected<std::pair<array, array>> partition(const array& merged, const array& by, std::string_view merge_key) {
  std::pair<array, array> out;
  for (const auto& v : merged) {
    bool found = false;
    if (merge_key.empty()) {
      found = std::find(by.begin(), by.end(), v) != by.end();
    } else {
      if (!v.is_object())
        return err_bad_arg_type("map[string]interface {}", v);
      const value* key = v.find(merge_key);
      if (!key)
        return err_no_merge_key(v, merge_key);
      for (std::size_t i = 0; i < by.size() && !found; ++i) {
        if (!by[i].is_object())
          return error::bad_request("value for key " + std::to_string(i) + " is not a map");
        const value* other = by[i].find(merge_key);
        found = other && *other == *key;
      }
    }
    (found ? out.first : out.second).push_back(v);
  }
  return out;
}

expected<array> normalize_element_order(array patch_items, array server_only, const array& patch_order,
                                        const array& server_order, std::string_view merge_key, bool maps) {
  auto patch_sorted = normalize_slice_order(std::move(patch_items), patch_order, merge_key, maps);
  if (!patch_sorted)
    return patch_sorted.err();
  auto server_sorted = normalize_slice_order(std::move(server_only), server_order, merge_key, maps);
  if (!server_sorted)
    return server_sorted.err();
  return merge_sorted(std::move(*server_sorted), std::move(*patch_sorted), server_order, merge_key, maps);
}

std::string go_format(const value& v) {
  std::string out;
  format_go(out, v);
  return out;
}

std::string go_type_name(const value& v) {
  switch (v.type()) {
  case value::kind::null: return "%!s(<nil>)";
  case value::kind::boolean: return "bool";
  case value::kind::integer:
  case value::kind::number: return "float64";
  case value::kind::string: return "string";
  case value::kind::array: return "[]interface {}";
  case value::kind::object: return "map[string]interface {}";
  }
  return "";
}

error err_no_merge_key(const value& item, std::string_view merge_key) {
  return error::bad_request("map: " + go_format(item) + " does not contain declared merge key: " +
                            std::string(merge_key));
}

error err_bad_arg_type(std::string_view expected, const value& actual) {
  return error::bad_request("expected a " + std::string(expected) + ", but received a " + go_type_name(actual));
}

} // namespace kozmo::json::smp
