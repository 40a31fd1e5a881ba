// YAML as JSON (k8s/json/yaml.hpp): what manifests and apply patches read as, and the budget
// that keeps a few hundred bytes of aliases from expanding into billions of nodes.
#include "k8s/json/yaml.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace kozmo;

namespace {

json::value yaml(const std::string& text) {
  auto v = json::parse_yaml(text);
  REQUIRE(v);
  return *v;
}

std::string refusal(const std::string& text) {
  auto v = json::parse_yaml(text);
  REQUIRE_FALSE(v);
  CHECK(v.err().code == 400);
  return v.err().message;
}

// `levels` levels of an anchor holding ten aliases of the one before: 10^levels leaves.
std::string laughs(int levels) {
  std::string text = "a0: &a0 [\"lol\"]\n";
  for (int i = 1; i <= levels; ++i) {
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j)
      text += (j ? ",*a" : "*a") + std::to_string(i - 1);
    text += "]\n";
  }
  return text;
}

} // namespace

TEST_CASE("plain scalars are typed as YAML 1.1's core schema, quoted ones stay strings") {
  auto v = yaml("a: 1\nb: -2\nc: 1.5\nd: .5\ne: 1e3\nf: true\ng: ~\nh: '7'\ni: \"true\"\nj: 1.2.3\nk: 0x1F\n"
                "l: 9223372036854775807\nm: 92233720368547758070\nn: +3\n");
  CHECK(v.find("a")->as_int() == 1);
  CHECK(v.find("b")->as_int() == -2);
  CHECK(v.find("c")->as_double() == 1.5);
  CHECK(v.find("d")->as_double() == 0.5);
  CHECK(v.find("e")->as_double() == 1000.0);
  CHECK(v.find("f")->as_bool());
  CHECK(v.find("g")->is_null());
  CHECK(v.find("h")->as_string() == "7");
  CHECK(v.find("i")->as_string() == "true");
  CHECK(v.find("j")->as_string() == "1.2.3");
  CHECK(v.find("k")->as_string() == "0x1F");
  CHECK(v.find("l")->as_int() == 9223372036854775807LL);
  CHECK(v.find("m")->is_double()); // beyond int64, as go-yaml reads it
  CHECK(v.find("n")->as_int() == 3);
}

TEST_CASE("anchors and aliases copy the anchored value; documents split on ---") {
  auto v = yaml("base: &b {image: busybox, args: [a, b]}\none: *b\ntwo: *b\n");
  CHECK(*v.find("one") == *v.find("base"));
  CHECK(v.find("two")->find("args")->as_array().size() == 2);
  auto docs = json::parse_yaml_documents("a: 1\n---\n---\nb: 2\n");
  REQUIRE(docs);
  CHECK(docs->size() == 2);
}

TEST_CASE("a scalar of a million digits or characters is read without trouble") {
  auto v = yaml("n: " + std::string(1000000, '7') + "\ns: " + std::string(1000000, 'x') + "\n");
  CHECK(v.find("n")->is_double());
  CHECK(v.find("s")->as_string().size() == 1000000);
}

TEST_CASE("a billion laughs is refused before it is expanded, naming the limit") {
  // 10^9 leaves from 330 bytes: refused in milliseconds, not after gigabytes.
  std::string message = refusal(laughs(9));
  CHECK_THAT(message, Catch::Contains("excessive aliasing"));
  CHECK_THAT(message, Catch::Contains("99% of up to 400000 nodes"));
  // 10^8 too, and in a multi-document stream.
  CHECK_THAT(refusal(laughs(8)), Catch::Contains("excessive aliasing"));
  CHECK_FALSE(json::parse_yaml_documents("a: 1\n---\n" + laughs(9)));
}

TEST_CASE("a document that uses aliases a lot but within the budget is read") {
  // Twenty containers sharing one env block of fifty variables: 95% of the nodes come from
  // aliases, under the 99% a small document may have.
  std::string text = "env: &env\n";
  for (int i = 0; i < 50; ++i)
    text += "- {name: V" + std::to_string(i) + ", value: x}\n";
  text += "containers:\n";
  for (int i = 0; i < 20; ++i)
    text += "- {name: c" + std::to_string(i) + ", env: *env}\n";
  auto v = yaml(text);
  CHECK(v.find("containers")->as_array()[19].find("env")->as_array()[49].find("name")->as_string() == "V49");
  // Whereas 10^4 leaves grown from one string are 99.9% aliases: refused, as kube-apiserver does.
  CHECK_THAT(refusal(laughs(4)), Catch::Contains("excessive aliasing"));
}

TEST_CASE("an anchor whose value contains an alias of itself is refused") {
  CHECK_THAT(refusal("a: &x [1, *x]\n"), Catch::Contains("anchor 'x' value contains itself"));
  CHECK_THAT(refusal("a: &x {b: *x}\n"), Catch::Contains("contains itself"));
}

TEST_CASE("nesting deeper than the parser allows is refused, not a stack overflow") {
  std::string deep(100000, '[');
  CHECK_FALSE(json::parse_yaml(deep));
  std::string deep_maps;
  for (int i = 0; i < 50000; ++i)
    deep_maps += "{a: ";
  CHECK_FALSE(json::parse_yaml(deep_maps));
}

TEST_CASE("a mapping key must be a scalar") {
  CHECK_THAT(refusal("? [a, b]\n: 1\n"), Catch::Contains("a mapping key must be a scalar"));
  CHECK_THAT(refusal("? {a: 1}\n: 1\n"), Catch::Contains("a mapping key must be a scalar"));
}

TEST_CASE("a text on which yaml-cpp hands out documents without end is refused, not read until memory runs out") {
  // Found by fuzzing (tests/fuzz/corpus/yaml/crash-yaml-cpp-endless-documents.yaml): seven bytes
  // on which yaml-cpp 0.7 reports empty documents forever.
  const std::string text = R"("""""",)";
  auto docs = json::parse_yaml_documents(text);
  REQUIRE_FALSE(docs);
  CHECK_THAT(docs.err().message, Catch::Contains("the text is malformed"));
  CHECK(docs.err().code == 400);
  // A stream of many small documents is still read whole.
  std::string many;
  for (int i = 0; i < 1000; ++i)
    many += "---\na: " + std::to_string(i) + "\n";
  auto read = json::parse_yaml_documents(many);
  REQUIRE(read);
  CHECK(read->size() == 1000);
}
