#include "runtime/config_file.hpp"

#include "k8s/json/yaml.hpp"

#include <fstream>
#include <sstream>

namespace kozmo::runtime {

expected<kozmo_config> parse_config(const std::string& text, const std::string& where) {
  kozmo_config out;
  auto doc = json::parse_yaml(text);
  if (!doc)
    return error::bad_request(where + ": " + doc.err().message);
  if (doc->is_null())
    return out;
  if (!doc->is_object())
    return error::bad_request(where + ": must be a map of sections (tasks)");
  for (const auto& [section, value] : doc->as_object()) {
    if (section == "tasks") {
      auto t = tasks::parse_platform_config(value);
      if (!t)
        return error::bad_request(where + ": " + t.err().message);
      out.tasks = std::move(*t);
      continue;
    }
    return error::bad_request(where + ": " + section + ": unknown section (known: tasks)");
  }
  return out;
}

expected<kozmo_config> load_config_file(const std::string& path) {
  if (path.empty())
    return kozmo_config{};
  std::ifstream in(path);
  if (!in)
    return error::bad_request("--config: cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path);
}

} // namespace kozmo::runtime
