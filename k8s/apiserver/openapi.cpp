// OpenAPI v3 documents, reduced to what clients use them for: kubectl checks that the PATCH
// operation of a kind lists a `fieldValidation` parameter (then it validates nothing itself
// and sends fieldValidation=Strict), and reads x-kubernetes-group-version-kind. Schemas of
// built-in kinds come from the known-field table (field_schema.hpp), CRDs' from their
// openAPIV3Schema.
//
// The patch operations do not advertise application/strategic-merge-patch+json: kubectl
// then computes strategic merge patches from its compiled-in types instead of from these
// (deliberately partial) schemas.
#include "k8s/apiserver/discovery.hpp"
#include "k8s/apiserver/field_schema.hpp"

namespace kozmo::apiserver {
namespace {

json::value query_param(const char* name, const char* description) {
  return json::object{{"name", name}, {"in", "query"}, {"description", description},
                      {"schema", json::object{{"type", "string"}, {"uniqueItems", true}}}};
}

json::value path_param(const char* name) {
  return json::object{{"name", name}, {"in", "path"}, {"required", true},
                      {"schema", json::object{{"type", "string"}, {"uniqueItems", true}}}};
}

std::string schema_name(const resource_type& rt, const std::string& version) {
  // Kubernetes names schemas after the Go package: io.k8s.api.core.v1.Pod; CRDs use the
  // reversed group: com.example.wire.v1.Gizmo.
  if (rt.builtin) {
    std::string pkg = rt.group.empty() ? "core" : rt.group.substr(0, rt.group.find('.'));
    if (rt.group == "apiextensions.k8s.io")
      return "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions." + version + "." + rt.kind;
    return "io.k8s.api." + pkg + "." + version + "." + rt.kind;
  }
  std::string rev;
  std::string g = rt.group;
  while (!g.empty()) {
    auto dot = g.rfind('.');
    rev += (rev.empty() ? "" : ".") + (dot == std::string::npos ? g : g.substr(dot + 1));
    g = dot == std::string::npos ? std::string() : g.substr(0, dot);
  }
  return rev + "." + version + "." + rt.kind;
}

json::value operation(const resource_type& rt, const std::string& version, const std::string& action,
                      const std::string& op_id, bool writes, const std::string& ref) {
  json::array params;
  if (writes) {
    params.push_back(query_param("dryRun", "When present, indicates that modifications should not be persisted."));
    params.push_back(query_param("fieldManager", "fieldManager is a name associated with the actor or entity that is making these changes."));
    params.push_back(query_param("fieldValidation",
                                 "fieldValidation instructs the server on how to handle objects in the request "
                                 "(POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: "
                                 "Ignore, Warn (default), Strict."));
  }
  json::object op{{"operationId", op_id},
                  {"parameters", std::move(params)},
                  {"responses", json::object{{"200", json::object{{"description", "OK"},
                                                                  {"content", json::object{{"application/json",
                                                                   json::object{{"schema", json::object{{"$ref", ref}}}}}}}}}}},
                  {"x-kubernetes-action", action},
                  {"x-kubernetes-group-version-kind",
                   json::object{{"group", rt.group}, {"version", version}, {"kind", rt.kind}}}};
  if (action == "patch") {
    json::object content;
    for (auto type : {"application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json"})
      content.set(type, json::object{{"schema", json::object{{"type", "object"}}}});
    op.set("requestBody", json::object{{"content", std::move(content)}, {"required", true}});
  } else if (action == "post" || action == "put") {
    op.set("requestBody", json::object{{"content", json::object{{"*/*", json::object{{"schema", json::object{{"$ref", ref}}}}}}},
                                       {"required", true}});
  }
  return op;
}

void add_resource(json::object& paths, json::object& schemas, const resource_type& rt, const std::string& version) {
  std::string prefix = rt.group.empty() ? "/api/" + version : "/apis/" + rt.group + "/" + version;
  std::string sname = schema_name(rt, version);
  std::string ref = "#/components/schemas/" + sname;
  std::string kind_id = rt.kind;
  std::string scope = rt.namespaced ? "Namespaced" : "";
  std::string collection = rt.namespaced ? prefix + "/namespaces/{namespace}/" + rt.plural : prefix + "/" + rt.plural;
  std::string item = collection + "/{name}";

  json::array collection_params, item_params;
  if (rt.namespaced) {
    collection_params.push_back(path_param("namespace"));
    item_params.push_back(path_param("namespace"));
  }
  item_params.push_back(path_param("name"));

  paths.set(collection, json::object{{"get", operation(rt, version, "list", "list" + scope + kind_id, false, ref)},
                                     {"post", operation(rt, version, "post", "create" + scope + kind_id, true, ref)},
                                     {"delete", operation(rt, version, "deletecollection", "deleteCollection" + scope + kind_id, false, ref)},
                                     {"parameters", collection_params}});
  paths.set(item, json::object{{"get", operation(rt, version, "get", "read" + scope + kind_id, false, ref)},
                               {"put", operation(rt, version, "put", "replace" + scope + kind_id, true, ref)},
                               {"patch", operation(rt, version, "patch", "patch" + scope + kind_id, true, ref)},
                               {"delete", operation(rt, version, "delete", "delete" + scope + kind_id, false, ref)},
                               {"parameters", item_params}});
  const crd_version* cv = rt.crd_version_of(version);
  if (cv ? cv->status_subresource : rt.status_subresource)
    paths.set(item + "/status",
              json::object{{"get", operation(rt, version, "get", "read" + scope + kind_id + "Status", false, ref)},
                           {"put", operation(rt, version, "put", "replace" + scope + kind_id + "Status", true, ref)},
                           {"patch", operation(rt, version, "patch", "patch" + scope + kind_id + "Status", true, ref)},
                           {"parameters", item_params}});
  if (rt.namespaced)
    paths.set(prefix + "/" + rt.plural, json::object{{"get", operation(rt, version, "list", "list" + kind_id + "ForAllNamespaces", false, ref)}});

  json::value schema = rt.builtin ? builtin_openapi_schema(rt.kind)
                                  : (cv && !cv->schema.is_null() ? cv->schema
                                                                 : json::value(json::object{{"type", "object"},
                                                                                            {"x-kubernetes-preserve-unknown-fields", true}}));
  if (schema.is_null())
    schema = json::object{{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}};
  schema.as_object().set("x-kubernetes-group-version-kind",
                         json::array{json::object{{"group", rt.group}, {"version", version}, {"kind", rt.kind}}});
  schemas.set(sname, std::move(schema));
}

std::string document_for(const store& s, const std::string& group, const std::string& version, bool& found) {
  json::object paths, schemas;
  found = false;
  for (const auto& rt : s.resources()) {
    if (rt->group != group || !rt->serves(version))
      continue;
    found = true;
    add_resource(paths, schemas, *rt, version);
  }
  json::value doc = json::object{{"openapi", "3.0.0"},
                                 {"info", json::object{{"title", "Kubernetes"}, {"version", "v1.32.0"}}},
                                 {"paths", std::move(paths)},
                                 {"components", json::object{{"schemas", std::move(schemas)}}}};
  return json::dump(doc);
}

std::string content_hash(const std::string& body) {
  std::uint64_t h1 = 1469598103934665603ULL, h2 = 0x9E3779B97F4A7C15ULL;
  for (unsigned char c : body) {
    h1 = (h1 ^ c) * 1099511628211ULL;
    h2 = (h2 ^ c) * 0x100000001B3ULL + 0x7F4A7C15ULL;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llX%016llX", static_cast<unsigned long long>(h1),
                static_cast<unsigned long long>(h2));
  return buf;
}

} // namespace

std::optional<http_response> openapi_v3_response(const store& s, const std::string& path) {
  http_response res;
  res.set_header("Content-Type", "application/json");
  if (path.empty()) {
    json::object paths;
    auto add = [&](const std::string& group, const std::string& version) {
      bool found = false;
      std::string doc = document_for(s, group, version, found);
      std::string key = group.empty() ? "api/" + version : "apis/" + group + "/" + version;
      paths.set(key, json::object{{"serverRelativeURL", "/openapi/v3/" + key + "?hash=" + content_hash(doc)}});
    };
    add("", "v1");
    for (const auto& [group, versions] : s.groups())
      for (const auto& v : versions)
        add(group, v);
    res.body = json::dump(json::value(json::object{{"paths", std::move(paths)}}));
    return res;
  }
  // "api/v1" or "apis/<group>/<version>"
  std::string group, version;
  if (path.rfind("api/", 0) == 0) {
    version = path.substr(4);
  } else if (path.rfind("apis/", 0) == 0) {
    auto rest = path.substr(5);
    auto slash = rest.find('/');
    if (slash == std::string::npos)
      return std::nullopt;
    group = rest.substr(0, slash);
    version = rest.substr(slash + 1);
  } else {
    return std::nullopt;
  }
  bool found = false;
  res.body = document_for(s, group, version, found);
  if (!found)
    return std::nullopt;
  // Documents are addressed by content hash, so clients may cache them for good.
  res.set_header("Cache-Control", "public, immutable");
  res.set_header("Etag", "\"" + content_hash(res.body) + "\"");
  return res;
}

} // namespace kozmo::apiserver
