// json::value: parsing, Go-compatible writing, and the document model the API server stores.
#include "k8s/json/value.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace kozmo;
using json::value;

namespace {

value must_parse(std::string_view text) {
  auto v = json::parse(text);
  INFO("parsing: " << text);
  REQUIRE(v.has_value());
  return std::move(v).value();
}

std::string round_trip(std::string_view text) { return json::dump(must_parse(text)); }

} // namespace

TEST_CASE("a compact Kubernetes object is written back byte for byte", "[json]") {
  const std::string pod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default","resourceVersion":"12",)"
      R"("labels":{"app":"web","tier":"front"},"generation":3},"spec":{"containers":[{"name":"c","image":"busybox:1.36",)"
      R"("args":["sleep","3600"],"resources":{"limits":{"cpu":"500m","nvidia.com/gpu":1}}}],"nodeName":null,)"
      R"("hostNetwork":false,"terminationGracePeriodSeconds":30},"status":{"phase":"Pending","conditions":[]}})";
  CHECK(round_trip(pod) == pod);
}

TEST_CASE("members keep the order a client wrote them in", "[json]") {
  value v = must_parse(R"({"zeta":1,"alpha":2,"mid":{"b":1,"a":2}})");
  CHECK(json::dump(v) == R"({"zeta":1,"alpha":2,"mid":{"b":1,"a":2}})");

  SECTION("setting an existing key keeps its place, a new key goes last") {
    v.as_object().set("alpha", 20);
    v.as_object().set("new", true);
    CHECK(json::dump(v) == R"({"zeta":1,"alpha":20,"mid":{"b":1,"a":2},"new":true})");
  }
  SECTION("erasing a key keeps the others in order") {
    CHECK(v.as_object().erase("zeta"));
    CHECK_FALSE(v.as_object().erase("zeta"));
    CHECK(json::dump(v) == R"({"alpha":2,"mid":{"b":1,"a":2}})");
  }
}

TEST_CASE("a duplicated key keeps the last value, as Go's decoder does", "[json]") {
  CHECK(round_trip(R"({"a":1,"b":2,"a":3})") == R"({"a":3,"b":2})");
}

TEST_CASE("integers stay integers and fractions stay fractions", "[json]") {
  value v = must_parse(R"({"rv":12,"ratio":0.5,"big":9223372036854775807,"neg":-9223372036854775808,"one":1.0})");
  CHECK(v.find("rv")->is_int());
  CHECK(v.find("rv")->as_int() == 12);
  CHECK(v.find("ratio")->is_double());
  CHECK(v.find("big")->as_int() == INT64_MAX);
  CHECK(v.find("neg")->as_int() == INT64_MIN);
  CHECK(v.find("one")->is_double());
  // Go decodes 1.0 to float64(1) and writes it back as 1.
  CHECK(json::dump(v) == R"({"rv":12,"ratio":0.5,"big":9223372036854775807,"neg":-9223372036854775808,"one":1})");
}

TEST_CASE("an integer too large for int64 becomes a floating-point number", "[json]") {
  value v = must_parse("18446744073709551615");
  CHECK(v.is_double());
  CHECK(json::dump(v) == "18446744073709551616");
}

TEST_CASE("floating-point numbers are written the way Go's encoding/json writes them", "[json]") {
  CHECK(json::dump(value(1e20)) == "100000000000000000000");
  CHECK(json::dump(value(1e21)) == "1e+21");
  CHECK(json::dump(value(1.5e-7)) == "1.5e-7");
  CHECK(json::dump(value(0.000001)) == "0.000001");
  CHECK(json::dump(value(3.14)) == "3.14");
  CHECK(json::dump(value(-2.5)) == "-2.5");
  CHECK(json::dump(value(1.7976931348623157e308)) == "1.7976931348623157e+308");
  CHECK(round_trip("[0.1,100.25,1e-300]") == "[0.1,100.25,1e-300]");
}

TEST_CASE("HTML-sensitive characters are escaped like Go escapes them", "[json]") {
  CHECK(json::dump(value("<a href=\"x\">&</a>")) == R"("\u003ca href=\"x\"\u003e\u0026\u003c/a\u003e")");
  // An escaped "<" in the input is stored as "<" and written escaped again.
  value v = must_parse(R"("\u003cb\u003e")");
  CHECK(v.as_string() == "<b>");
  CHECK(json::dump(v) == R"("\u003cb\u003e")");
}

TEST_CASE("control characters, quotes and line separators are escaped", "[json]") {
  CHECK(json::dump(value("a\"b\\c")) == R"("a\"b\\c")");
  CHECK(json::dump(value("l1\nl2\r\tend")) == R"("l1\nl2\r\tend")");
  CHECK(json::dump(value(std::string("\x01\x1f", 2))) == R"("\u0001\u001f")");
  CHECK(json::dump(value(std::string("nul\0x", 5))) == R"("nul\u0000x")");
  CHECK(json::dump(value("a\u2028b\u2029c")) == R"("a\u2028b\u2029c")");
  // Other characters that start with the same byte as U+2028 stay as they are.
  CHECK(json::dump(value("price \u20ac5, dash \u2013 end")) == "\"price \u20ac5, dash \u2013 end\"");
  // A sequence cut short is not UTF-8: each byte is written as U+FFFD, as Go does.
  CHECK(json::dump(value(std::string("cut \xE2\x80", 6))) == R"("cut \ufffd\ufffd")");
}

TEST_CASE("non-ASCII text passes through as UTF-8", "[json]") {
  CHECK(json::dump(value("café 日本")) == "\"café 日本\"");
  value v = must_parse(R"(["\u00e9","\ud83d\ude00"])");
  CHECK(v.as_array()[0].as_string() == "é");
  CHECK(v.as_array()[1].as_string() == "😀");
  CHECK(json::dump(v) == "[\"é\",\"😀\"]");
}

TEST_CASE("malformed JSON is a bad request with a message", "[json]") {
  for (const char* bad : {"", "   ", "{", "[1,2", R"({"a":})", "tru", R"("unterminated)", R"({"a":1}x)", "1 2",
                          "[1,]", R"({"a":1,})", "01", "NaN", R"({a:1})", "'single'"}) {
    INFO("input: " << bad);
    auto v = json::parse(bad);
    REQUIRE_FALSE(v.has_value());
    CHECK(v.err().code == 400);
    CHECK(v.err().message.find("json parse error") != std::string::npos);
  }
}

TEST_CASE("whitespace around and inside a document is accepted", "[json]") {
  CHECK(round_trip(" \n\t{ \"a\" : [ 1 , 2 ] ,\r\n \"b\" : { } }  ") == R"({"a":[1,2],"b":{}})");
}

TEST_CASE("deeply nested documents parse and write back", "[json]") {
  constexpr int depth = 500;
  std::string nested;
  for (int i = 0; i < depth; ++i)
    nested += R"({"a":[)";
  nested += "1";
  for (int i = 0; i < depth; ++i)
    nested += "]}";
  CHECK(round_trip(nested) == nested);
}

TEST_CASE("large documents parse and write back", "[json]") {
  std::string list = "[";
  for (int i = 0; i < 100000; ++i)
    list += (i ? "," : "") + std::to_string(i * 7);
  list += "]";
  value v = must_parse(list);
  REQUIRE(v.as_array().size() == 100000);
  CHECK(v.as_array()[99999].as_int() == 699993);
  CHECK(json::dump(v) == list);

  std::string big(1 << 20, 'x');
  value s = must_parse("\"" + big + "\"");
  CHECK(s.as_string().size() == big.size());

  std::string many = "{";
  for (int i = 0; i < 5000; ++i)
    many += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  many += "}";
  value obj = must_parse(many);
  CHECK(obj.as_object().size() == 5000);
  CHECK(obj.get_int("k4999") == 4999);
  CHECK(json::dump(obj) == many);
}

TEST_CASE("equality compares numbers by value and objects regardless of order", "[json]") {
  CHECK(value(1) == value(1.0));
  CHECK(value(1) != value(2));
  CHECK(value("1") != value(1));
  CHECK(value(nullptr) != value(false));
  CHECK(must_parse(R"({"a":1,"b":[1,2]})") == must_parse(R"({"b":[1,2],"a":1.0})"));
  CHECK(must_parse("[1,2]") != must_parse("[2,1]"));
  CHECK(must_parse(R"({"a":1})") != must_parse(R"({"a":1,"b":null})"));
}

TEST_CASE("typed reads fall back when a member is missing or of another type", "[json]") {
  value v = must_parse(R"({"metadata":{"name":"p","generation":4,"deleted":true},"n":2.9})");
  CHECK(v.at_path({"metadata", "name"})->as_string() == "p");
  CHECK(v.at_path({"metadata", "missing"}) == nullptr);
  CHECK(v.find("metadata")->get_int("generation") == 4);
  CHECK(v.get_int("n") == 2);
  CHECK(v.get_string("n", "fallback") == "fallback");
  CHECK(v.find("metadata")->get_bool("deleted"));
  CHECK_FALSE(v.get_bool("absent"));
}

TEST_CASE("building a document with operator[] creates objects on the way", "[json]") {
  value v;
  v["metadata"]["labels"]["app"] = "web";
  v["spec"]["replicas"] = 3;
  CHECK(json::dump(v) == R"({"metadata":{"labels":{"app":"web"}},"spec":{"replicas":3}})");
}

TEST_CASE("pretty output indents nested members and keeps empty containers compact", "[json]") {
  value v = must_parse(R"({"a":[1,{"b":null}],"c":{},"d":[]})");
  CHECK(json::dump_pretty(v) == "{\n  \"a\": [\n    1,\n    {\n      \"b\": null\n    }\n  ],\n  \"c\": {},\n  \"d\": []\n}");
  CHECK(json::dump(must_parse(json::dump_pretty(v))) == json::dump(v));
}
