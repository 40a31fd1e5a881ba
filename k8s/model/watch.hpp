// Watch events and list responses, decoded straight from the bytes on the wire.
//
// A watch stream is one JSON object per line:
//   {"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{...},...}}
//   {"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"422"},...}}
//   {"type":"ERROR","object":{"kind":"Status",...,"reason":"Expired","code":410}}
// decode_watch_event<T>(line) is on the hot path of the watch actor: simdjson parses the line
// and the typed object is filled straight from simdjson's tape (unknown fields cost one jump),
// without a json::value tree.
#pragma once

#include "k8s/error.hpp"
#include "k8s/model/api_status.hpp"
#include "k8s/model/custom_object.hpp"
#include "k8s/model/event.hpp"
#include "k8s/model/lease.hpp"
#include "k8s/model/namespace.hpp"
#include "k8s/model/node.hpp"
#include "k8s/model/pod.hpp"
#include "k8s/model/pod_template.hpp"
#include "k8s/model/service.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kozmo::k8s {

enum class watch_event_type { added, modified, deleted, bookmark, error };

// "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR".
std::string_view to_string(watch_event_type t);
std::optional<watch_event_type> parse_watch_event_type(std::string_view s);

template <class T>
struct watch_event {
  watch_event_type type = watch_event_type::added;
  std::string kind;             // the object's kind: "Pod", or "Status" for ERROR
  std::string resource_version; // the object's metadata.resourceVersion (bookmarks included)
  T object{};                   // empty for ERROR
  std::optional<api_status> status; // set when the object is a Status (ERROR events)
};

// Decodes one watch line into the typed object. T is one of the model kinds (pod, node,
// service, event, lease, namespace_object, pod_template) or custom_object.
template <class T>
expected<watch_event<T>> decode_watch_event(std::string_view line);

// Any object a watch can carry; built-in kinds are recognised by apiVersion and kind, anything
// else is a custom_object.
using any_object = std::variant<custom_object, pod, node, service, event, lease, namespace_object,
                                pod_template, api_status>;

struct any_watch_event {
  watch_event_type type = watch_event_type::added;
  std::string api_version;
  std::string kind;
  std::string resource_version;
  any_object object;
};

// Decodes one watch line, choosing the model by the object's apiVersion and kind.
expected<any_watch_event> decode_watch_event(std::string_view line);

// A list response ({"kind":"PodList","metadata":{"resourceVersion":...},"items":[...]}).
template <class T>
struct object_list {
  std::string resource_version;
  std::string continue_token;
  std::optional<std::int64_t> remaining_item_count;
  std::vector<T> items;
};

template <class T>
expected<object_list<T>> decode_list(std::string_view json);

// Pods with only what a scheduler counts of another scheduler's pod: the metadata, where it
// runs (spec.nodeName, spec.schedulerName, spec.priority), its containers' and init
// containers' names and resources, and status.phase. Everything else is left empty: a LIST of
// 20,000 pods decodes in less time and memory. For a watch of pods that are only counted.
expected<watch_event<pod>> decode_counted_pod_event(std::string_view line);
expected<object_list<pod>> decode_counted_pod_list(std::string_view json);
// The same pods from the API server's protobuf (Accept: application/vnd.kubernetes.protobuf;
// k8s/protobuf_wire.hpp): an envelope around a PodList, or around a run of its items (the
// batches client::protobuf_list_splitter hands over). A pod whose fields the model cannot hold
// (a quantity it cannot parse) is left out and named in `skipped`, so that one object does not
// stop a watch; malformed wire data fails the whole answer.
expected<object_list<pod>> decode_counted_pod_list_protobuf(std::string_view body,
                                                            std::vector<std::string>* skipped = nullptr);

} // namespace kozmo::k8s
