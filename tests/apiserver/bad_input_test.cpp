// The API server's share of the bad-input catalogue: what kube-apiserver refuses, refused the
// same way (status, reason, the words a user reads), and nothing stored. Over real sockets.
#include "tests/apiserver/fixture.hpp"

using namespace kozmo;
using namespace kozmo::test;

namespace {

std::string pod_with_resources(const std::string& name, const std::string& resources) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"("},"spec":{"containers":[{"name":"c","image":"busybox:1.36","resources":)" + resources + "}]}}";
}

// The message of a refused write, after checking its status.
std::string refused(const http_result& r, int status) {
  CHECK(r.status == status);
  return r.json().get_string("message");
}

} // namespace

TEST_CASE("a pod's GPUs must be a whole number, requested as limited, and limited when requested") {
  running_server s;
  CHECK_THAT(refused(s.http->post(pods, pod_with_resources("half", R"({"limits":{"nvidia.com/gpu":"0.5"}})")), 422),
             Catch::Contains("spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: \"500m\": must be an integer"));
  CHECK_THAT(refused(s.http->post(pods, pod_with_resources("differ",
                                                            R"({"limits":{"nvidia.com/gpu":2},"requests":{"nvidia.com/gpu":1}})")),
                     422),
             Catch::Contains("spec.containers[0].resources.requests: Invalid value: \"1\": must be equal to nvidia.com/gpu limit"));
  CHECK_THAT(refused(s.http->post(pods, pod_with_resources("unlimited", R"({"requests":{"nvidia.com/gpu":1}})")), 422),
             Catch::Contains("spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable "
                             "resources"));
  CHECK_THAT(refused(s.http->post(pods, pod_with_resources("negative", R"({"limits":{"nvidia.com/gpu":-4}})")), 422),
             Catch::Contains("must be greater than or equal to 0"));
  CHECK(s.http->get(pods).json().at_path({"items"})->as_array().empty());
  // What kube-apiserver accepts still goes: whole GPUs, equal requests, CPU below its limit.
  CHECK(s.http->post(pods, pod_with_resources("fine", R"({"limits":{"nvidia.com/gpu":"2","cpu":"2"},)"
                                                      R"("requests":{"nvidia.com/gpu":2,"cpu":"500m"}})"))
            .status == 201);
}

TEST_CASE("resources of the wrong type are a 422 naming the field, not stored") {
  running_server s;
  CHECK_THAT(refused(s.http->post(pods, pod_with_resources("list", R"({"limits":[1]})")), 422),
             Catch::Contains("spec.containers[0].resources.limits: Invalid value: \"array\": must be a map of resource "
                             "names to quantities"));
  CHECK_THAT(refused(s.http->post(pods, pod_with_resources("nested", R"({"limits":{"cpu":[1]}})")), 422),
             Catch::Contains("spec.containers[0].resources.limits[cpu]: Invalid value: \"array\": must be a quantity"));
  CHECK_THAT(refused(s.http->post(pods, pod_with_resources("text", R"("lots")")), 422),
             Catch::Contains("spec.containers[0].resources: Invalid value"));
  CHECK(s.http->get(pods).json().at_path({"items"})->as_array().empty());
}

TEST_CASE("a patch may not rename an object or move it to another namespace") {
  running_server s;
  REQUIRE(s.http->post(configmaps, configmap("cm")).status == 201);
  CHECK(refused(s.http->patch(configmaps + "/cm", R"([{"op":"replace","path":"/metadata/name","value":"other"}])",
                              "application/json-patch+json"),
                400) == "the name of the object (other) does not match the name on the URL (cm)");
  CHECK(refused(s.http->patch(configmaps + "/cm", R"({"metadata":{"namespace":"kube-system"}})",
                              "application/merge-patch+json"),
                400) == "the namespace of the object (kube-system) does not match the namespace on the request (default)");
  CHECK(refused(s.http->patch(configmaps + "/cm", R"({"metadata":{"name":"x"}})", "application/strategic-merge-patch+json"),
                400) == "the name of the object (x) does not match the name on the URL (cm)");
  CHECK(s.http->get(configmaps + "/cm").status == 200);
  CHECK(s.http->get(configmaps + "/other").status == 404);
}

TEST_CASE("a JSON patch is bounded: 10000 operations, and a million nodes of copies") {
  running_server s;
  REQUIRE(s.http->post(configmaps, configmap("cm")).status == 201);
  std::string many = "[";
  for (int i = 0; i <= 10000; ++i)
    many += std::string(i ? "," : "") + R"({"op":"test","path":"/data/k","value":"v"})";
  many += "]";
  CHECK(refused(s.http->patch(configmaps + "/cm", many, "application/json-patch+json"), 413) ==
        "The allowed maximum operations in a JSON patch is 10000, got 10001");
  // Each copy doubles the document: 40 of them would be a trillion nodes.
  std::string doubling = R"([{"op":"add","path":"/metadata/annotations","value":{"a":[1]}})";
  for (int i = 0; i < 40; ++i)
    doubling += R"(,{"op":"copy","from":"/metadata/annotations/a","path":"/metadata/annotations/a/-"})";
  doubling += "]";
  CHECK_THAT(refused(s.http->patch(configmaps + "/cm", doubling, "application/json-patch+json"), 422),
             Catch::Contains("the patch's copies would exceed 1000000 nodes"));
  CHECK(s.http->get(configmaps + "/cm").json().at_path({"metadata", "annotations"}) == nullptr);
}
