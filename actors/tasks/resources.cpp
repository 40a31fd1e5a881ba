#include "actors/tasks/resources.hpp"

#include <map>
#include <string>

namespace kozmo::tasks {
namespace {

using resource_map = std::map<std::string, k8s::quantity>;


// Quantities were validated with the spec; anything unreadable counts as unset.
resource_map read_map(const json::value* m) {
  resource_map out;
  if (!m || !m->is_object())
    return out;
  for (const auto& [name, v] : m->as_object())
    if (auto q = k8s::quantity::parse(json::scalar_text(v)))
      out[name] = *q;
  return out;
}

json::value write_map(const resource_map& m) {
  json::value out = json::object{};
  for (const auto& [name, q] : m)
    out[name] = q.to_string();
  return out;
}

k8s::quantity get(const resource_map& m, const std::string& name) {
  auto it = m.find(name);
  return it == m.end() ? k8s::quantity{} : it->second;
}

k8s::quantity cap(const k8s::quantity& value, const k8s::quantity& limit) {
  if (value.is_zero() || limit.is_zero())
    return value;
  return value > limit ? limit : value;
}

// "gpu" → the platform's name; a quantity already under the platform's name wins.
void rename_gpu(resource_map& m, const std::string& gpu_name) {
  auto it = m.find("gpu");
  if (it == m.end())
    return;
  m[gpu_name] = it->second;
  m.erase("gpu");
}

} // namespace

resource_requirement adjust_or_default(const k8s::quantity& request, const k8s::quantity& limit,
                                       const k8s::quantity& platform_default, const k8s::quantity& platform_cap) {
  k8s::quantity r = request, l = limit;
  if (r.is_zero())
    r = l.is_zero() ? platform_default : l;
  if (l.is_zero())
    l = r;
  r = cap(r, platform_cap);
  l = cap(l, platform_cap);
  r = cap(r, l);
  return {r, l};
}

json::value apply_resources(const json::value& resources, const json::value& overrides, resource_mode mode,
                            const platform_config& config) {
  resource_map requests = read_map(resources.find("requests"));
  resource_map limits = read_map(resources.find("limits"));
  if (mode == resource_mode::assign && overrides.is_object()) {
    // A container task's overrides replace its resources wholesale.
    resource_map o_req = read_map(overrides.find("requests")), o_lim = read_map(overrides.find("limits"));
    if (!o_req.empty() || !o_lim.empty()) {
      requests = std::move(o_req);
      limits = std::move(o_lim);
    }
  } else if (mode == resource_mode::merge_existing && overrides.is_object()) {
    for (const auto& [k, q] : read_map(overrides.find("requests")))
      requests[k] = q;
    for (const auto& [k, q] : read_map(overrides.find("limits")))
      limits[k] = q;
  }
  const std::string& gpu = config.gpu_resource_name;
  rename_gpu(requests, gpu);
  rename_gpu(limits, gpu);
  requests.erase("storage");
  limits.erase("storage");

  bool assign = mode != resource_mode::ensure_in_range;
  auto settle = [&](const std::string& name, const k8s::quantity& platform_default, bool always) {
    bool asked = requests.count(name) || limits.count(name);
    if (!asked && !(always && assign))
      return;
    auto r = adjust_or_default(get(requests, name), get(limits, name), platform_default,
                               get(config.resource_limits, name == gpu ? "gpu" : name));
    if (assign || requests.count(name))
      requests[name] = r.request;
    if (assign || limits.count(name))
      limits[name] = r.limit;
  };
  settle("cpu", config.default_cpus, true);
  settle("memory", config.default_memory, true);
  settle("ephemeral-storage", k8s::quantity{}, false);
  settle(gpu, k8s::quantity{}, false);
  // A GPU count of zero asks for nothing: leave it out rather than pin the pod to GPU nodes.
  if (get(requests, gpu).is_zero() && get(limits, gpu).is_zero()) {
    requests.erase(gpu);
    limits.erase(gpu);
  }
  json::value out = json::object{};
  if (!requests.empty())
    out["requests"] = write_map(requests);
  if (!limits.empty())
    out["limits"] = write_map(limits);
  return out;
}

bool pod_uses_resource(const json::value& pod_spec, const std::string& resource) {
  for (const char* list : {"initContainers", "containers"}) {
    const auto* cs = pod_spec.find(list);
    if (!cs || !cs->is_array())
      continue;
    for (const auto& c : cs->as_array())
      for (const char* part : {"limits", "requests"}) {
        const auto* m = c.at_path({"resources", part});
        if (m && m->find(resource))
          return true;
      }
  }
  return false;
}

} // namespace kozmo::tasks
