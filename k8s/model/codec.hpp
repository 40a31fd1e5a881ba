// JSON codecs for the models.
//
// Decoding, two ways, same rules (unknown fields skipped, null means absent, strict types):
//   - decode<T>(text) / decode_pod(text) ...: simdjson (DOM tape read directly), no
//     JSON tree; for responses and watch lines (see watch.hpp for events and lists).
//   - from_json<T>(value): from a json::value tree, e.g. an object in the embedded server.
// Errors carry the field path: `spec.containers[0].resources.limits[memory]: quantity "8Xi" is
// invalid: quantities must match the regular expression '...'` (HTTP 400).
// Decoding is thread-safe (one simdjson parser per thread) and keeps no pointer into the input.
//
// Encoding: to_json(x) gives the Kubernetes JSON of a model, with apiVersion and kind for
// top-level kinds and empty fields omitted.
//
// IMPORTANT: a model keeps only the fields it names, so to_json is for building NEW objects
// (create). Never write back a decoded-then-modified model over an existing object: that would
// drop every field the model does not know (and fields set by newer servers). Update existing
// objects with a merge or strategic-merge patch holding only the fields you change.
#pragma once

#include "k8s/error.hpp"
#include "k8s/json/value.hpp"
#include "k8s/model/api_status.hpp"
#include "k8s/model/custom_object.hpp"
#include "k8s/model/event.hpp"
#include "k8s/model/lease.hpp"
#include "k8s/model/namespace.hpp"
#include "k8s/model/node.hpp"
#include "k8s/model/pod.hpp"
#include "k8s/model/pod_template.hpp"
#include "k8s/model/service.hpp"

#include <string_view>

namespace kozmo::k8s {

// T: pod, node, service, event, lease, namespace_object, pod_template, pod_template_spec,
// pod_spec, object_meta, custom_object, api_status.
template <class T>
expected<T> decode(std::string_view json);
template <class T>
expected<T> from_json(const json::value& v);

// A custom object taking the document over (no copy of it): for a document parsed only to be
// kept, such as an API answer.
expected<custom_object> custom_object_from(json::value&& document);

inline expected<pod> decode_pod(std::string_view json) { return decode<pod>(json); }
inline expected<node> decode_node(std::string_view json) { return decode<node>(json); }
inline expected<service> decode_service(std::string_view json) { return decode<service>(json); }
inline expected<event> decode_event(std::string_view json) { return decode<event>(json); }
inline expected<lease> decode_lease(std::string_view json) { return decode<lease>(json); }
inline expected<namespace_object> decode_namespace(std::string_view json) { return decode<namespace_object>(json); }
inline expected<pod_template> decode_pod_template(std::string_view json) { return decode<pod_template>(json); }
inline expected<custom_object> decode_custom_object(std::string_view json) { return decode<custom_object>(json); }
inline expected<api_status> decode_status(std::string_view json) { return decode<api_status>(json); }

// Top-level kinds (with apiVersion and kind).
json::value to_json(const pod& p);
json::value to_json(const node& n);
json::value to_json(const service& s);
json::value to_json(const event& e);
json::value to_json(const lease& l);
json::value to_json(const namespace_object& ns);
json::value to_json(const pod_template& t);
// The document with the model's apiVersion, kind and metadata fields laid over it; metadata
// fields the model does not name (managedFields, ...) stay as they are in the document.
json::value to_json(const custom_object& o);
json::value to_json(const api_status& s);

// Parts, for building other kinds (a training job's replica template, a patch).
json::value to_json(const object_meta& m);
json::value to_json(const pod_spec& s);
json::value to_json(const pod_status& s);
json::value to_json(const pod_template_spec& t);
json::value to_json(const container& c);
json::value to_json(const resource_list& r);
json::value to_json(const owner_reference& o);
json::value to_json(const condition& c);

} // namespace kozmo::k8s
