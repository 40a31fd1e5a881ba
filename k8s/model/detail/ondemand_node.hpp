// Private to k8s/model, and the only header that includes simdjson: the decoder node over a
// simdjson ondemand value. Values are read in document order; a member the decoder does not
// ask for is skipped by simdjson without being parsed, which is what makes the watch path
// fast. Strings are copied into the model; nothing points into the input afterwards.
#pragma once

#include "k8s/model/detail/tree_node.hpp"

#include <simdjson.h>

#include <cstring>
#include <optional>

namespace kozmo::k8s::detail {

namespace od = simdjson::ondemand;

inline dstatus json_error(simdjson::error_code e) {
  return dstatus::fail(std::string("json parse error: ") + simdjson::error_message(e));
}

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

dstatus to_tree(od::value& v, json::value& out);
dstatus to_tree(od::object& o, json::value& out);

class od_node {
public:
  explicit od_node(od::value v) : v_(v) {}

  node_kind kind() {
    if (obj_)
      return node_kind::object;
    od::json_type t;
    if (v_.type().get(t))
      return node_kind::invalid;
    switch (t) {
    case od::json_type::array: return node_kind::array;
    case od::json_type::object: return node_kind::object;
    case od::json_type::number: return node_kind::number;
    case od::json_type::string: return node_kind::string;
    case od::json_type::boolean: return node_kind::boolean;
    case od::json_type::null: return node_kind::null;
    }
    return node_kind::invalid;
  }

  dstatus read_view(std::string_view& out) {
    bool is_null;
    return string_token(out, is_null);
  }

  dstatus read(std::string& out) {
    std::string_view sv;
    bool is_null;
    KOZMO_DTRY(string_token(sv, is_null));
    if (is_null)
      return {};
    // Decoding fills fresh models: appending to an empty string is the cheap path.
    if (out.empty())
      out.append(sv.data(), sv.size());
    else
      out.assign(sv.data(), sv.size());
    return {};
  }

  dstatus read(std::int64_t& out) {
    node_kind k = kind();
    if (k == node_kind::null)
      return {};
    if (k != node_kind::number)
      return mismatch("an integer", k);
    if (v_.get_int64().get(out))
      return dstatus::fail("expected an integer, found " + std::string(raw_token()));
    return {};
  }

  dstatus read(std::int32_t& out) {
    std::int64_t v = out;
    KOZMO_DTRY(read(v));
    if (v < INT32_MIN || v > INT32_MAX)
      return dstatus::fail("value " + std::to_string(v) + " does not fit in 32 bits");
    out = static_cast<std::int32_t>(v);
    return {};
  }

  dstatus read(bool& out) {
    node_kind k = kind();
    if (k == node_kind::null)
      return {};
    if (k != node_kind::boolean)
      return mismatch("a boolean", k);
    if (auto e = v_.get_bool().get(out))
      return json_error(e);
    return {};
  }

  dstatus read(json::value& out) {
    if (obj_)
      return to_tree(*obj_, out);
    return to_tree(v_, out);
  }

  dstatus read_quantity(quantity& out) {
    node_kind k = kind();
    if (k == node_kind::null)
      return {};
    if (k == node_kind::number)
      return tree_node::parse_quantity_text(raw_token(), out);
    if (k != node_kind::string)
      return mismatch("a quantity", k);
    std::string_view sv;
    KOZMO_DTRY(read_view(sv));
    return tree_node::parse_quantity_text(sv, out);
  }

  template <class F> dstatus fields(F&& f) { return members(f, false); }
  template <class F> dstatus entries(F&& f) { return members(f, true); }

  template <class F> dstatus elements(F&& f) {
    node_kind k = kind();
    if (k == node_kind::null)
      return {};
    if (k != node_kind::array)
      return mismatch("an array", k);
    od::array arr;
    if (auto e = v_.get_array().get(arr))
      return json_error(e);
    std::size_t i = 0;
    for (auto item_result : arr) {
      od::value item;
      if (auto e = std::move(item_result).get(item))
        return json_error(e);
      od_node child(item);
      if (auto s = f(child); !s.ok())
        return std::move(s).in_index(i);
      ++i;
    }
    return {};
  }

  // Reads "apiVersion" and "kind" wherever they are in this object, then rewinds it so that
  // fields() still sees every member (kind decides how the rest is decoded).
  dstatus peek_type_meta(std::string& api_version, std::string& kind_out) {
    node_kind k = kind();
    if (k != node_kind::object)
      return mismatch("an object", k);
    KOZMO_DTRY(open());
    od::value v;
    if (auto e = obj_->find_field_unordered("kind").get(v); !e) {
      od_node n(v);
      if (auto s = n.read(kind_out); !s.ok())
        return std::move(s).in_field("kind");
    } else if (e != simdjson::NO_SUCH_FIELD) {
      return json_error(e);
    }
    if (auto e = obj_->find_field_unordered("apiVersion").get(v); !e) {
      od_node n(v);
      if (auto s = n.read(api_version); !s.ok())
        return std::move(s).in_field("apiVersion");
    } else if (e != simdjson::NO_SUCH_FIELD) {
      return json_error(e);
    }
    if (auto e = obj_->reset().error())
      return json_error(e);
    return {};
  }

private:
  // Strings without escapes are taken straight from the input (no unescape pass); the
  // token is only peeked, and simdjson skips what was not consumed.
  dstatus string_token(std::string_view& out, bool& is_null) {
    is_null = false;
    std::string_view tok = obj_ ? std::string_view{} : trim(v_.raw_json_token());
    if (tok.size() >= 2 && tok[0] == '"') {
      std::string_view body = tok.substr(1, tok.size() - 2);
      if (!has_backslash(body)) {
        out = body;
        return {};
      }
      if (auto e = v_.get_string().get(out))
        return json_error(e);
      return {};
    }
    node_kind k = kind();
    is_null = k == node_kind::null;
    return is_null ? dstatus{} : mismatch("a string", k);
  }

  static bool has_backslash(std::string_view s) {
    if (s.size() > 32)
      return std::memchr(s.data(), '\\', s.size()) != nullptr;
    for (char c : s)
      if (c == '\\')
        return true;
    return false;
  }

  dstatus mismatch(std::string_view expected, node_kind found) {
    if (found == node_kind::invalid)
      return dstatus::fail("json parse error: invalid JSON value");
    return dstatus::type_error(expected, describe(found));
  }

  std::string_view raw_token() { return trim(v_.raw_json_token()); }

  dstatus open() {
    if (obj_)
      return {};
    od::object o;
    if (auto e = v_.get_object().get(o))
      return json_error(e);
    obj_ = o;
    return {};
  }

  template <class F> dstatus members(F& f, bool as_map) {
    node_kind k = kind();
    if (k == node_kind::null)
      return {};
    if (k != node_kind::object)
      return mismatch("an object", k);
    KOZMO_DTRY(open());
    for (auto field_result : *obj_) {
      od::field fld;
      if (auto e = std::move(field_result).get(fld))
        return json_error(e);
      // Keys are compared raw (no unescaping) unless they contain an escape.
      const char* raw = fld.key().raw();
      std::size_t len = 0;
      while (raw[len] != '"' && raw[len] != '\\')
        ++len;
      std::string_view key(raw, len);
      if (raw[len] == '\\') {
        if (auto e = fld.unescaped_key().get(key))
          return json_error(e);
      }
      od_node child(fld.value());
      if (auto s = f(key, child); !s.ok())
        return as_map ? std::move(s).in_key(key) : std::move(s).in_field(key);
    }
    return {};
  }

  od::value v_;
  std::optional<od::object> obj_; // set once the object has been opened
};

} // namespace kozmo::k8s::detail
