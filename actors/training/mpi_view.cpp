#include "actors/training/mpi_view.hpp"

namespace kozmo::training {

std::shared_ptr<const std::map<std::string, std::string>> config_data(const json::value& config_map) {
  auto data = std::make_shared<std::map<std::string, std::string>>();
  if (const auto* d = config_map.find("data"); d && d->is_object())
    for (const auto& [k, v] : d->as_object())
      if (v.is_string())
        (*data)[k] = v.as_string();
  return data;
}

void mpi_view::see(const std::string& job_name, const std::string& resource, const json::value& object, bool gone) {
  const json::value* meta = object.find("metadata");
  std::string name = meta ? meta->get_string("name") : std::string();
  if (resource == "configmaps") {
    if (name == job_name + "-config")
      config = gone ? nullptr : config_data(object);
    return;
  }
  if (resource != "serviceaccounts" && resource != "roles" && resource != "rolebindings")
    return;
  std::string key = resource + "/" + name;
  if (gone) {
    rbac.erase(key);
    if (resource == "roles")
      role_rules.reset();
    return;
  }
  rbac.insert(key);
  if (resource == "roles") {
    const json::value* rules = object.find("rules");
    role_rules = rules ? *rules : json::value(json::array{});
  }
}

void mpi_view::fill(observed& world) const {
  if (config)
    world.mpi_config = *config;
  world.mpi_rbac = rbac;
  world.mpi_role_rules = role_rules;
}

} // namespace kozmo::training
