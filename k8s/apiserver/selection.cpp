#include "k8s/apiserver/selection.hpp"

#include "k8s/model/selector.hpp"

#include <array>
#include <vector>

namespace kozmo::apiserver {
namespace {

std::string text_at(const json::value& obj, std::initializer_list<std::string_view> path, std::string fallback = {}) {
  const json::value* v = obj.at_path(path);
  if (!v)
    return fallback;
  if (v->is_string())
    return v->as_string();
  if (v->is_bool())
    return v->as_bool() ? "true" : "false";
  if (v->is_int())
    return std::to_string(v->as_int());
  return fallback;
}

const std::vector<std::string_view>& supported_fields(const resource_type& rt) {
  static const std::vector<std::string_view> common = {"metadata.name", "metadata.namespace"};
  static const std::vector<std::string_view> pods = {
      "metadata.name",      "metadata.namespace", "spec.nodeName",     "spec.restartPolicy", "spec.schedulerName",
      "spec.serviceAccountName", "spec.hostNetwork", "status.phase",   "status.podIP",       "status.podIPs",
      "status.nominatedNodeName"};
  static const std::vector<std::string_view> events = {
      "metadata.name",         "metadata.namespace",   "involvedObject.kind",        "involvedObject.namespace",
      "involvedObject.name",   "involvedObject.uid",   "involvedObject.apiVersion",  "involvedObject.resourceVersion",
      "involvedObject.fieldPath", "reason",            "reportingComponent",         "source",
      "type"};
  static const std::vector<std::string_view> nodes = {"metadata.name", "metadata.namespace", "spec.unschedulable"};
  static const std::vector<std::string_view> namespaces = {"metadata.name", "metadata.namespace", "status.phase"};
  static const std::vector<std::string_view> secrets = {"metadata.name", "metadata.namespace", "type"};
  static const std::vector<std::string_view> services = {"metadata.name", "metadata.namespace", "spec.clusterIP",
                                                         "spec.type"};
  if (!rt.builtin)
    return common;
  if (rt.kind == "Pod")
    return pods;
  if (rt.kind == "Event")
    return events;
  if (rt.kind == "Node")
    return nodes;
  if (rt.kind == "Namespace")
    return namespaces;
  if (rt.kind == "Secret")
    return secrets;
  if (rt.kind == "Service")
    return services;
  return common;
}

} // namespace

std::optional<std::string> field_label_value(const resource_type& rt, const json::value& obj, std::string_view field) {
  const auto& fields = supported_fields(rt);
  if (std::find(fields.begin(), fields.end(), field) == fields.end())
    return std::nullopt;
  if (field == "metadata.name")
    return text_at(obj, {"metadata", "name"});
  if (field == "metadata.namespace")
    return text_at(obj, {"metadata", "namespace"});
  if (field == "spec.hostNetwork" || field == "spec.unschedulable")
    return text_at(obj, {"spec", field.substr(5)}, "false");
  if (field == "status.podIPs") {
    const json::value* ips = obj.at_path({"status", "podIPs"});
    return ips && ips->is_array() && !ips->as_array().empty() ? ips->as_array()[0].get_string("ip") : std::string();
  }
  if (field == "source")
    return text_at(obj, {"source", "component"});
  if (field == "type" || field == "reason" || field == "reportingComponent")
    return text_at(obj, {field});
  // Dotted two-level paths: spec.nodeName, status.phase, involvedObject.name, ...
  auto dot = field.find('.');
  return text_at(obj, {field.substr(0, dot), field.substr(dot + 1)});
}

expected<object_predicate> make_selection(const resource_type& rt, std::string_view label_text,
                                          std::string_view field_text) {
  auto labels = k8s::label_selector::parse(label_text);
  if (!labels)
    return error::bad_request(labels.err().message);
  auto fields = k8s::field_selector::parse(field_text);
  if (!fields)
    return error::bad_request(fields.err().message);
  const auto& supported = supported_fields(rt);
  auto ok_fields = fields->check_supported(std::span<const std::string_view>(supported.data(), supported.size()));
  if (!ok_fields)
    return error::bad_request(ok_fields.err().message);
  if (labels->empty() && fields->empty())
    return object_predicate{};
  resource_type type = rt;
  return object_predicate{[labels = std::move(*labels), fields = std::move(*fields),
                           type = std::move(type)](const json::value& obj) {
    if (!labels.empty()) {
      const json::value* l = obj.at_path({"metadata", "labels"});
      if (!labels.matches(l ? *l : json::value()))
        return false;
    }
    if (!fields.empty())
      return fields.matches([&](std::string_view f) { return field_label_value(type, obj, f); });
    return true;
  }};
}

} // namespace kozmo::apiserver
