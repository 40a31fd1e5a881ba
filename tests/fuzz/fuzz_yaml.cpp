// json::parse_yaml and json::parse_yaml_documents (k8s/json/yaml.hpp): configuration files,
// manifests (kozmo apply-style tools, the examples) and YAML request bodies of the embedded API
// server. What parses must be a tree json::dump writes and json::parse reads back; the two
// entry points must agree on a one-document stream.
#include "k8s/json/value.hpp"
#include "k8s/json/yaml.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace kozmo;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  if (auto one = json::parse_yaml(text)) {
    std::string dumped = json::dump(*one);
    auto back = json::parse(dumped);
    fuzz::require(back.has_value(), "parse_yaml gives a tree that dumps to valid JSON", dumped);
    // Not *back == *one: YAML's .nan and .inf have no JSON form and are written as null (and
    // -0.0 as "-0", which reads back as 0); one round later the text is a fixed point.
    std::string settled = json::dump(*back);
    auto third = json::parse(settled);
    fuzz::require(third.has_value() && json::dump(*third) == settled, "the JSON of a YAML document settles", settled);
  }
  if (auto docs = json::parse_yaml_documents(text)) {
    for (const auto& d : *docs)
      fuzz::require(json::parse(json::dump(d)).has_value(), "every YAML document dumps to valid JSON");
  }
  return 0;
}
