// The fast decoding path: simdjson ondemand over raw JSON text (responses, list bodies and
// watch lines), straight into the models.
#include "k8s/model/codec.hpp"
#include "k8s/model/detail/ondemand_node.hpp"
#include "k8s/model/watch.hpp"

#include <functional>
#include <type_traits>

namespace kozmo::k8s {
namespace detail {

dstatus to_tree(od::object& o, json::value& out) {
  json::object obj;
  for (auto field_result : o) {
    od::field fld;
    if (auto e = std::move(field_result).get(fld))
      return json_error(e);
    std::string_view k;
    if (auto e = fld.unescaped_key().get(k))
      return json_error(e);
    std::string key(k);
    json::value child;
    if (auto s = to_tree(fld.value(), child); !s.ok())
      return std::move(s).in_field(key);
    obj.set(key, std::move(child));
  }
  out = std::move(obj);
  return {};
}

dstatus to_tree(od::value& v, json::value& out) {
  od::json_type t;
  if (auto e = v.type().get(t))
    return json_error(e);
  switch (t) {
  case od::json_type::object: {
    od::object o;
    if (auto e = v.get_object().get(o))
      return json_error(e);
    return to_tree(o, out);
  }
  case od::json_type::array: {
    od::array a;
    if (auto e = v.get_array().get(a))
      return json_error(e);
    json::array arr;
    for (auto item_result : a) {
      od::value item;
      if (auto e = std::move(item_result).get(item))
        return json_error(e);
      arr.emplace_back();
      if (auto s = to_tree(item, arr.back()); !s.ok())
        return std::move(s).in_index(arr.size() - 1);
    }
    out = std::move(arr);
    return {};
  }
  case od::json_type::number: {
    od::number_type nt;
    if (auto e = v.get_number_type().get(nt))
      return json_error(e);
    if (nt == od::number_type::signed_integer) {
      std::int64_t i;
      if (auto e = v.get_int64().get(i))
        return json_error(e);
      out = static_cast<long long>(i);
    } else if (nt == od::number_type::unsigned_integer) {
      std::uint64_t u;
      if (auto e = v.get_uint64().get(u))
        return json_error(e);
      out = u <= static_cast<std::uint64_t>(INT64_MAX) ? json::value(static_cast<long long>(u))
                                                       : json::value(static_cast<double>(u));
    } else {
      double d;
      if (auto e = v.get_double().get(d))
        return json_error(e);
      out = d;
    }
    return {};
  }
  case od::json_type::string: {
    std::string_view s;
    if (auto e = v.get_string().get(s))
      return json_error(e);
    out = s;
    return {};
  }
  case od::json_type::boolean: {
    bool b;
    if (auto e = v.get_bool().get(b))
      return json_error(e);
    out = b;
    return {};
  }
  case od::json_type::null:
    out = nullptr;
    return {};
  }
  return dstatus::fail("json parse error: invalid JSON value");
}

namespace {

dstatus run_on(od::parser& parser, std::string& buffer, std::string_view text,
               const std::function<dstatus(od_node&)>& fn) {
  buffer.resize(text.size() + simdjson::SIMDJSON_PADDING);
  std::memcpy(buffer.data(), text.data(), text.size());
  od::document doc;
  if (auto e = parser.iterate(buffer.data(), text.size(), buffer.size()).get(doc))
    return json_error(e);
  od::value root;
  if (auto e = doc.get_value().get(root))
    return json_error(e);
  od_node n(root);
  return fn(n);
}

// One parser and one padded copy buffer per thread: simdjson needs SIMDJSON_PADDING readable
// bytes past the end, and reusing both keeps the hot path free of allocations of its own.
// A large document (a big LIST) gets its own, so that its memory is not kept for good.
template <class Fn>
dstatus with_document(std::string_view text, Fn&& fn) {
  constexpr std::size_t keep_limit = std::size_t(1) << 22;
  if (text.size() > keep_limit) {
    od::parser parser;
    std::string buffer;
    return run_on(parser, buffer, text, fn);
  }
  thread_local od::parser parser;
  thread_local std::string buffer;
  return run_on(parser, buffer, text, fn);
}

dstatus read_event_type(od_node& v, watch_event_type& out, bool& seen) {
  std::string t;
  KOZMO_DTRY(v.read(t));
  auto parsed = parse_watch_event_type(t);
  if (!parsed)
    return dstatus::fail("unknown watch event type \"" + t + "\"");
  out = *parsed;
  seen = true;
  return {};
}

template <class T>
dstatus decode_event_object(od_node& n, watch_event<T>& ev) {
  std::string api_version;
  KOZMO_DTRY(n.peek_type_meta(api_version, ev.kind));
  if (ev.kind == "Status") {
    ev.status.emplace();
    return decode(n, *ev.status);
  }
  KOZMO_DTRY(decode(n, ev.object));
  ev.resource_version = ev.object.metadata.resource_version;
  return {};
}

template <class T>
dstatus decode_any_as(od_node& n, any_watch_event& ev) {
  T obj{};
  KOZMO_DTRY(decode(n, obj));
  if constexpr (!std::is_same_v<T, api_status>)
    ev.resource_version = obj.metadata.resource_version;
  ev.object = std::move(obj);
  return {};
}

dstatus decode_any_object(od_node& n, any_watch_event& ev) {
  KOZMO_DTRY(n.peek_type_meta(ev.api_version, ev.kind));
  const std::string& k = ev.kind;
  if (k == "Status")
    return decode_any_as<api_status>(n, ev);
  if (ev.api_version == "v1") {
    if (k == "Pod") return decode_any_as<pod>(n, ev);
    if (k == "Node") return decode_any_as<node>(n, ev);
    if (k == "Service") return decode_any_as<service>(n, ev);
    if (k == "Event") return decode_any_as<event>(n, ev);
    if (k == "Namespace") return decode_any_as<namespace_object>(n, ev);
    if (k == "PodTemplate") return decode_any_as<pod_template>(n, ev);
  }
  if (ev.api_version == "coordination.k8s.io/v1" && k == "Lease")
    return decode_any_as<lease>(n, ev);
  return decode_any_as<custom_object>(n, ev);
}

} // namespace
} // namespace detail

std::string_view to_string(watch_event_type t) {
  switch (t) {
  case watch_event_type::added: return "ADDED";
  case watch_event_type::modified: return "MODIFIED";
  case watch_event_type::deleted: return "DELETED";
  case watch_event_type::bookmark: return "BOOKMARK";
  case watch_event_type::error: return "ERROR";
  }
  return "";
}

std::optional<watch_event_type> parse_watch_event_type(std::string_view s) {
  if (s == "ADDED") return watch_event_type::added;
  if (s == "MODIFIED") return watch_event_type::modified;
  if (s == "DELETED") return watch_event_type::deleted;
  if (s == "BOOKMARK") return watch_event_type::bookmark;
  if (s == "ERROR") return watch_event_type::error;
  return std::nullopt;
}

template <class T>
expected<T> decode(std::string_view json) {
  T out{};
  auto s = detail::with_document(json, [&](detail::od_node& n) { return detail::decode(n, out); });
  if (!s.ok())
    return s.to_error();
  return out;
}

template <class T>
expected<watch_event<T>> decode_watch_event(std::string_view line) {
  watch_event<T> ev;
  bool have_type = false;
  auto s = detail::with_document(line, [&](detail::od_node& root) {
    return root.fields([&](std::string_view k, detail::od_node& v) -> detail::dstatus {
      if (k == "type")
        return detail::read_event_type(v, ev.type, have_type);
      if (k == "object")
        return detail::decode_event_object(v, ev);
      return {};
    });
  });
  if (!s.ok())
    return s.to_error();
  if (!have_type)
    return error::bad_request("watch event without a type");
  return ev;
}

expected<any_watch_event> decode_watch_event(std::string_view line) {
  any_watch_event ev;
  bool have_type = false;
  auto s = detail::with_document(line, [&](detail::od_node& root) {
    return root.fields([&](std::string_view k, detail::od_node& v) -> detail::dstatus {
      if (k == "type")
        return detail::read_event_type(v, ev.type, have_type);
      if (k == "object")
        return detail::decode_any_object(v, ev);
      return {};
    });
  });
  if (!s.ok())
    return s.to_error();
  if (!have_type)
    return error::bad_request("watch event without a type");
  return ev;
}

template <class T>
expected<object_list<T>> decode_list(std::string_view json) {
  object_list<T> out;
  auto s = detail::with_document(json, [&](detail::od_node& n) { return detail::decode(n, out); });
  if (!s.ok())
    return s.to_error();
  return out;
}

#define KOZMO_DECODE_KIND(T)                                                                        \
  template expected<T> decode<T>(std::string_view);                                                 \
  template expected<watch_event<T>> decode_watch_event<T>(std::string_view);                        \
  template expected<object_list<T>> decode_list<T>(std::string_view);

KOZMO_DECODE_KIND(pod)
KOZMO_DECODE_KIND(node)
KOZMO_DECODE_KIND(service)
KOZMO_DECODE_KIND(event)
KOZMO_DECODE_KIND(lease)
KOZMO_DECODE_KIND(namespace_object)
KOZMO_DECODE_KIND(pod_template)
KOZMO_DECODE_KIND(custom_object)
#undef KOZMO_DECODE_KIND

template expected<pod_template_spec> decode<pod_template_spec>(std::string_view);
template expected<pod_spec> decode<pod_spec>(std::string_view);
template expected<object_meta> decode<object_meta>(std::string_view);
template expected<api_status> decode<api_status>(std::string_view);

} // namespace kozmo::k8s
