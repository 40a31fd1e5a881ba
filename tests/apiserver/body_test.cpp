// Protobuf request bodies as kubectl's generator commands send them.
#include "tests/apiserver/fixture.hpp"

using namespace kozmo;
using namespace kozmo::test;

namespace {

// Minimal protobuf writer: length-delimited fields and varints.
std::string varint(std::uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}
std::string field(int number, const std::string& bytes) { return varint(static_cast<std::uint64_t>(number) << 3 | 2) + varint(bytes.size()) + bytes; }
std::string map_entry(int number, const std::string& k, const std::string& v) { return field(number, field(1, k) + field(2, v)); }

std::string envelope(const std::string& api_version, const std::string& kind, const std::string& raw) {
  std::string unknown = field(1, field(1, api_version) + field(2, kind)) + field(2, raw) + field(3, "") + field(4, "");
  return std::string("k8s\0", 4) + unknown;
}

const header_list pb = {{"Content-Type", "application/vnd.kubernetes.protobuf"},
                        {"Accept", "application/vnd.kubernetes.protobuf,application/json"}};

} // namespace

TEST_CASE("kubectl create namespace's protobuf body creates the namespace") {
  running_server s;
  std::string meta = field(1, "pb-ns") + map_entry(11, "team", "ml") + field(8, "");
  std::string raw = field(1, meta) + field(2, "") + field(3, "");
  auto res = s.http->request("POST", "/api/v1/namespaces?fieldManager=kubectl-create&fieldValidation=Strict",
                             envelope("v1", "Namespace", raw), pb);
  REQUIRE(res.status == 201);
  CHECK(res.header("Content-Type") == "application/json");
  CHECK(str(res.json(), {"metadata", "name"}) == "pb-ns");
  CHECK(str(res.json(), {"metadata", "labels", "team"}) == "ml");
  CHECK(str(res.json(), {"status", "phase"}) == "Active");
}

TEST_CASE("protobuf ConfigMap and Secret bodies keep their data") {
  running_server s;
  std::string cm = field(1, field(1, "pb-cm")) + map_entry(2, "k", "v") + map_entry(3, "bin", std::string("\x01\x02", 2));
  auto res = s.http->request("POST", configmaps + "?fieldManager=kubectl-create", envelope("v1", "ConfigMap", cm), pb);
  REQUIRE(res.status == 201);
  CHECK(str(res.json(), {"data", "k"}) == "v");
  CHECK(str(res.json(), {"binaryData", "bin"}) == "AQI=");

  std::string secret = field(1, field(1, "pb-secret")) + map_entry(2, "password", "hunter2") + field(3, "Opaque");
  auto sres = s.http->request("POST", "/api/v1/namespaces/default/secrets", envelope("v1", "Secret", secret), pb);
  REQUIRE(sres.status == 201);
  CHECK(str(sres.json(), {"data", "password"}) == "aHVudGVyMg==");
  CHECK(str(sres.json(), {"type"}) == "Opaque");
}

TEST_CASE("kubectl create quota's protobuf body keeps its hard limits and scopes") {
  running_server s;
  auto quantity = [](const std::string& q) { return field(1, q); };
  std::string spec = field(1, field(1, "pods") + field(2, quantity("4"))) +
                     field(1, field(1, "requests.cpu") + field(2, quantity("2"))) + field(2, "NotTerminating");
  std::string raw = field(1, field(1, "pb-quota")) + field(2, spec);
  auto res = s.http->request("POST", "/api/v1/namespaces/default/resourcequotas?fieldManager=kubectl-create",
                             envelope("v1", "ResourceQuota", raw), pb);
  REQUIRE(res.status == 201);
  CHECK(str(res.json(), {"spec", "hard", "pods"}) == "4");
  CHECK(str(res.json(), {"spec", "hard", "requests.cpu"}) == "2");
  CHECK(res.json().at_path({"spec", "scopes"})->as_array().at(0).as_string() == "NotTerminating");
}

TEST_CASE("kubectl create role and rolebinding protobuf bodies keep their rules, subjects and role") {
  running_server s;
  std::string rule = field(1, "get") + field(1, "list") + field(2, "") + field(3, "pods") + field(4, "a");
  auto role = s.http->request("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
                              envelope("rbac.authorization.k8s.io/v1", "Role", field(1, field(1, "r")) + field(2, rule)), pb);
  REQUIRE(role.status == 201);
  CHECK(json::dump(*role.json().find("rules")) ==
        R"([{"verbs":["get","list"],"apiGroups":[""],"resources":["pods"],"resourceNames":["a"]}])");
  std::string subject = field(1, "ServiceAccount") + field(2, "") + field(3, "x") + field(4, "default");
  std::string ref = field(1, "rbac.authorization.k8s.io") + field(2, "Role") + field(3, "r");
  auto rb = s.http->request("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
                            envelope("rbac.authorization.k8s.io/v1", "RoleBinding",
                                     field(1, field(1, "rb")) + field(2, subject) + field(3, ref)),
                            pb);
  REQUIRE(rb.status == 201);
  CHECK(json::dump(*rb.json().find("subjects")) == R"([{"kind":"ServiceAccount","name":"x","namespace":"default"}])");
  CHECK(str(rb.json(), {"roleRef", "name"}) == "r");
}

TEST_CASE("protobuf bodies of kinds we cannot decode get 415, garbage gets 400") {
  running_server s;
  auto res = s.http->request("POST", "/api/v1/namespaces/default/pods", envelope("v1", "Pod", field(1, field(1, "x"))), pb);
  CHECK(res.status == 415);
  auto garbage = s.http->request("POST", configmaps, std::string("k8s\0\xff\xff\xff", 7), pb);
  CHECK(garbage.status == 400);
}

TEST_CASE("secret stringData is folded into base64 data") {
  running_server s;
  auto res = s.http->post("/api/v1/namespaces/default/secrets",
                          R"({"metadata":{"name":"sd"},"stringData":{"user":"admin"}})");
  REQUIRE(res.status == 201);
  CHECK(str(res.json(), {"data", "user"}) == "YWRtaW4=");
  CHECK(res.json().find("stringData") == nullptr);
  CHECK(str(res.json(), {"type"}) == "Opaque");
}
