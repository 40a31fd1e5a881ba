// Request bodies in YAML: read by the shared YAML reader (k8s/json/yaml.hpp).
#include "k8s/apiserver/body_codec.hpp"

#include "k8s/json/yaml.hpp"

namespace kozmo::apiserver {

expected<json::value> yaml_to_json(std::string_view text) { return json::parse_yaml(text); }

} // namespace kozmo::apiserver
