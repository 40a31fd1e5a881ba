// What an MPIJob's actor sees of the objects beside its pods and services: the hostfile
// ConfigMap "<job>-config" and the launcher's ServiceAccount, Role and RoleBinding, fed by the
// watch and by the executor's answers, read by reconcile (observed::mpi_*). Pure.
#pragma once

#include "actors/training/reconcile.hpp"
#include "k8s/json/value.hpp"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace kozmo::training {

struct mpi_view {
  std::shared_ptr<const std::map<std::string, std::string>> config; // the ConfigMap's data
  std::set<std::string> rbac;                                        // "roles/<name>", ...
  std::optional<json::value> role_rules;                             // the Role's rules

  // An object of the job's changed (`gone`: was deleted). Anything but the job's ConfigMap and
  // the launcher's ServiceAccount, Role or RoleBinding is ignored.
  void see(const std::string& job_name, const std::string& resource, const json::value& object, bool gone);
  // What reconcile reads.
  void fill(observed& world) const;
};

// The data of a ConfigMap (its JSON).
std::shared_ptr<const std::map<std::string, std::string>> config_data(const json::value& config_map);

} // namespace kozmo::training
