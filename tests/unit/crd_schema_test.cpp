// `kozmo crds --pod-schema`: a Kozmo CRD's opaque pod template becomes the full structural
// schema of the cluster's OpenAPI document, the way controller-gen writes the peer's CRDs.
#include "tests/support/json_doc.hpp"
#include "runtime/crd_schema.hpp"

#include <catch2/catch.hpp>

using namespace kozmo;

namespace {

// A cut-down OpenAPI v2 document with the shapes the real one has.
const char* openapi = R"({"definitions":{
  "io.k8s.api.core.v1.PodTemplateSpec":{"description":"template","type":"object","properties":{
    "metadata":{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta","description":"meta"},
    "spec":{"$ref":"#/definitions/io.k8s.api.core.v1.PodSpec"}}},
  "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta":{"type":"object","properties":{"uid":{"type":"string"}}},
  "io.k8s.api.core.v1.PodSpec":{"type":"object","required":["containers"],"properties":{
    "containers":{"type":"array","items":{"$ref":"#/definitions/io.k8s.api.core.v1.Container"},
      "x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy":"merge"}}},
  "io.k8s.api.core.v1.Container":{"type":"object","required":["name"],"properties":{
    "name":{"type":"string"},
    "resources":{"type":"object","properties":{"limits":{"type":"object",
      "additionalProperties":{"$ref":"#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"}}}},
    "ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["containerPort","protocol"],
      "items":{"$ref":"#/definitions/io.k8s.api.core.v1.ContainerPort"}},
    "livenessProbe":{"type":"object","properties":{"port":{"$ref":"#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString"}}}}},
  "io.k8s.api.core.v1.ContainerPort":{"type":"object","required":["containerPort"],"properties":{
    "containerPort":{"type":"integer","format":"int32"},"protocol":{"type":"string"}}},
  "io.k8s.apimachinery.pkg.api.resource.Quantity":{"type":"string"},
  "io.k8s.apimachinery.pkg.util.intstr.IntOrString":{"type":"string","format":"int-or-string"}}})";

const char* crd = R"({"kind":"CustomResourceDefinition","spec":{"versions":[{"name":"v1","schema":{"openAPIV3Schema":{
  "type":"object","properties":{"spec":{"type":"object","properties":{
    "replicaSpecs":{"type":"object","additionalProperties":{"type":"object","properties":{
      "replicas":{"type":"integer"},
      "template":{"type":"object","description":"the pod template","x-kubernetes-preserve-unknown-fields":true}}}}}}}}}}]}})";

const json::value& template_of(const json::value& out) {
  const json::value* t = out.at_path({"spec"})->find("versions")->as_array()[0].at_path(
      {"schema", "openAPIV3Schema", "properties", "spec", "properties", "replicaSpecs", "additionalProperties",
       "properties", "template"});
  REQUIRE(t != nullptr);
  return *t;
}

} // namespace

TEST_CASE("a pod template gets the PodTemplateSpec schema with every $ref inlined") {
  auto out = runtime::with_full_pod_schema(test::doc(crd), test::doc(openapi));
  REQUIRE(out.has_value());
  const json::value& t = template_of(*out);
  CHECK(t.find("x-kubernetes-preserve-unknown-fields") == nullptr);
  CHECK(t.at_path({"properties", "spec", "required"})->as_array()[0] == "containers");
  const json::value* container = t.at_path({"properties", "spec", "properties", "containers", "items"});
  REQUIRE(container != nullptr);
  CHECK(container->at_path({"properties", "name", "type"})->as_string() == "string");
  // Strategic-merge hints mean nothing in a CRD.
  CHECK(t.at_path({"properties", "spec", "properties", "containers"})->find("x-kubernetes-patch-merge-key") == nullptr);
}

TEST_CASE("a template's metadata keeps what controller-gen's embedded ObjectMeta keeps") {
  auto out = runtime::with_full_pod_schema(test::doc(crd), test::doc(openapi));
  REQUIRE(out.has_value());
  const json::value* meta = template_of(*out).at_path({"properties", "metadata", "properties"});
  REQUIRE(meta != nullptr);
  CHECK(meta->find("annotations") != nullptr);
  CHECK(meta->find("labels") != nullptr);
  CHECK(meta->find("uid") == nullptr);
}

TEST_CASE("quantities and int-or-string become x-kubernetes-int-or-string; a list-map's protocol defaults to TCP") {
  auto out = runtime::with_full_pod_schema(test::doc(crd), test::doc(openapi));
  REQUIRE(out.has_value());
  const json::value* c = template_of(*out).at_path({"properties", "spec", "properties", "containers", "items", "properties"});
  const json::value* q = c->at_path({"resources", "properties", "limits", "additionalProperties"});
  CHECK(q->get_bool("x-kubernetes-int-or-string"));
  CHECK(q->get_string("pattern").rfind("^(\\+|-)?", 0) == 0);
  CHECK(c->at_path({"livenessProbe", "properties", "port"})->get_bool("x-kubernetes-int-or-string"));
  CHECK(c->at_path({"ports", "items", "properties", "protocol", "default"})->as_string() == "TCP");
  CHECK(c->at_path({"ports", "items", "properties", "containerPort"})->find("default") == nullptr);
}

TEST_CASE("a document without the definitions the CRD needs is refused with what is missing") {
  auto none = runtime::with_full_pod_schema(test::doc(crd), test::doc(R"({"swagger":"2.0"})"));
  REQUIRE_FALSE(none.has_value());
  CHECK_THAT(none.err().message, Catch::Contains("kubectl get --raw /openapi/v2"));
  auto partial = runtime::with_full_pod_schema(test::doc(crd), test::doc(R"({"definitions":{}})"));
  REQUIRE_FALSE(partial.has_value());
  CHECK_THAT(partial.err().message, Catch::Contains("io.k8s.api.core.v1.PodTemplateSpec"));
}
