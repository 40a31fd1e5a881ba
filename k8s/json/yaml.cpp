#include "k8s/json/yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <regex>

namespace kozmo::json {
namespace {

value scalar(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str") // quoted: always a string
    return s;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL")
    return nullptr;
  if (s == "true" || s == "True" || s == "TRUE")
    return true;
  if (s == "false" || s == "False" || s == "FALSE")
    return false;
  static const std::regex int_re("[-+]?[0-9]+");
  static const std::regex float_re("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (std::regex_match(s, int_re) && s.size() < 19)
    return static_cast<long long>(std::strtoll(s.c_str(), nullptr, 10));
  if (std::regex_match(s, float_re))
    return std::strtod(s.c_str(), nullptr);
  return s;
}

value convert(const YAML::Node& n) {
  switch (n.Type()) {
  case YAML::NodeType::Map: {
    object obj;
    for (const auto& kv : n)
      obj.set(kv.first.Scalar(), convert(kv.second));
    return obj;
  }
  case YAML::NodeType::Sequence: {
    array arr;
    for (const auto& item : n)
      arr.push_back(convert(item));
    return arr;
  }
  case YAML::NodeType::Scalar:
    return scalar(n);
  default:
    return nullptr;
  }
}

} // namespace

expected<value> parse_yaml(std::string_view text) {
  try {
    YAML::Node root = YAML::Load(std::string(text));
    return convert(root);
  } catch (const YAML::Exception& e) {
    return error::bad_request(std::string("yaml: ") + e.what());
  }
}

expected<std::vector<value>> parse_yaml_documents(std::string_view text) {
  try {
    std::vector<value> out;
    for (const auto& doc : YAML::LoadAll(std::string(text))) {
      if (!doc.IsDefined() || doc.IsNull())
        continue;
      out.push_back(convert(doc));
    }
    return out;
  } catch (const YAML::Exception& e) {
    return error::bad_request(std::string("yaml: ") + e.what());
  }
}

} // namespace kozmo::json
