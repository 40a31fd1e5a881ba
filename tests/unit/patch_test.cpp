// JSON merge patch (RFC 7386 appendix A) and JSON patch (RFC 6902 appendix A).
#include "k8s/json/patch.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace kozmo;
using json::value;

namespace {

value j(std::string_view text) {
  auto v = json::parse(text);
  INFO("parsing: " << text);
  REQUIRE(v.has_value());
  return std::move(v).value();
}

struct merge_case {
  const char* target;
  const char* patch;
  const char* result;
};

// Applies a JSON patch that must succeed; returns the result as compact JSON.
std::string patched(std::string_view doc, std::string_view patch) {
  auto r = json::apply_json_patch(j(doc), j(patch));
  INFO("doc: " << doc << "\npatch: " << patch);
  if (!r)
    FAIL("unexpected error: " << r.err().message);
  return json::dump(*r);
}

// Applies a JSON patch that must fail; returns the error.
error patch_error(std::string_view doc, std::string_view patch) {
  auto r = json::apply_json_patch(j(doc), j(patch));
  INFO("doc: " << doc << "\npatch: " << patch);
  REQUIRE_FALSE(r.has_value());
  return r.err();
}

} // namespace

TEST_CASE("merge patch reproduces every example of RFC 7386 appendix A", "[patch][merge]") {
  const merge_case cases[] = {
      {R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})"},
      {R"({"a":"b"})", R"({"a":null})", R"({})"},
      {R"({"a":"b","b":"c"})", R"({"a":null})", R"({"b":"c"})"},
      {R"({"a":["b"]})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"c"})", R"({"a":["b"]})", R"({"a":["b"]})"},
      {R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})", R"({"a":{"b":"d"}})"},
      {R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})"},
      {R"(["a","b"])", R"(["c","d"])", R"(["c","d"])"},
      {R"({"a":"b"})", R"(["c"])", R"(["c"])"},
      {R"({"a":"foo"})", "null", "null"},
      {R"({"a":"foo"})", R"("bar")", R"("bar")"},
      {R"({"e":null})", R"({"a":1})", R"({"e":null,"a":1})"},
      {R"([1,2])", R"({"a":"b","c":null})", R"({"a":"b"})"},
      {R"({})", R"({"a":{"bb":{"ccc":null}}})", R"({"a":{"bb":{}}})"},
  };
  for (const auto& c : cases) {
    INFO("target " << c.target << " patch " << c.patch);
    CHECK(json::dump(json::apply_merge_patch(j(c.target), j(c.patch))) == c.result);
  }
}

TEST_CASE("merge patch applies the RFC 7386 section 3 example", "[patch][merge]") {
  value target = j(R"({"title":"Goodbye!","author":{"givenName":"John","familyName":"Doe"},"tags":["example","sample"],"content":"This will be unchanged"})");
  value patch = j(R"({"title":"Hello!","phoneNumber":"+01-123-456-7890","author":{"familyName":null},"tags":["example"]})");
  CHECK(json::dump(json::apply_merge_patch(target, patch)) ==
        R"({"title":"Hello!","author":{"givenName":"John"},"tags":["example"],"content":"This will be unchanged","phoneNumber":"+01-123-456-7890"})");
}

TEST_CASE("merge patch on a custom resource changes one field and keeps the rest", "[patch][merge]") {
  // What `kubectl apply` sends for a CR (k8s-wire.md §3).
  value cr = j(R"({"apiVersion":"wire.example.com/v1","kind":"Gizmo","metadata":{"name":"g","annotations":{"a":"1"}},"spec":{"size":1,"color":"red"}})");
  value patch = j(R"({"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}\n"}},"spec":{"size":2}})");
  CHECK(json::dump(json::apply_merge_patch(cr, patch)) ==
        R"({"apiVersion":"wire.example.com/v1","kind":"Gizmo","metadata":{"name":"g","annotations":{"a":"1","kubectl.kubernetes.io/last-applied-configuration":"{}\n"}},"spec":{"size":2,"color":"red"}})");
}

TEST_CASE("JSON patch applies the successful examples of RFC 6902 appendix A", "[patch][json-patch]") {
  SECTION("A.1 adding an object member") {
    CHECK(patched(R"({"foo":"bar"})", R"([{"op":"add","path":"/baz","value":"qux"}])") == R"({"foo":"bar","baz":"qux"})");
  }
  SECTION("A.2 adding an array element") {
    CHECK(patched(R"({"foo":["bar","baz"]})", R"([{"op":"add","path":"/foo/1","value":"qux"}])") ==
          R"({"foo":["bar","qux","baz"]})");
  }
  SECTION("A.3 removing an object member") {
    CHECK(patched(R"({"baz":"qux","foo":"bar"})", R"([{"op":"remove","path":"/baz"}])") == R"({"foo":"bar"})");
  }
  SECTION("A.4 removing an array element") {
    CHECK(patched(R"({"foo":["bar","qux","baz"]})", R"([{"op":"remove","path":"/foo/1"}])") == R"({"foo":["bar","baz"]})");
  }
  SECTION("A.5 replacing a value") {
    CHECK(patched(R"({"baz":"qux","foo":"bar"})", R"([{"op":"replace","path":"/baz","value":"boo"}])") ==
          R"({"baz":"boo","foo":"bar"})");
  }
  SECTION("A.6 moving a value") {
    CHECK(patched(R"({"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}})",
                  R"([{"op":"move","from":"/foo/waldo","path":"/qux/thud"}])") ==
          R"({"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}})");
  }
  SECTION("A.7 moving an array element") {
    CHECK(patched(R"({"foo":["all","grass","cows","eat"]})", R"([{"op":"move","from":"/foo/1","path":"/foo/3"}])") ==
          R"({"foo":["all","cows","eat","grass"]})");
  }
  SECTION("A.8 testing a value: success") {
    CHECK(patched(R"({"baz":"qux","foo":["a",2,"c"]})",
                  R"([{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}])") ==
          R"({"baz":"qux","foo":["a",2,"c"]})");
  }
  SECTION("A.10 adding a nested member object") {
    CHECK(patched(R"({"foo":"bar"})", R"([{"op":"add","path":"/child","value":{"grandchild":{}}}])") ==
          R"({"foo":"bar","child":{"grandchild":{}}})");
  }
  SECTION("A.11 ignoring unrecognized elements") {
    CHECK(patched(R"({"foo":"bar"})", R"([{"op":"add","path":"/baz","value":"qux","xyz":123}])") ==
          R"({"foo":"bar","baz":"qux"})");
  }
  SECTION("A.14 ~ escape ordering") {
    CHECK(patched(R"({"/":9,"~1":10})", R"([{"op":"test","path":"/~01","value":10}])") == R"({"/":9,"~1":10})");
  }
  SECTION("A.16 adding an array value") {
    CHECK(patched(R"({"foo":["bar"]})", R"([{"op":"add","path":"/foo/-","value":["abc","def"]}])") ==
          R"({"foo":["bar",["abc","def"]]})");
  }
}

TEST_CASE("JSON patch fails the failing examples of RFC 6902 appendix A", "[patch][json-patch]") {
  SECTION("A.9 testing a value: error") {
    auto e = patch_error(R"({"baz":"qux"})", R"([{"op":"test","path":"/baz","value":"bar"}])");
    CHECK(e.message == R"(testing value "/baz" failed: test failed)");
  }
  SECTION("A.12 adding to a nonexistent target") {
    auto e = patch_error(R"({"foo":"bar"})", R"([{"op":"add","path":"/baz/bat","value":"qux"}])");
    CHECK(e.message == R"(add operation does not apply: doc is missing path: "/baz/bat")");
  }
  SECTION("A.15 comparing strings and numbers") {
    patch_error(R"({"/":9,"~1":10})", R"([{"op":"test","path":"/~01","value":"10"}])");
  }
}

TEST_CASE("a JSON patch is all or nothing", "[patch][json-patch]") {
  value doc = j(R"({"spec":{"replicas":1},"metadata":{"resourceVersion":"7"}})");
  auto r = json::apply_json_patch(doc, j(R"([{"op":"replace","path":"/spec/replicas","value":5},
                                              {"op":"test","path":"/metadata/resourceVersion","value":"8"}])"));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.err().code == 422);
  CHECK(json::dump(doc) == R"({"spec":{"replicas":1},"metadata":{"resourceVersion":"7"}})");
}

TEST_CASE("JSON patch pointers unescape ~1 and ~0 in member names", "[patch][json-patch]") {
  CHECK(patched(R"({"metadata":{"annotations":{}}})",
                R"([{"op":"add","path":"/metadata/annotations/example.com~1owner","value":"me"},
                    {"op":"add","path":"/metadata/annotations/tilde~0key","value":"t"}])") ==
        R"({"metadata":{"annotations":{"example.com/owner":"me","tilde~key":"t"}}})");
  CHECK(patched(R"({"metadata":{"labels":{"app.kubernetes.io/name":"x","keep":"y"}}})",
                R"([{"op":"remove","path":"/metadata/labels/app.kubernetes.io~1name"}])") ==
        R"({"metadata":{"labels":{"keep":"y"}}})");
}

TEST_CASE("JSON patch appends with the - index and inserts at the end index", "[patch][json-patch]") {
  CHECK(patched(R"({"a":[1,2]})", R"([{"op":"add","path":"/a/-","value":3},{"op":"add","path":"/a/3","value":4}])") ==
        R"({"a":[1,2,3,4]})");
  CHECK(patched(R"({"a":[1,2]})", R"([{"op":"add","path":"/a/0","value":0}])") == R"({"a":[0,1,2]})");
}

TEST_CASE("JSON patch rejects array indexes that are out of range or malformed", "[patch][json-patch]") {
  patch_error(R"({"a":[1,2]})", R"([{"op":"add","path":"/a/3","value":9}])");
  patch_error(R"({"a":[1,2]})", R"([{"op":"add","path":"/a/01","value":9}])");
  patch_error(R"({"a":[1,2]})", R"([{"op":"add","path":"/a/-1","value":9}])");
  patch_error(R"({"a":[1,2]})", R"([{"op":"remove","path":"/a/-"}])");
  patch_error(R"({"a":[1,2]})", R"([{"op":"remove","path":"/a/2"}])");
  patch_error(R"({"a":[1,2]})", R"([{"op":"replace","path":"/a/5","value":0}])");
}

TEST_CASE("JSON patch replaces, copies and moves whole subtrees", "[patch][json-patch]") {
  CHECK(patched(R"({"a":1})", R"([{"op":"replace","path":"","value":{"b":2}}])") == R"({"b":2})");
  CHECK(patched(R"({"a":{"x":[1]}})", R"([{"op":"copy","from":"/a","path":"/b"},{"op":"add","path":"/b/x/-","value":2}])") ==
        R"({"a":{"x":[1]},"b":{"x":[1,2]}})");
  CHECK(patched(R"({"a":{"x":1}})", R"([{"op":"move","from":"/a","path":"/a"}])") == R"({"a":{"x":1}})");
  CHECK(patched(R"({"a":{"x":1},"b":{}})", R"([{"op":"move","from":"/a/x","path":"/b/y"}])") == R"({"a":{},"b":{"y":1}})");
  CHECK(patched(R"({"a":null})", R"([{"op":"test","path":"/a","value":null}])") == R"({"a":null})");
  CHECK(patched(R"({"a":{"p":1,"q":[1.0,2]}})", R"([{"op":"test","path":"/a","value":{"q":[1,2],"p":1}}])") ==
        R"({"a":{"p":1,"q":[1,2]}})"); // 1.0 is written back as 1, like Go
}

TEST_CASE("JSON patch operations that do not apply are unprocessable", "[patch][json-patch]") {
  CHECK(patch_error(R"({"a":1})", R"([{"op":"remove","path":"/b"}])").message ==
        R"(remove operation does not apply: doc is missing path: "/b")");
  CHECK(patch_error(R"({"a":1})", R"([{"op":"replace","path":"/b","value":2}])").message ==
        R"(replace operation does not apply: doc is missing key: "/b")");
  CHECK(patch_error(R"({"a":1})", R"([{"op":"move","from":"/b","path":"/c"}])").message ==
        R"(move operation does not apply: doc is missing from path: "/b")");
  CHECK(patch_error(R"({"a":1})", R"([{"op":"copy","from":"/b","path":"/c"}])").message ==
        R"(copy operation does not apply: doc is missing from path: "/b")");
  CHECK(patch_error(R"({"a":{"b":1}})", R"([{"op":"move","from":"/a","path":"/a/b/c"}])").code == 422);
  CHECK(patch_error(R"({"a":1})", R"([{"op":"frobnicate","path":"/a"}])").message == "Unexpected kind: frobnicate");
  CHECK(patch_error(R"({"a":1})", R"([{"path":"/a"}])").message == "Unexpected kind: unknown");
  CHECK(patch_error(R"({"a":1})", R"([{"op":"add","path":"/b"}])").code == 422);
  CHECK(patch_error(R"({"a":1})", R"([{"op":"add","path":"b","value":1}])").code == 422);
  CHECK(patch_error(R"({"a":"x"})", R"([{"op":"add","path":"/a/b","value":1}])").code == 422);
}

TEST_CASE("a JSON patch that is not a list of operations is a bad request", "[patch][json-patch]") {
  CHECK(patch_error(R"({"a":1})", R"({"op":"add","path":"/b","value":1})").code == 400);
  CHECK(patch_error(R"({"a":1})", R"(["add"])").code == 400);
}

TEST_CASE("kubectl's JSON patch on a pod image changes only that container", "[patch][json-patch]") {
  CHECK(patched(R"({"spec":{"containers":[{"name":"a","image":"x:1"},{"name":"b","image":"y:1"}]}})",
                R"([{"op":"replace","path":"/spec/containers/1/image","value":"y:2"}])") ==
        R"({"spec":{"containers":[{"name":"a","image":"x:1"},{"name":"b","image":"y:2"}]}})");
}

TEST_CASE("a created merge patch turns the original into the modified document") {
  auto original = json::parse(R"({"a":1,"b":{"c":2,"d":3},"e":[1,2],"gone":"x","same":{"k":"v"}})").value();
  auto modified = json::parse(R"({"a":1,"b":{"c":5},"e":[2],"new":true,"same":{"k":"v"}})").value();
  auto patch = json::create_merge_patch(original, modified);
  CHECK(json::dump(patch) == R"({"b":{"c":5,"d":null},"e":[2],"gone":null,"new":true})");
  CHECK(json::apply_merge_patch(original, patch) == modified);
  CHECK(json::dump(json::create_merge_patch(original, original)) == "{}");
  // A null on both sides is no change: the patch must not delete it (found by fuzzing:
  // tests/fuzz/corpus/patch/crash-null-on-both-sides.txt).
  auto with_null = json::parse(R"({"apiVersion":null,"k":1})").value();
  auto grown = json::parse(R"({"apiVersion":null,"k":1,"n":2})").value();
  CHECK(json::dump(json::create_merge_patch(with_null, grown)) == R"({"n":2})");
  CHECK(json::apply_merge_patch(with_null, json::create_merge_patch(with_null, grown)) == grown);
}
