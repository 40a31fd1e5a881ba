#include "runtime/crd_schema.hpp"

#include <set>
#include <string>

namespace kozmo::runtime {
namespace {

constexpr std::string_view def_prefix = "#/definitions/";
// resource.Quantity's serialization (<signedNumber><suffix>), as its OpenAPI description gives it.
constexpr std::string_view quantity_pattern =
    R"(^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$)";

json::value int_or_string() {
  return json::object{{"anyOf", json::array{json::object{{"type", "integer"}}, json::object{{"type", "string"}}}},
                      {"x-kubernetes-int-or-string", true}};
}

json::value quantity() {
  json::value q = int_or_string();
  q.as_object().set("pattern", std::string(quantity_pattern));
  return q;
}

// What controller-gen's generateEmbeddedObjectMeta keeps of an embedded ObjectMeta.
json::value embedded_meta() {
  json::value string_map = json::object{{"type", "object"}, {"additionalProperties", json::object{{"type", "string"}}}};
  return json::object{
      {"type", "object"},
      {"properties", json::object{{"annotations", string_map},
                                  {"finalizers", json::object{{"type", "array"}, {"items", json::object{{"type", "string"}}}}},
                                  {"labels", string_map},
                                  {"name", json::object{{"type", "string"}}},
                                  {"namespace", json::object{{"type", "string"}}}}},
  };
}

// Documented defaults of list-map keys that the OpenAPI document leaves optional.
const json::value* documented_default(std::string_view key) {
  static const json::value tcp = "TCP";
  return key == "protocol" ? &tcp : nullptr;
}

class converter {
public:
  explicit converter(const json::object& defs) : defs_(defs) {}

  expected<json::value> definition(const std::string& name) {
    const std::string_view n = name;
    if (n.ends_with(".Quantity"))
      return quantity();
    if (n.ends_with(".IntOrString"))
      return int_or_string();
    if (n.ends_with(".ObjectMeta"))
      return embedded_meta();
    const json::value* def = defs_.find(name);
    if (!def || !def->is_object())
      return error::not_found("the OpenAPI document has no definition " + name);
    if (!in_progress_.insert(name).second)  // a recursive type: keep what is written
      return json::value(json::object{{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}});
    auto out = schema(*def);
    in_progress_.erase(name);
    return out;
  }

  expected<json::value> schema(const json::value& in) {
    if (const json::value* ref = in.find("$ref"); ref && ref->is_string()) {
      const std::string& r = ref->as_string();
      if (r.rfind(def_prefix, 0) != 0)
        return error::bad_request("unsupported $ref " + r);
      auto out = definition(r.substr(def_prefix.size()));
      if (out && in.find("description") && out->is_object())
        out->as_object().set("description", *in.find("description"));
      return out;
    }
    if (in.get_string("format") == "int-or-string")
      return int_or_string();
    json::object out;
    for (const auto& [key, v] : in.as_object()) {
      if (key == "properties" && v.is_object()) {
        json::object props;
        for (const auto& [name, sub] : v.as_object()) {
          auto conv = schema(sub);
          if (!conv)
            return conv;
          props.set(name, std::move(*conv));
        }
        out.set(key, std::move(props));
      } else if ((key == "items" || key == "additionalProperties") && v.is_object()) {
        auto conv = schema(v);
        if (!conv)
          return conv;
        out.set(key, std::move(*conv));
      } else if (key == "description" || key == "type" || key == "format" || key == "required" || key == "enum" ||
                 key == "default" || key == "x-kubernetes-list-type" || key == "x-kubernetes-list-map-keys" ||
                 key == "x-kubernetes-map-type" || key == "x-kubernetes-preserve-unknown-fields" ||
                 key == "additionalProperties" || key == "minimum" || key == "maximum" || key == "pattern") {
        out.set(key, v);
      }
      // x-kubernetes-patch-*, x-kubernetes-group-version-kind and x-kubernetes-unions have no
      // meaning in a CRD schema.
    }
    if (!out.find("type") && out.find("properties"))
      out.set("type", "object");
    json::value result = std::move(out);
    default_list_map_keys(result);
    return result;
  }

private:
  // A structural list-map's keys must be required or defaulted in its items.
  static void default_list_map_keys(json::value& s) {
    const json::value* keys = s.find("x-kubernetes-list-map-keys");
    json::value* items = s.find("items");
    if (!keys || !keys->is_array() || !items || !items->is_object())
      return;
    json::value* props = items->find("properties");
    const json::value* required = items->find("required");
    for (const auto& k : keys->as_array()) {
      if (!k.is_string() || !props)
        continue;
      bool is_required = false;
      if (required && required->is_array())
        for (const auto& r : required->as_array())
          is_required = is_required || r == k;
      json::value* prop = props->find(k.as_string());
      if (is_required || !prop || prop->find("default"))
        continue;
      if (const json::value* d = documented_default(k.as_string()))
        prop->as_object().set("default", *d);
    }
  }

  const json::object& defs_;
  std::set<std::string> in_progress_;
};

std::string find_definition(const json::object& defs, const std::vector<std::string>& candidates) {
  for (const auto& c : candidates)
    if (defs.find(c))
      return c;
  return candidates.front();
}

// Replaces the opaque nodes of a Kozmo CRD schema, walking it in place.
status expand(json::value& node, std::string_view key, converter& conv, const json::object& defs) {
  if (!node.is_object())
    return ok;
  bool opaque = node.get_bool("x-kubernetes-preserve-unknown-fields");
  auto replace = [&](const std::string& def) -> status {
    auto full = conv.definition(def);
    if (!full)
      return full.err();
    if (const json::value* d = node.find("description"); d && full->is_object() && !full->find("description"))
      full->as_object().set("description", *d);
    node = std::move(*full);
    return ok;
  };
  if (opaque && key == "template")
    return replace("io.k8s.api.core.v1.PodTemplateSpec");
  if (opaque && key == "labelSelector")
    return replace("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector");
  if (opaque && key == "minResources") {
    json::value q = quantity();
    json::value desc = node.find("description") ? *node.find("description") : json::value();
    node = json::object{{"type", "object"}, {"additionalProperties", std::move(q)}};
    if (!desc.is_null())
      node.as_object().set("description", std::move(desc));
    return ok;
  }
  if (opaque && key == "metrics[]")
    return replace(find_definition(defs, {"io.k8s.api.autoscaling.v2.MetricSpec", "io.k8s.api.autoscaling.v2beta2.MetricSpec"}));
  if (json::value* props = node.find("properties"); props && props->is_object())
    for (auto& [name, sub] : props->as_object())
      if (auto st = expand(sub, name, conv, defs); !st)
        return st;
  if (json::value* items = node.find("items"); items && items->is_object())
    if (auto st = expand(*items, std::string(key) + "[]", conv, defs); !st)
      return st;
  if (json::value* additional = node.find("additionalProperties"); additional && additional->is_object())
    if (auto st = expand(*additional, "", conv, defs); !st)
      return st;
  return ok;
}

} // namespace

expected<json::value> with_full_pod_schema(const json::value& crd, const json::value& openapi) {
  const json::value* defs = openapi.find("definitions");
  if (!defs || !defs->is_object())
    return error::bad_request("not an OpenAPI v2 document (no \"definitions\"): fetch one with "
                              "`kubectl get --raw /openapi/v2`");
  converter conv(defs->as_object());
  json::value out = crd;
  json::value* versions = out.at_path({"spec", "versions"});
  if (!versions || !versions->is_array())
    return out;
  for (auto& v : versions->as_array()) {
    json::value* schema = v.at_path({"schema", "openAPIV3Schema"});
    if (!schema)
      continue;
    if (auto st = expand(*schema, "", conv, defs->as_object()); !st)
      return st.err();
  }
  return out;
}

} // namespace kozmo::runtime
