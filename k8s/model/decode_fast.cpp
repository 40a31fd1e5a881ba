// The fast decoding path: simdjson's DOM parser over raw JSON text (responses, list bodies and
// watch lines), and the typed decoders walking its tape straight into the models (see
// detail/tape_node.hpp for why the DOM rather than ondemand).
#include "k8s/json/big_integers.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/detail/tape_node.hpp"
#include "k8s/model/watch.hpp"

#include <simdjson.h>

#include <charconv>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace kozmo::k8s {
namespace detail {

namespace sdom = simdjson::dom;

dstatus json_error(simdjson::error_code e) {
  return dstatus::fail(std::string("json parse error: ") + simdjson::error_message(e));
}

std::string number_text(const tape_node& n) {
  char buf[24];
  std::uint64_t bits = n.next_word();
  switch (n.type()) {
  case 'l': return std::string(buf, std::to_chars(buf, buf + sizeof buf, static_cast<std::int64_t>(bits)).ptr);
  case 'u': return std::string(buf, std::to_chars(buf, buf + sizeof buf, bits).ptr);
  case 'd': {
    // Printed as the tree decoder sees it (encoding/json's form), so both decoders agree.
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return json::dump(json::value(d));
  }
  default: return {};
  }
}

void tape_to_tree(const tape_node& n, json::value& out) {
  switch (n.type()) {
  case '{': {
    json::object obj;
    // Keys are set one by one so that a repeated key keeps its last value, as Go does. The
    // callbacks cannot fail: the tape is already known to be valid JSON.
    (void)n.fields([&](std::string_view key, const tape_node& child) -> dstatus {
      tape_to_tree(child, obj[key]);
      return {};
    });
    out = std::move(obj);
    return;
  }
  case '[': {
    json::array arr;
    arr.reserve(n.element_count());
    (void)n.elements([&](const tape_node& item) -> dstatus {
      tape_to_tree(item, arr.emplace_back());
      return {};
    });
    out = std::move(arr);
    return;
  }
  case 'l': out = static_cast<long long>(static_cast<std::int64_t>(n.next_word())); return;
  case 'u': {
    std::uint64_t u = n.next_word();
    out = u <= static_cast<std::uint64_t>(INT64_MAX) ? json::value(static_cast<long long>(u))
                                                     : json::value(static_cast<double>(u));
    return;
  }
  case 'd': {
    double d;
    std::uint64_t bits = n.next_word();
    std::memcpy(&d, &bits, sizeof d);
    out = d;
    return;
  }
  case '"': out = n.string_at(); return;
  case 't': out = true; return;
  case 'f': out = false; return;
  default: out = nullptr; return;
  }
}

namespace {

// simdjson reads up to SIMDJSON_PADDING bytes past the end of its input (their values do not
// matter). Memory is mapped a page at a time, so when those bytes lie in the same 4 KiB page
// as the input's last byte they are readable, and the text is parsed where it is: copying a
// watch line (a few KiB) into the padded buffer was about 6 % of a pod event's decode. Builds
// for memory checkers (or with KOZMO_NO_PAGE_PADDING) always copy, so that no read leaves the
// caller's buffer; valgrind users should define it too.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define KOZMO_NO_PAGE_PADDING 1
#endif
#endif
bool padding_readable(std::string_view text) {
#if defined(__SANITIZE_ADDRESS__) || defined(KOZMO_NO_PAGE_PADDING)
  (void)text;
  return false;
#else
  if (text.empty())
    return false;
  constexpr std::uintptr_t page = 4096;
  auto last = reinterpret_cast<std::uintptr_t>(text.data()) + text.size() - 1;
  return last / page == (last + simdjson::SIMDJSON_PADDING) / page;
#endif
}

// One parser and one padded copy buffer per thread: simdjson needs SIMDJSON_PADDING readable
// bytes past the end, and reusing both keeps the hot path free of allocations of its own.
// A large document (a big LIST) gets its own, so that its memory is not kept for good: a DOM
// parser holds about 14 bytes per byte of its largest document (tape, strings, indexes).
template <class Fn>
dstatus with_document(std::string_view text, Fn&& fn) {
  constexpr std::size_t keep_limit = std::size_t(1) << 20;
  auto run_on = [&](sdom::parser& parser, std::string& buffer) -> dstatus {
    const char* input = text.data();
    if (!padding_readable(text)) {
      if (buffer.size() < text.size() + simdjson::SIMDJSON_PADDING)
        buffer.resize(text.size() + simdjson::SIMDJSON_PADDING);
      std::memcpy(buffer.data(), text.data(), text.size());
      input = buffer.data();
    }
    if (auto e = parser.parse(input, text.size(), false).error()) {
      // Integers beyond 64 bits (k8s/json/big_integers.hpp): read as floating point, as Go does.
      std::string widened = e == simdjson::NUMBER_ERROR ? json::widen_big_integers(text) : std::string();
      if (widened.empty())
        return json_error(e);
      std::size_t size = widened.size();
      widened.resize(size + simdjson::SIMDJSON_PADDING);
      if (auto again = parser.parse(widened.data(), size, false).error())
        return json_error(again);
    }
    // Word 0 is the root marker; the document's value starts at word 1.
    tape_doc doc{parser.doc.tape.get(), parser.doc.string_buf.get()};
    tape_node n(doc, 1);
    return fn(n);
  };
  if (text.size() > keep_limit) {
    sdom::parser parser;
    std::string buffer;
    return run_on(parser, buffer);
  }
  thread_local sdom::parser parser;
  thread_local std::string buffer;
  return run_on(parser, buffer);
}

dstatus read_event_type(tape_node& v, watch_event_type& out, bool& seen) {
  std::string_view t;
  KOZMO_DTRY(v.read_view(t));
  auto parsed = parse_watch_event_type(t);
  if (!parsed)
    return dstatus::fail("unknown watch event type \"" + std::string(t) + "\"");
  out = *parsed;
  seen = true;
  return {};
}

// The object of a watch event, or its Status; decode_object(node, object) fills the object.
template <class T, class DecodeObject>
dstatus decode_event_object(tape_node& n, watch_event<T>& ev, DecodeObject&& decode_object) {
  std::string api_version;
  KOZMO_DTRY(n.peek_type_meta(api_version, ev.kind));
  if (ev.kind == "Status") {
    ev.status.emplace();
    return decode(n, *ev.status);
  }
  KOZMO_DTRY(decode_object(n, ev.object));
  ev.resource_version = ev.object.metadata.resource_version;
  return {};
}

// A pod as decode_counted_pod_list reads it: the metadata, a few fields of the spec, the phase.
struct counted_container {
  container& c;
};
struct counted_spec {
  pod_spec& s;
};
struct counted_status {
  pod_status& s;
};
struct counted_pod {
  pod& p;
};

dstatus decode_field(field_key k, tape_node& v, counted_container& x) {
  if (k == "name") return decode(v, x.c.name);
  if (k == "resources") return decode(v, x.c.resources);
  return {};
}

// An array, each item decoded by decode_item(node, item): decode(node, vector) with another
// decoder for the items.
template <class T, class DecodeItem>
dstatus decode_each(tape_node& n, std::vector<T>& out, DecodeItem&& decode_item) {
  out.clear();
  out.reserve(n.element_count());
  return n.elements([&](tape_node& item) -> dstatus { return decode_item(item, out.emplace_back()); });
}

dstatus decode_counted_containers(tape_node& n, std::vector<container>& out) {
  return decode_each(n, out, [](tape_node& item, container& c) {
    counted_container ref{c};
    return decode(item, ref);
  });
}

dstatus decode_field(field_key k, tape_node& v, counted_spec& x) {
  if (k == "nodeName") return decode(v, x.s.node_name);
  if (k == "schedulerName") return decode(v, x.s.scheduler_name);
  if (k == "priority") return decode(v, x.s.priority);
  if (k == "containers") return decode_counted_containers(v, x.s.containers);
  if (k == "initContainers") return decode_counted_containers(v, x.s.init_containers);
  return {};
}

dstatus decode_field(field_key k, tape_node& v, counted_status& x) {
  return k == "phase" ? decode(v, x.s.phase) : dstatus{};
}

dstatus decode_field(field_key k, tape_node& v, counted_pod& x) {
  if (k == "metadata") return decode(v, x.p.metadata);
  if (k == "spec") {
    counted_spec ref{x.p.spec};
    return decode(v, ref);
  }
  if (k == "status") {
    counted_status ref{x.p.status};
    return decode(v, ref);
  }
  return {};
}

dstatus decode_counted(tape_node& n, pod& p) {
  counted_pod ref{p};
  return decode(n, ref);
}

// A list whose items are decoded by decode_item(node, item).
template <class T, class DecodeItem>
struct list_with {
  object_list<T>& l;
  DecodeItem& decode_item;
};

template <class T, class DecodeItem>
dstatus decode_field(field_key k, tape_node& v, list_with<T, DecodeItem>& x) {
  if (k != "items")
    return decode_field(k, v, x.l); // the list's metadata
  return decode_each(v, x.l.items, x.decode_item);
}

template <class T>
dstatus decode_any_as(tape_node& n, any_watch_event& ev) {
  T obj{};
  KOZMO_DTRY(decode(n, obj));
  if constexpr (!std::is_same_v<T, api_status>)
    ev.resource_version = obj.metadata.resource_version;
  ev.object = std::move(obj);
  return {};
}

dstatus decode_any_object(tape_node& n, any_watch_event& ev) {
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
  expected<T> result{std::in_place}; // decoded in place and returned by every path, as below
  auto s = detail::with_document(json, [&](detail::tape_node& n) { return detail::decode(n, *result); });
  if (!s.ok())
    result = s.to_error();
  return result;
}

namespace detail {
namespace {

template <class T, class DecodeObject>
expected<watch_event<T>> decode_watch_event_with(std::string_view line, DecodeObject&& decode_object) {
  // Decoded in place: a pod is some forty strings, maps and vectors, and moving it into the
  // result afterwards costs more than decoding its scalars.
  expected<watch_event<T>> result{std::in_place};
  watch_event<T>& ev = *result;
  bool have_type = false;
  auto s = with_document(line, [&](tape_node& root) {
    return root.fields([&](std::string_view k, tape_node& v) -> dstatus {
      if (k == "type")
        return read_event_type(v, ev.type, have_type);
      if (k == "object")
        return decode_event_object(v, ev, decode_object);
      return {};
    });
  });
  // Every path returns `result` itself, so that it is constructed in the caller's slot.
  if (!s.ok())
    result = s.to_error();
  else if (!have_type)
    result = error::bad_request("watch event without a type");
  return result;
}

template <class T, class DecodeItem>
expected<object_list<T>> decode_list_with(std::string_view json, DecodeItem&& decode_item) {
  expected<object_list<T>> result{std::in_place};
  auto s = with_document(json, [&](tape_node& n) {
    list_with<T, DecodeItem> ref{*result, decode_item};
    return decode(n, ref);
  });
  if (!s.ok())
    result = s.to_error();
  return result;
}

// The whole object, as the model has it.
constexpr auto decode_whole = [](tape_node& n, auto& object) { return decode(n, object); };

} // namespace
} // namespace detail

template <class T>
expected<watch_event<T>> decode_watch_event(std::string_view line) {
  return detail::decode_watch_event_with<T>(line, detail::decode_whole);
}

expected<watch_event<pod>> decode_counted_pod_event(std::string_view line) {
  return detail::decode_watch_event_with<pod>(line, detail::decode_counted);
}

expected<object_list<pod>> decode_counted_pod_list(std::string_view json) {
  return detail::decode_list_with<pod>(json, detail::decode_counted);
}

expected<any_watch_event> decode_watch_event(std::string_view line) {
  any_watch_event ev;
  bool have_type = false;
  auto s = detail::with_document(line, [&](detail::tape_node& root) {
    return root.fields([&](std::string_view k, detail::tape_node& v) -> detail::dstatus {
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
  return detail::decode_list_with<T>(json, detail::decode_whole);
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
