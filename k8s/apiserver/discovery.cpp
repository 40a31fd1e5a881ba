#include "k8s/apiserver/discovery.hpp"

#include "k8s/apiserver/request_util.hpp"

#include <algorithm>

namespace kozmo::apiserver {
namespace {

http_response json_response(const json::value& v) {
  http_response res;
  res.set_header("Content-Type", "application/json");
  res.body = json::dump(v);
  return res;
}

// kube-apiserver's storageVersionHash is the first 8 bytes of a sha256, base64: any stable
// digest of group/version/kind serves the same purpose (detecting storage version changes).
std::string storage_version_hash(const resource_type& rt) {
  std::uint64_t h = 1469598103934665603ULL;
  for (char c : rt.group + "/" + rt.version + "/" + rt.kind) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  std::string bytes;
  for (int i = 7; i >= 0; --i)
    bytes += static_cast<char>((h >> (i * 8)) & 0xff);
  return base64_encode(bytes);
}

json::array strings(const std::vector<std::string>& v) {
  json::array out;
  for (const auto& s : v)
    out.push_back(s);
  return out;
}

json::value group_entry(const std::string& name, const std::vector<std::string>& versions) {
  json::array vs;
  for (const auto& v : versions)
    vs.push_back(json::object{{"groupVersion", name + "/" + v}, {"version", v}});
  return json::object{{"name", name},
                      {"versions", std::move(vs)},
                      {"preferredVersion", json::object{{"groupVersion", name + "/" + versions.front()},
                                                        {"version", versions.front()}}}};
}

} // namespace

http_response version_response() {
  return json_response(json::object{{"major", "1"},
                                    {"minor", "32"},
                                    {"gitVersion", "v1.32.0+kozmo"},
                                    {"gitCommit", "0000000000000000000000000000000000000000"},
                                    {"gitTreeState", "clean"},
                                    {"buildDate", "2026-01-01T00:00:00Z"},
                                    {"goVersion", "go1.23.0"},
                                    {"compiler", "gc"},
                                    {"platform", "linux/amd64"}});
}

http_response api_versions_response(const std::string& server_address) {
  return json_response(json::object{
      {"kind", "APIVersions"},
      {"versions", json::array{"v1"}},
      {"serverAddressByClientCIDRs",
       json::array{json::object{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}}}});
}

http_response api_group_list_response(const store& s) {
  json::array groups;
  for (const auto& [name, versions] : s.groups())
    groups.push_back(group_entry(name, versions));
  return json_response(json::object{{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", std::move(groups)}});
}

std::optional<http_response> api_group_response(const store& s, const std::string& group) {
  for (const auto& [name, versions] : s.groups())
    if (name == group) {
      json::value g = group_entry(name, versions);
      json::object doc{{"kind", "APIGroup"}, {"apiVersion", "v1"}};
      for (auto& [k, v] : g.as_object())
        doc.set(k, v);
      return json_response(json::value(std::move(doc)));
    }
  return std::nullopt;
}

std::optional<http_response> resource_list_response(const store& s, const std::string& group, const std::string& version) {
  std::vector<std::pair<std::string, json::value>> entries;
  bool found = false;
  for (const auto& rt : s.resources()) {
    if (rt->group != group || !rt->serves(version))
      continue;
    found = true;
    json::object e{{"name", rt->plural}, {"singularName", rt->singular}, {"namespaced", rt->namespaced},
                   {"kind", rt->kind},   {"verbs", strings(rt->verbs)}};
    if (!rt->short_names.empty())
      e.set("shortNames", strings(rt->short_names));
    if (!rt->categories.empty())
      e.set("categories", strings(rt->categories));
    e.set("storageVersionHash", storage_version_hash(*rt));
    entries.emplace_back(rt->plural, json::value(std::move(e)));

    auto sub = [&](const std::string& name, const std::string& kind, std::vector<std::string> verbs) {
      json::object se{{"name", rt->plural + "/" + name}, {"singularName", ""}, {"namespaced", rt->namespaced},
                      {"kind", kind}, {"verbs", strings(verbs)}};
      entries.emplace_back(rt->plural + "/" + name, json::value(std::move(se)));
    };
    const crd_version* cv = rt->crd_version_of(version);
    if (cv ? cv->status_subresource : rt->status_subresource)
      sub("status", rt->kind, {"get", "patch", "update"});
    if (rt->binding_subresource)
      sub("binding", "Binding", {"create"});
    if (rt->builtin && rt->kind == "Pod")
      sub("log", "Pod", {"get"});
    if (rt->builtin && rt->kind == "Namespace")
      sub("finalize", "Namespace", {"update"});
  }
  if (group.empty() && version == "v1") {
    json::object b{{"name", "bindings"}, {"singularName", ""}, {"namespaced", true}, {"kind", "Binding"},
                   {"verbs", json::array{"create"}}};
    entries.emplace_back("bindings", json::value(std::move(b)));
  }
  if (!found)
    return std::nullopt;
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  json::array resources;
  for (auto& [name, e] : entries)
    resources.push_back(std::move(e));
  json::object doc{{"kind", "APIResourceList"}};
  if (!group.empty())
    doc.set("apiVersion", "v1");  // kube-apiserver omits it for the core group only
  doc.set("groupVersion", group.empty() ? version : group + "/" + version);
  doc.set("resources", std::move(resources));
  return json_response(json::value(std::move(doc)));
}

} // namespace kozmo::apiserver
