// Private to k8s/model: the decoder node over a json::value tree, and the custom_object
// decoder (which reads the tree it keeps).
#pragma once

#include "k8s/model/detail/decoders_kinds.hpp"

#include <limits>

namespace kozmo::k8s::detail {

class tree_node {
public:
  explicit tree_node(const json::value& v) : v_(&v) {}

  bool is_null() const { return v_->is_null(); }

  node_kind kind() const {
    switch (v_->type()) {
    case json::value::kind::null: return node_kind::null;
    case json::value::kind::boolean: return node_kind::boolean;
    case json::value::kind::integer:
    case json::value::kind::number: return node_kind::number;
    case json::value::kind::string: return node_kind::string;
    case json::value::kind::array: return node_kind::array;
    case json::value::kind::object: return node_kind::object;
    }
    return node_kind::invalid;
  }

  dstatus read(std::string& out) const {
    if (v_->is_string())
      out = v_->as_string();
    else if (!v_->is_null())
      return dstatus::type_error("a string", describe(kind()));
    return {};
  }
  dstatus read_view(std::string_view& out) const {
    if (v_->is_string())
      out = v_->as_string();
    else if (!v_->is_null())
      return dstatus::type_error("a string", describe(kind()));
    return {};
  }
  dstatus read(std::int64_t& out) const {
    if (v_->is_int())
      out = v_->as_int();
    else if (!v_->is_null())
      return dstatus::type_error("an integer", describe(kind()));
    return {};
  }
  dstatus read(std::int32_t& out) const {
    std::int64_t v = out;
    KOZMO_DTRY(read(v));
    if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
      return dstatus::fail("value " + std::to_string(v) + " does not fit in 32 bits");
    out = static_cast<std::int32_t>(v);
    return {};
  }
  dstatus read(bool& out) const {
    if (v_->is_bool())
      out = v_->as_bool();
    else if (!v_->is_null())
      return dstatus::type_error("a boolean", describe(kind()));
    return {};
  }
  dstatus read(json::value& out) const {
    out = *v_;
    return {};
  }
  dstatus read_quantity(quantity& out) const {
    std::string text;
    if (v_->is_string())
      text = v_->as_string();
    else if (v_->is_int())
      text = std::to_string(v_->as_int());
    else if (v_->is_double())
      text = json::dump(*v_);
    else if (v_->is_null())
      return {};
    else
      return dstatus::type_error("a quantity", describe(kind()));
    return parse_quantity_text(text, out);
  }

  template <class F> dstatus fields(F&& f) const { return members(f, false); }
  template <class F> dstatus entries(F&& f) const { return members(f, true); }

  std::size_t element_count() const { return v_->is_array() ? v_->as_array().size() : 0; }
  std::size_t member_count() const { return v_->is_object() ? v_->as_object().size() : 0; }

  template <class F> dstatus elements(F&& f) const {
    if (v_->is_null())
      return {};
    if (!v_->is_array())
      return dstatus::type_error("an array", describe(kind()));
    std::size_t i = 0;
    for (auto& item : v_->as_array()) {
      tree_node child(item);
      if (auto s = f(child); !s.ok())
        return std::move(s).in_index(i);
      ++i;
    }
    return {};
  }

  // Shared with the tape node: "8Xi" → `quantity "8Xi" is invalid: ...`. The API server's
  // own forms ("500m", "32Gi") take the fast path; anything else the exact parser.
  static dstatus parse_quantity_text(std::string_view text, quantity& out) {
    if (parse_quantity_fast(text, out)) [[likely]]
      return {};
    return parse_quantity_exact(text, out);
  }

private:
  [[gnu::noinline]] static dstatus parse_quantity_exact(std::string_view text, quantity& out) {
    auto q = quantity::parse(text);
    if (!q)
      return dstatus::fail("quantity \"" + std::string(text) + "\" is invalid: " + q.err().message);
    out = *q;
    return {};
  }

  template <class F> dstatus members(F& f, bool as_map) const {
    if (v_->is_null())
      return {};
    if (!v_->is_object())
      return dstatus::type_error("an object", describe(kind()));
    for (auto& [key, value] : v_->as_object()) {
      tree_node child(value);
      if (auto s = f(std::string_view(key), child); !s.ok())
        return as_map ? std::move(s).in_key(key) : std::move(s).in_field(key);
    }
    return {};
  }

  const json::value* v_;
};

// apiVersion, kind and metadata from a document already in tree form.
inline dstatus decode_custom_object_tree(json::value document, custom_object& out) {
  if (!document.is_object())
    return dstatus::type_error("an object", describe(tree_node(document).kind()));
  out.api_version = document.get_string("apiVersion");
  out.kind = document.get_string("kind");
  if (const json::value* meta = document.find("metadata")) {
    tree_node n(*meta);
    if (auto s = decode(n, out.metadata); !s.ok())
      return std::move(s).in_field("metadata");
  }
  out.document = std::move(document);
  return {};
}

template <class N> dstatus decode(N& n, custom_object& out) {
  json::value document;
  KOZMO_DTRY(n.read(document));
  return decode_custom_object_tree(std::move(document), out);
}

} // namespace kozmo::k8s::detail
