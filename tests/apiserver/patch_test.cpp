#include "tests/apiserver/fixture.hpp"

using namespace kozmo;
using namespace kozmo::test;

namespace {

const std::string gizmos = "/apis/wire.example.com/v1/namespaces/default/gizmos";

void create_gizmo_crd(running_server& s) {
  auto res = s.http->post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", R"({
    "apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":"gizmos.wire.example.com"},
    "spec":{"group":"wire.example.com","scope":"Namespaced",
      "names":{"plural":"gizmos","singular":"gizmo","kind":"Gizmo","shortNames":["gz"]},
      "versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
        "additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"}],
        "schema":{"openAPIV3Schema":{"type":"object","properties":{
          "spec":{"type":"object","required":["size"],"properties":{
            "size":{"type":"integer","minimum":0},
            "mode":{"type":"string","enum":["fast","safe"]},
            "extra":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
          "status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}}}]}})");
  REQUIRE(res.status == 201);
}

std::string gizmo(const std::string& name, const std::string& spec) {
  return R"({"apiVersion":"wire.example.com/v1","kind":"Gizmo","metadata":{"name":")" + name + R"("},"spec":)" + spec + "}";
}

} // namespace

TEST_CASE("a strategic merge patch merges pod containers by name") {
  running_server s;
  REQUIRE(s.http->post(pods, pod("p", {}, R"("initContainers":[{"name":"init","image":"busybox"}])")).status == 201);
  auto res = s.http->patch(
      pods + "/p?fieldManager=kubectl-client-side-apply&fieldValidation=Strict",
      R"({"spec":{"$setElementOrder/containers":[{"name":"c"}],"containers":[{"image":"busybox:1.37","name":"c"}]},
          "metadata":{"labels":{"extra":null,"new":"yes"}}})",
      "application/strategic-merge-patch+json");
  REQUIRE(res.status == 200);
  json::value p = res.json();
  const auto& containers = p.at_path({"spec", "containers"})->as_array();
  REQUIRE(containers.size() == 1);
  CHECK(containers[0].get_string("image") == "busybox:1.37");
  CHECK(containers[0].get_string("terminationMessagePath") == "/dev/termination-log");  // kept: merged, not replaced
  CHECK(str(p, {"metadata", "labels", "new"}) == "yes");
}

TEST_CASE("kubectl cordon's strategic merge patch sets and clears unschedulable") {
  running_server s;
  REQUIRE(s.http->post("/api/v1/nodes", R"({"metadata":{"name":"n1"}})").status == 201);
  auto on = s.http->patch("/api/v1/nodes/n1", R"({"spec":{"unschedulable":true}})", "application/strategic-merge-patch+json");
  CHECK(on.json().at_path({"spec", "unschedulable"})->as_bool());
  auto off = s.http->patch("/api/v1/nodes/n1", R"({"spec":{"unschedulable":null}})", "application/strategic-merge-patch+json");
  CHECK(off.json().at_path({"spec", "unschedulable"}) == nullptr);
}

TEST_CASE("a JSON patch applies operations and a failed test changes nothing") {
  running_server s;
  s.http->post(configmaps, configmap("j"));
  auto ok = s.http->patch(configmaps + "/j", R"([{"op":"add","path":"/data/n","value":"1"},{"op":"remove","path":"/data/k"}])",
                          "application/json-patch+json");
  REQUIRE(ok.status == 200);
  CHECK(str(ok.json(), {"data", "n"}) == "1");
  CHECK(ok.json().at_path({"data", "k"}) == nullptr);
  auto failed = s.http->patch(configmaps + "/j", R"([{"op":"test","path":"/data/n","value":"2"},{"op":"remove","path":"/data/n"}])",
                              "application/json-patch+json");
  CHECK(failed.status == 422);
  CHECK(str(s.http->get(configmaps + "/j").json(), {"data", "n"}) == "1");
}

TEST_CASE("a patch carrying a stale resourceVersion is a conflict") {
  running_server s;
  auto cm = s.http->post(configmaps, configmap("rv")).json();
  s.http->patch(configmaps + "/rv", R"({"data":{"k":"2"}})", "application/merge-patch+json");
  auto stale = s.http->patch(configmaps + "/rv",
                             R"({"metadata":{"resourceVersion":")" + str(cm, {"metadata", "resourceVersion"}) +
                                 R"("},"data":{"k":"3"}})",
                             "application/merge-patch+json");
  CHECK(stale.status == 409);
}

TEST_CASE("server-side apply creates a missing object and merges into an existing one") {
  running_server s;
  auto created = s.http->patch(configmaps + "/cm-ssa?fieldManager=kubectl&fieldValidation=Strict&force=false",
                               R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-ssa"},"data":{"a":"1"}})",
                               "application/apply-patch+yaml");
  CHECK(created.status == 201);
  auto merged = s.http->patch(configmaps + "/cm-ssa?fieldManager=kubectl&force=false",
                              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-ssa\ndata:\n  b: \"2\"\n",
                              "application/apply-patch+yaml");
  CHECK(merged.status == 200);
  CHECK(str(merged.json(), {"data", "a"}) == "1");
  CHECK(str(merged.json(), {"data", "b"}) == "2");
  auto bogus = s.http->patch(configmaps + "/cm-ssa?fieldManager=kubectl&fieldValidation=Strict",
                             R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-ssa"},"spec":{"bogus":1}})",
                             "application/apply-patch+yaml");
  CHECK(bogus.status == 400);
  CHECK(bogus.json().get_string("message").find(".spec: field not declared in schema") != std::string::npos);
}

TEST_CASE("fieldValidation=Strict rejects unknown fields of built-in kinds, Warn drops them with a warning") {
  running_server s;
  std::string manifest = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"strict"},
    "spec":{"containers":[{"name":"c","image":"busybox","bogusField":1}],"bogus":true}})";
  auto strict = s.http->post(pods + "?fieldManager=kubectl-create&fieldValidation=Strict", manifest);
  CHECK(strict.status == 400);
  CHECK(strict.json().get_string("message") ==
        "Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field "
        "\"spec.containers[0].bogusField\", unknown field \"spec.bogus\"");
  auto warn = s.http->post(pods + "?fieldValidation=Warn", manifest);
  CHECK(warn.status == 201);
  CHECK(warn.headers_named("Warning").size() == 2);
  CHECK(warn.json().at_path({"spec", "bogus"}) == nullptr);
  // Fields the schema leaves opaque are never reported.
  auto opaque = s.http->post(pods + "?fieldValidation=Strict",
                             pod("opaque", {}, R"("affinity":{"nodeAffinity":{"anything":{"goes":1}}})"));
  CHECK(opaque.status == 201);
}

TEST_CASE("custom resources are validated against the CRD schema") {
  running_server s;
  create_gizmo_crd(s);
  SECTION("unknown fields are rejected in Strict mode and pruned otherwise") {
    auto strict = s.http->post(gizmos + "?fieldValidation=Strict", gizmo("g1", R"({"size":1,"bogus":2})"));
    CHECK(strict.status == 400);
    CHECK(strict.json().get_string("message").find("unknown field \"spec.bogus\"") != std::string::npos);
    auto pruned = s.http->post(gizmos + "?fieldValidation=Ignore", gizmo("g1", R"({"size":1,"bogus":2,"extra":{"free":1}})"));
    CHECK(pruned.status == 201);
    CHECK(pruned.json().at_path({"spec", "bogus"}) == nullptr);
    CHECK(pruned.json().at_path({"spec", "extra", "free"}) != nullptr);
  }
  SECTION("types, required fields and enums give 422 Invalid") {
    auto res = s.http->post(gizmos, gizmo("g2", R"({"size":"big","mode":"slow"})"));
    CHECK(res.status == 422);
    std::string msg = res.json().get_string("message");
    CHECK(msg.rfind("Gizmo.wire.example.com \"g2\" is invalid: ", 0) == 0);
    CHECK(msg.find("spec.size in body must be of type integer: \"string\"") != std::string::npos);
    CHECK(msg.find("spec.mode: Unsupported value: \"slow\"") != std::string::npos);
    auto missing = s.http->post(gizmos, gizmo("g3", "{}"));
    CHECK(missing.status == 422);
    CHECK(missing.json().get_string("message").find("spec.size: Required value") != std::string::npos);
  }
  SECTION("strategic merge patch is refused with 415, merge patch works") {
    REQUIRE(s.http->post(gizmos, gizmo("g4", R"({"size":1})")).status == 201);
    auto smp = s.http->patch(gizmos + "/g4", R"({"spec":{"size":2}})", "application/strategic-merge-patch+json");
    CHECK(smp.status == 415);
    CHECK(smp.json().get_string("message") ==
          "the body of the request was in an unknown format - accepted media types include: "
          "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml");
    auto merge = s.http->patch(gizmos + "/g4", R"({"metadata":{"annotations":{"a":"b"}},"spec":{"size":2}})",
                               "application/merge-patch+json");
    CHECK(merge.status == 200);
    CHECK(merge.json().at_path({"spec", "size"})->as_int() == 2);
    CHECK(merge.json().at_path({"metadata", "generation"})->as_int() == 2);
  }
  SECTION("status is written through /status only") {
    auto created = s.http->post(gizmos, R"({"apiVersion":"wire.example.com/v1","kind":"Gizmo","metadata":{"name":"g5"},
                                            "spec":{"size":1},"status":{"ready":true}})");
    REQUIRE(created.status == 201);
    CHECK(created.json().find("status") == nullptr);
    auto st = s.http->patch(gizmos + "/g5/status", R"({"status":{"ready":true}})", "application/merge-patch+json");
    CHECK(st.status == 200);
    CHECK(st.json().at_path({"status", "ready"})->as_bool());
    CHECK(st.json().at_path({"metadata", "generation"})->as_int() == 1);
  }
  SECTION("a PUT of a custom resource needs a resourceVersion") {
    REQUIRE(s.http->post(gizmos, gizmo("g6", R"({"size":1})")).status == 201);
    auto res = s.http->put(gizmos + "/g6", gizmo("g6", R"({"size":3})"));
    CHECK(res.status == 422);
    CHECK(res.json().get_string("message").find("metadata.resourceVersion: Invalid value: 0x0: must be specified for an update") !=
          std::string::npos);
  }
}

TEST_CASE("dryRun=All validates and answers but stores nothing") {
  running_server s;
  auto created = s.http->post(configmaps + "?dryRun=All", configmap("dry"));
  CHECK(created.status == 201);
  CHECK(s.http->get(configmaps + "/dry").status == 404);
  s.http->post(configmaps, configmap("real"));
  auto patched = s.http->patch(configmaps + "/real?dryRun=All", R"({"data":{"k":"changed"}})", "application/merge-patch+json");
  CHECK(patched.status == 200);
  CHECK(str(patched.json(), {"data", "k"}) == "changed");
  CHECK(str(s.http->get(configmaps + "/real").json(), {"data", "k"}) == "v");
  CHECK(s.http->del(configmaps + "/real?dryRun=All").status == 200);
  CHECK(s.http->get(configmaps + "/real").status == 200);
}
