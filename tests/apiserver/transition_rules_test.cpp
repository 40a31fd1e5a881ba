// Transition rules of CRD schemas on the embedded server: `self == oldSelf` (Kubernetes' and
// kubebuilder's "field is immutable") refuses an update that changes the field, with the 422
// kube-apiserver >= 1.25 gives; fields beside it still change; no other CEL rule is evaluated.
#include "tests/apiserver/fixture.hpp"

using namespace kozmo;
using namespace kozmo::test;

namespace {

const std::string crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const std::string jobs = "/apis/test.io/v1/namespaces/default/runs";

// A TrainJob-like kind: trainer and deadline immutable, suspend and patches free, a map list
// whose items hold an immutable member, and a rule Kozmo does not evaluate.
std::string run_crd(const std::string& validations_of_deadline = R"([{"rule":"self == oldSelf","message":"field is immutable"}])") {
  return R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":"runs.test.io"},
    "spec":{"group":"test.io","scope":"Namespaced",
      "names":{"kind":"Run","plural":"runs","singular":"run","listKind":"RunList"},
      "versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
        "schema":{"openAPIV3Schema":{"type":"object","properties":{
          "status":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
          "spec":{"type":"object","properties":{
            "trainer":{"type":"object","x-kubernetes-validations":[{"rule":"self == oldSelf","message":"field is immutable"}],
              "properties":{"numNodes":{"type":"integer","minimum":1},"image":{"type":"string"}}},
            "deadline":{"type":"integer","x-kubernetes-validations":)" + validations_of_deadline + R"(},
            "pinned":{"type":"string","x-kubernetes-validations":[{"rule":"  self==\n oldSelf "}]},
            "note":{"type":"string","x-kubernetes-validations":[{"rule":"self.size() < 3","message":"too long"}]},
            "suspend":{"type":"boolean","default":false},
            "patches":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["manager"],
              "items":{"type":"object","required":["manager"],"properties":{
                "manager":{"type":"string"},
                "owner":{"type":"string","x-kubernetes-validations":[{"rule":"self == oldSelf","message":"owner is fixed"}]},
                "value":{"type":"string"}}}}}}}}}}]}})";
}

struct run_server {
  explicit run_server(const std::string& crd = run_crd()) { REQUIRE(s.http->post(crds, crd).status == 201); }
  http_result create(const std::string& name, const std::string& spec) {
    return s.http->post(jobs, R"({"apiVersion":"test.io/v1","kind":"Run","metadata":{"name":")" + name +
                                  R"("},"spec":)" + spec + "}");
  }
  http_result merge(const std::string& name, const std::string& patch, const std::string& sub = "") {
    return s.http->patch(jobs + "/" + name + sub, patch, "application/merge-patch+json");
  }
  running_server s;
};

} // namespace

TEST_CASE("an update that changes a field under `self == oldSelf` is refused with 422 naming the field") {
  run_server r;
  REQUIRE(r.create("a", R"({"trainer":{"numNodes":2,"image":"x"},"deadline":60})").status == 201);

  auto res = r.merge("a", R"({"spec":{"trainer":{"numNodes":3}}})");
  REQUIRE(res.status == 422);
  const json::value body = res.json();
  CHECK(body.get_string("reason") == "Invalid");
  CHECK(body.get_string("message") == R"(Run.test.io "a" is invalid: spec.trainer: Invalid value: "object": field is immutable)");
  const json::value* causes = body.at_path({"details", "causes"});
  REQUIRE(causes != nullptr);
  REQUIRE(causes->as_array().size() == 1);
  CHECK(causes->as_array()[0].get_string("field") == "spec.trainer");
  CHECK(causes->as_array()[0].get_string("reason") == "FieldValueInvalid");

  SECTION("a scalar is named by its type, and every broken rule is a cause") {
    auto two = r.merge("a", R"({"spec":{"trainer":{"image":"y"},"deadline":61}})");
    REQUIRE(two.status == 422);
    CHECK(two.json().get_string("message") ==
          R"(Run.test.io "a" is invalid: [spec.trainer: Invalid value: "object": field is immutable, spec.deadline: Invalid value: "integer": field is immutable])");
  }
  SECTION("a PUT that changes it is refused the same way, and nothing is stored") {
    auto cur = r.s.http->get(jobs + "/a").json();
    cur["spec"]["trainer"]["numNodes"] = 5;
    CHECK(r.s.http->put(jobs + "/a", json::dump(cur)).status == 422);
    CHECK(r.s.http->get(jobs + "/a").json().at_path({"spec", "trainer", "numNodes"})->as_int() == 2);
  }
  SECTION("the rule is read whitespace aside, and without a message says which rule failed") {
    REQUIRE(r.create("p", R"({"pinned":"one"})").status == 201);
    auto pinned = r.merge("p", R"({"spec":{"pinned":"two"}})");
    REQUIRE(pinned.status == 422);
    CHECK(pinned.json().get_string("message") ==
          "Run.test.io \"p\" is invalid: spec.pinned: Invalid value: \"string\": failed rule:   self==\n oldSelf ");
  }
}

TEST_CASE("fields beside an immutable one still change, and writing the same value again is no change") {
  run_server r;
  REQUIRE(r.create("a", R"({"trainer":{"numNodes":2},"deadline":60})").status == 201);
  auto res = r.merge("a", R"({"spec":{"suspend":true,"trainer":{"numNodes":2}}})");
  REQUIRE(res.status == 200);
  CHECK(res.json().at_path({"spec", "suspend"})->as_bool());
  // The status subresource keeps spec as stored: no transition to refuse.
  CHECK(r.merge("a", R"({"status":{"phase":"Running"}})", "/status").status == 200);
  // 60 and 60.0 are the same number.
  CHECK(r.merge("a", R"({"spec":{"deadline":60.0}})").status == 200);
}

TEST_CASE("a field absent before or after is not a transition (as in Kubernetes)") {
  run_server r;
  REQUIRE(r.create("a", R"({"suspend":false})").status == 201);
  CHECK(r.merge("a", R"({"spec":{"trainer":{"numNodes":4}}})").status == 200);
  CHECK(r.merge("a", R"({"spec":{"trainer":null}})").status == 200);
}

TEST_CASE("map-list items are matched by their keys: a kept item's immutable member cannot change, a new item is free") {
  run_server r;
  REQUIRE(r.create("a", R"({"patches":[{"manager":"kueue","owner":"q1","value":"v"}]})").status == 201);
  auto moved = r.merge("a", R"({"spec":{"patches":[{"manager":"user","owner":"me"},{"manager":"kueue","owner":"q2","value":"v"}]}})");
  REQUIRE(moved.status == 422);
  CHECK(moved.json().get_string("message") ==
        R"(Run.test.io "a" is invalid: spec.patches[1].owner: Invalid value: "string": owner is fixed)");
  auto added = r.merge("a", R"({"spec":{"patches":[{"manager":"user","owner":"me"},{"manager":"kueue","owner":"q1","value":"w"}]}})");
  CHECK(added.status == 200);
}

TEST_CASE("other CEL rules are not evaluated: Kozmo has no CEL and says so instead of guessing") {
  run_server r;
  REQUIRE(r.create("a", R"({"note":"far too long"})").status == 201);
  CHECK(r.merge("a", R"({"spec":{"note":"still longer than three"}})").status == 200);
}

TEST_CASE("malformed x-kubernetes-validations entries are ignored on update, never a crash") {
  run_server r(run_crd(R"([1,"x",{"rule":5},{"message":"no rule"},{"rule":"self == oldSelf","message":7}])"));
  REQUIRE(r.create("a", R"({"deadline":60})").status == 201);
  auto res = r.merge("a", R"({"spec":{"deadline":61}})");
  REQUIRE(res.status == 422);
  CHECK(res.json().get_string("message") ==
        R"(Run.test.io "a" is invalid: spec.deadline: Invalid value: "integer": failed rule: self == oldSelf)");
}
