// YAML as JSON: configuration files, manifests and request bodies are YAML that Kozmo reads
// into the same json::value tree as everything else. yaml-cpp stays inside yaml.cpp (its own
// small library, so that what only needs JSON does not link it).
#pragma once

#include "k8s/error.hpp"
#include "k8s/json/value.hpp"

#include <string_view>
#include <vector>

namespace kozmo::json {

// One YAML document as JSON. Plain scalars are typed as YAML 1.1's core schema does it
// (true/false, null, integers, floats); quoted scalars are always strings.
expected<value> parse_yaml(std::string_view text);

// Every document of a multi-document stream ("---" separated), empty ones left out.
expected<std::vector<value>> parse_yaml_documents(std::string_view text);

} // namespace kozmo::json
