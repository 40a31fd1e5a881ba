// CRD structural schemas as kube-apiserver v1.20 applies them: defaults, nulls, the value
// validations and their messages, list types, the checks a CRD's schema must pass, and CRDs of
// the peer's size. Every expected message here was read off a real v1.20.2 kube-apiserver with
// the same CRD and object (tests/conformance compares the two servers on a generated CRD).
#include "tests/apiserver/fixture.hpp"

#include <algorithm>

using namespace kozmo;
using namespace kozmo::test;

namespace {

const std::string crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const std::string widgets = "/apis/test.io/v1/namespaces/default/widgets";

std::string widget_crd(const std::string& spec_properties, const std::string& required = "[]") {
  const std::string name = "widgets";
  return R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":")" + name + R"(.test.io"},
    "spec":{"group":"test.io","scope":"Namespaced",
      "names":{"kind":"Widget","plural":")" + name + R"(","singular":"widget","listKind":"WidgetList"},
      "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object",
        "properties":{"spec":{"type":"object","required":)" + required + R"(,"properties":{)" + spec_properties +
         R"(}}}}}}]}})";
}

const std::string schema = R"(
  "req":{"type":"string"},
  "s":{"type":"string","maxLength":3,"minLength":2,"pattern":"^[a-z]+$"},
  "num":{"type":"integer","minimum":1,"maximum":5,"multipleOf":2},
  "xn":{"type":"number","minimum":1,"maximum":5,"exclusiveMinimum":true,"exclusiveMaximum":true},
  "arr":{"type":"array","maxItems":2,"minItems":1,"items":{"type":"string"}},
  "set":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}},
  "ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["containerPort","protocol"],
    "items":{"type":"object","required":["containerPort"],"properties":{
      "containerPort":{"type":"integer"},"protocol":{"type":"string","default":"TCP"},"name":{"type":"string"}}}},
  "obj":{"type":"object","maxProperties":1,"additionalProperties":{"type":"string"}},
  "quantity":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}],"pattern":"^[0-9]+m?$"},
  "when":{"type":"string","format":"date-time"},
  "one":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"oneOf":[{"required":["a"]},{"required":["b"]}]},
  "nt":{"type":"string","not":{"enum":["bad"]}},
  "greeting":{"type":"string","default":"hello"},
  "dobj":{"type":"object","default":{},"properties":{"inner":{"type":"integer","default":7}}},
  "dnull":{"type":"string","default":"x"},
  "nl":{"type":"string","nullable":true,"default":"yy"},
  "nested":{"type":"object","properties":{"deep":{"type":"string","default":"z"}}},
  "amap":{"type":"object","additionalProperties":{"type":"object","properties":{"q":{"type":"integer","default":3}}}},
  "alist":{"type":"array","items":{"type":"object","properties":{"w":{"type":"boolean","default":true}}}})";

struct widget_server {
  widget_server() { REQUIRE(s.http->post(crds, widget_crd(schema, R"(["req"])")).status == 201); }
  http_result create(const std::string& spec) {
    return s.http->post(widgets, R"({"apiVersion":"test.io/v1","kind":"Widget","metadata":{"name":"w)" +
                                     std::to_string(++n) + R"("},"spec":{"req":"r")" + (spec.empty() ? "" : "," + spec) +
                                     "}}");
  }
  // The causes of a 422, as "field: message", sorted (v1.20 lists them in map order).
  std::vector<std::string> causes(const std::string& spec) {
    auto r = create(spec);
    REQUIRE(r.status == 422);
    std::vector<std::string> out;
    const json::value body = r.json();
    for (const auto& c : body.at_path({"details", "causes"})->as_array())
      out.push_back(c.get_string("field") + ": " + c.get_string("message"));
    std::sort(out.begin(), out.end());
    return out;
  }
  running_server s;
  int n = 0;
};

using strings = std::vector<std::string>;

} // namespace

TEST_CASE("defaults fill absent fields outside-in, in map values and list items, and replace non-nullable nulls") {
  widget_server w;
  auto r = w.create(R"("alist":[{},{"w":false}],"amap":{"m1":{}},"nested":{},"dnull":null,"nl":null)");
  REQUIRE(r.status == 201);
  auto spec = *r.json().find("spec");
  CHECK(spec == json::parse(R"({"req":"r","alist":[{"w":true},{"w":false}],"amap":{"m1":{"q":3}},"nested":{"deep":"z"},
    "nl":null,"dnull":"x","greeting":"hello","dobj":{"inner":7}})").value());
  // What was written comes back the same on a read.
  CHECK(*w.s.http->get(widgets + "/w1").json().find("spec") == spec);
}

TEST_CASE("a nullable field keeps its null, an absent one gets its default, and a null without a default goes") {
  widget_server w;
  auto spec = *w.create(R"("nested":null)").json().find("spec");
  CHECK(spec.find("nested") == nullptr);
  CHECK(spec.get_string("nl") == "yy");
  CHECK(w.causes(R"("req":null)") == strings{"spec.req: Required value"});
}

TEST_CASE("a list-map key's default takes part in the duplicate check, reported at the later index") {
  widget_server w;
  CHECK(w.causes(R"("ports":[{"containerPort":80},{"containerPort":80,"protocol":"TCP"}])") ==
        strings{"spec.ports[1]: Duplicate value: map[string]interface {}{\"containerPort\":80, \"protocol\":\"TCP\"}"});
  auto ok = w.create(R"("ports":[{"containerPort":80},{"containerPort":80,"protocol":"UDP"}])");
  REQUIRE(ok.status == 201);
  const json::value created = ok.json();
  CHECK(created.at_path({"spec", "ports"})->as_array()[0].get_string("protocol") == "TCP");
  CHECK(w.causes(R"("set":["a","b","a","b"])") ==
        strings{"spec.set[2]: Duplicate value: \"a\"", "spec.set[3]: Duplicate value: \"b\""});
}

TEST_CASE("value validations answer with kube-apiserver's messages") {
  widget_server w;
  CHECK(w.causes(R"("num":7)") == strings{"spec.num: Invalid value: 7: spec.num in body should be a multiple of 2",
                                          "spec.num: Invalid value: 7: spec.num in body should be less than or equal to 5"});
  CHECK(w.causes(R"("num":2.5)") == strings{"spec.num: Invalid value: \"number\": spec.num in body must be of type integer: \"number\"",
                                            "spec.num: Invalid value: 2.5: spec.num in body should be a multiple of 2"});
  CHECK(w.causes(R"("xn":1)") == strings{"spec.xn: Invalid value: 1: spec.xn in body should be greater than 1"});
  CHECK(w.causes(R"("s":"ABCDE")") == strings{"spec.s: Invalid value: \"ABCDE\": spec.s in body should be at most 3 chars long"});
  CHECK(w.causes(R"("s":"AB")") == strings{"spec.s: Invalid value: \"AB\": spec.s in body should match '^[a-z]+$'"});
  CHECK(w.causes(R"("arr":[])") == strings{"spec.arr: Invalid value: 0: spec.arr in body should have at least 1 items"});
  // Items are reported under the list's own path, as v1.20 does.
  CHECK(w.causes(R"("arr":[1,"a"])") == strings{"spec.arr: Invalid value: \"integer\": spec.arr in body must be of type string: \"integer\""});
  CHECK(w.causes(R"("obj":{"a":"1","b":"2"})") == strings{"spec.obj: Invalid value: 1: spec.obj in body should have at most 1 properties"});
  CHECK(w.causes(R"("when":"2020-01-01")") ==
        strings{"spec.when: Invalid value: \"2020-01-01\": spec.when in body must be of type date-time: \"2020-01-01\""});
  CHECK(w.create(R"("when":"2020-01-01T00:00:00Z","num":4.0,"quantity":12)").status == 201);
}

TEST_CASE("int-or-string, oneOf and not name the node under <nil> as v1.20 does") {
  widget_server w;
  CHECK(w.causes(R"("quantity":true)") ==
        strings{"<nil>: Invalid value: \"\": \"spec.quantity\" must validate at least one schema (anyOf)",
                "spec.quantity: Invalid value: \"boolean\": spec.quantity in body must be of type integer,string: \"boolean\"",
                "spec.quantity: Invalid value: \"boolean\": spec.quantity in body must be of type integer: \"boolean\""});
  CHECK(w.causes(R"("quantity":"12x")") ==
        strings{"spec.quantity: Invalid value: \"12x\": spec.quantity in body should match '^[0-9]+m?$'"});
  CHECK(w.causes(R"("one":{})") ==
        strings{"<nil>: Invalid value: \"\": \"spec.one\" must validate one and only one schema (oneOf). Found none valid",
                "spec.one.a: Required value"});
  CHECK(w.causes(R"("one":{"a":"1","b":"2"})") ==
        strings{"<nil>: Invalid value: \"\": \"spec.one\" must validate one and only one schema (oneOf). Found 2 valid alternatives"});
  CHECK(w.causes(R"("nt":"bad")") == strings{"<nil>: Invalid value: \"\": \"spec.nt\" must not validate the schema (not)"});
}

TEST_CASE("a CRD whose schema sets uniqueItems, an invalid default or an undefaulted list-map key is refused") {
  running_server s;
  auto r = s.http->post(crds, widget_crd(R"(
    "arr":{"type":"array","uniqueItems":true,"items":{"type":"string"}},
    "nl":{"type":"string","default":5},
    "d1":{"type":"string","default":"hello","maxLength":2},
    "ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k","p"],
      "items":{"type":"object","required":["k"],"properties":{"k":{"type":"string"},"p":{"type":"string"}}}})"));
  REQUIRE(r.status == 422);
  std::vector<std::string> got;
  const json::value body = r.json();
  for (const auto& c : body.at_path({"details", "causes"})->as_array())
    got.push_back(c.get_string("field") + ": " + c.get_string("message"));
  std::sort(got.begin(), got.end());
  const std::string base = "spec.validation.openAPIV3Schema.properties[spec].properties";
  CHECK(got == strings{
                   base + "[arr].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
                   base + "[d1].default: Invalid value: \"hello\":  in body should be at most 2 chars long",
                   base + "[nl].default: Invalid value: \"integer\":  in body must be of type string: \"integer\"",
                   base + "[ports].items.properties[p].default: Required value: this property is in x-kubernetes-list-map-keys, "
                          "so it must have a default or be a required property",
               });
  CHECK(s.http->get(crds + "/widgets.test.io").status == 404);
}

TEST_CASE("a default added to the CRD later shows on stored objects without a new resourceVersion") {
  running_server s;
  REQUIRE(s.http->post(crds, widget_crd(R"("size":{"type":"integer"})")).status == 201);
  auto created = s.http->post(widgets, R"({"apiVersion":"test.io/v1","kind":"Widget","metadata":{"name":"old"},"spec":{}})");
  REQUIRE(created.status == 201);
  std::string rv = str(created.json(), {"metadata", "resourceVersion"});
  auto crd = s.http->get(crds + "/widgets.test.io").json();
  crd.at_path({"spec"})->as_object()["versions"].as_array()[0]
      .at_path({"schema", "openAPIV3Schema", "properties", "spec", "properties", "size"})->as_object().set("default", 3);
  REQUIRE(s.http->put(crds + "/widgets.test.io", json::dump(crd)).status == 200);
  auto read = s.http->get(widgets + "/old").json();
  CHECK(read.at_path({"spec", "size"}) != nullptr);
  CHECK(read.at_path({"spec", "size"})->as_int() == 3);
  CHECK(str(read, {"metadata", "resourceVersion"}) == rv);
}

TEST_CASE("annotations over 256 KiB in all are refused as kube-apiserver refuses them") {
  running_server s;
  auto big = [](std::size_t n) {
    return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big)" + std::to_string(n) +
           R"(","annotations":{"a":")" + std::string(n, 'x') + R"("}}})";
  };
  auto r = s.http->post(configmaps, big(262144));
  REQUIRE(r.status == 422);
  CHECK(str(r.json(), {"message"}) ==
        "ConfigMap \"big262144\" is invalid: metadata.annotations: Too long: must have at most 262144 bytes");
  CHECK(s.http->post(configmaps, big(262143)).status == 201);
}

TEST_CASE("a CRD of the peer's size (about 600 KB of schema) is accepted and applied to its objects") {
  running_server s;
  // Many properties with long descriptions, as controller-gen writes a full pod template.
  std::string props;
  for (int i = 0; i < 1500; ++i)
    props += (i ? "," : "") + std::string("\"f") + std::to_string(i) + R"(":{"type":"string","description":")" +
             std::string(380, 'd') + "\"}";
  props += R"(,"port":{"type":"object","properties":{"protocol":{"type":"string","default":"TCP"}}})";
  std::string crd = widget_crd(props);
  REQUIRE(crd.size() > 600 * 1000);
  REQUIRE(s.http->post(crds, crd).status == 201);
  auto r = s.http->post(widgets, R"({"apiVersion":"test.io/v1","kind":"Widget","metadata":{"name":"w"},
    "spec":{"f1499":"x","port":{},"unknown":1}})");
  REQUIRE(r.status == 201);
  const json::value created = r.json();
  CHECK(created.at_path({"spec", "port"})->get_string("protocol") == "TCP");
  CHECK(created.at_path({"spec", "unknown"}) == nullptr);
}
