#include "tests/apiserver/fixture.hpp"

using namespace kozmo;
using namespace kozmo::test;

namespace {
const char* const aggregated_accept =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;"
    "v=v2beta1;as=APIGroupDiscoveryList,application/json";

const json::value* find_resource(const json::value& list, std::string_view name) {
  for (const auto& r : list.find("resources")->as_array())
    if (r.get_string("name") == name)
      return &r;
  return nullptr;
}
} // namespace

TEST_CASE("version reports Kubernetes 1.32 so the kubectl dispatcher runs kubectl 1.32") {
  running_server s;
  auto res = s.http->get("/version?timeout=5s");
  CHECK(res.status == 200);
  CHECK(res.json().get_string("major") == "1");
  CHECK(res.json().get_string("minor") == "32");
  CHECK(res.header("Cache-Control") == "no-cache, private");
  CHECK(res.header("Content-Type") == "application/json");
}

TEST_CASE("the aggregated discovery Accept gets legacy JSON instead of 406") {
  running_server s;
  auto api = s.http->get("/api?timeout=32s", {{"Accept", aggregated_accept}});
  CHECK(api.status == 200);
  CHECK(api.header("Content-Type") == "application/json");
  CHECK(api.json().get_string("kind") == "APIVersions");
  CHECK(api.json().find("versions")->as_array().at(0).as_string() == "v1");

  auto apis = s.http->get("/apis?timeout=32s", {{"Accept", aggregated_accept}});
  CHECK(apis.status == 200);
  CHECK(apis.json().get_string("kind") == "APIGroupList");
  std::vector<std::string> groups;
  json::value group_list = apis.json();
  for (const auto& g : group_list.find("groups")->as_array())
    groups.push_back(g.get_string("name"));
  CHECK(std::find(groups.begin(), groups.end(), "apiextensions.k8s.io") != groups.end());
  CHECK(std::find(groups.begin(), groups.end(), "coordination.k8s.io") != groups.end());
}

TEST_CASE("the core resource list carries verbs, short names, categories and subresources") {
  running_server s;
  auto res = s.http->get("/api/v1?timeout=32s");
  REQUIRE(res.status == 200);
  json::value list = res.json();
  CHECK(list.get_string("kind") == "APIResourceList");
  CHECK(list.find("apiVersion") == nullptr);  // as kube-apiserver writes the core list
  CHECK(list.get_string("groupVersion") == "v1");

  const json::value* pods = find_resource(list, "pods");
  REQUIRE(pods);
  CHECK(pods->get_bool("namespaced"));
  CHECK(pods->get_string("kind") == "Pod");
  CHECK(pods->find("shortNames")->as_array().at(0).as_string() == "po");
  CHECK(pods->find("categories")->as_array().at(0).as_string() == "all");
  CHECK(pods->find("verbs")->as_array().size() == 8);
  for (auto [name, short_name] : {std::pair{"nodes", "no"}, {"services", "svc"}, {"events", "ev"},
                                  {"configmaps", "cm"}, {"namespaces", "ns"}}) {
    const json::value* r = find_resource(list, name);
    REQUIRE(r);
    CHECK(r->find("shortNames")->as_array().at(0).as_string() == short_name);
  }
  CHECK(find_resource(list, "pods/status"));
  CHECK(find_resource(list, "pods/binding")->get_string("kind") == "Binding");
  CHECK(find_resource(list, "nodes/status"));
  CHECK(find_resource(list, "bindings"));
  CHECK_FALSE(find_resource(list, "nodes")->get_bool("namespaced", true));
}

TEST_CASE("a CRD's group appears in discovery with its short names and status subresource") {
  running_server s;
  auto crd = R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":"gizmos.wire.example.com"},
    "spec":{"group":"wire.example.com","scope":"Namespaced",
      "names":{"plural":"gizmos","singular":"gizmo","kind":"Gizmo","shortNames":["gz"]},
      "versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
        "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}})";
  auto created = s.http->post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  REQUIRE(created.status == 201);
  bool established = false;
  json::value crd_obj = created.json();
  for (const auto& c : crd_obj.at_path({"status", "conditions"})->as_array())
    established = established || (c.get_string("type") == "Established" && c.get_string("status") == "True");
  CHECK(established);

  auto apis = s.http->get("/apis");
  bool listed = false;
  json::value group_list = apis.json();
  for (const auto& g : group_list.find("groups")->as_array())
    listed = listed || g.get_string("name") == "wire.example.com";
  CHECK(listed);

  auto list = s.http->get("/apis/wire.example.com/v1").json();
  CHECK(list.get_string("apiVersion") == "v1");
  const json::value* gizmos = find_resource(list, "gizmos");
  REQUIRE(gizmos);
  CHECK(gizmos->get_string("singularName") == "gizmo");
  CHECK(gizmos->find("shortNames")->as_array().at(0).as_string() == "gz");
  CHECK(find_resource(list, "gizmos/status"));

  auto group = s.http->get("/apis/wire.example.com").json();
  CHECK(group.get_string("kind") == "APIGroup");
  CHECK(str(group, {"preferredVersion", "groupVersion"}) == "wire.example.com/v1");
}

TEST_CASE("OpenAPI v3 advertises fieldValidation on the patch operation of every kind") {
  running_server s;
  auto root = s.http->get("/openapi/v3?timeout=32s").json();
  std::string url = str(root, {"paths", "api/v1", "serverRelativeURL"});
  REQUIRE(url.rfind("/openapi/v3/api/v1?hash=", 0) == 0);
  REQUIRE(root.at_path({"paths", "apis/coordination.k8s.io/v1"}));

  auto doc = s.http->get(url).json();
  const json::value* patch = doc.at_path({"paths", "/api/v1/namespaces/{namespace}/pods/{name}", "patch"});
  REQUIRE(patch);
  CHECK(str(*patch, {"x-kubernetes-group-version-kind", "kind"}) == "Pod");
  bool has_field_validation = false;
  for (const auto& p : patch->find("parameters")->as_array())
    has_field_validation = has_field_validation || p.get_string("name") == "fieldValidation";
  CHECK(has_field_validation);
  CHECK(doc.at_path({"paths", "/api/v1/nodes/{name}", "patch"}));
}

TEST_CASE("health endpoints answer ok and unknown paths answer a NotFound Status") {
  running_server s;
  CHECK(s.http->get("/healthz").body == "ok");
  CHECK(s.http->get("/readyz").status == 200);
  auto missing = s.http->get("/apis/nope.example.com/v1/things");
  CHECK(missing.status == 404);
  CHECK(missing.json().get_string("kind") == "Status");
  CHECK(missing.json().get_string("message") == "the server could not find the requested resource");
  CHECK(s.http->get("/api/v1/widgets").status == 404);
}
