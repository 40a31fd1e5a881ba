#include "actors/quota/quota_usage.hpp"

#include "k8s/model/quantity_json.hpp"

#include <algorithm>
#include <string>

namespace kozmo::quota {
namespace {

bool ended(const k8s::pod& pod) { return pod.status.phase == "Succeeded" || pod.status.phase == "Failed"; }

// A pod's request (`limits` false) or limit of `resource`: the containers' sum, or the largest
// init container when that is more. A container without a request counts its limit.
k8s::quantity pod_amount(const k8s::pod& pod, const std::string& resource, bool limits) {
  auto of = [&](const k8s::container& c) -> k8s::quantity {
    const auto& lims = c.resources.limits;
    if (!limits)
      if (auto it = c.resources.requests.find(resource); it != c.resources.requests.end())
        return it->second;
    auto it = lims.find(resource);
    return it == lims.end() ? k8s::quantity{} : it->second;
  };
  k8s::quantity sum, init;
  for (const auto& c : pod.spec.containers)
    sum += of(c);
  for (const auto& c : pod.spec.init_containers)
    init = std::max(init, of(c));
  return std::max(sum, init);
}

k8s::quantity count(std::size_t n) { return k8s::quantity::from_int(static_cast<std::int64_t>(n)); }

k8s::quantity used_one(const std::string& name, const namespace_objects& o) {
  std::vector<const k8s::pod*> live;
  for (const k8s::pod* p : o.pods)
    if (!ended(*p))
      live.push_back(p);
  auto pods_sum = [&](const std::string& resource, bool limits) {
    k8s::quantity total;
    for (const k8s::pod* p : live)
      total += pod_amount(*p, resource, limits);
    return total;
  };
  if (name == "pods" || name == "count/pods")
    return count(live.size());
  if (name == "cpu" || name == "memory" || name == "ephemeral-storage")
    return pods_sum(name, false);
  if (name.rfind("requests.", 0) == 0 && name != "requests.storage")
    return pods_sum(name.substr(9), false);
  if (name.rfind("limits.", 0) == 0)
    return pods_sum(name.substr(7), true);
  if (name == "services" || name == "count/services")
    return count(o.services.size());
  if (name == "configmaps" || name == "count/configmaps")
    return count(o.configmaps.size());
  if (name == "secrets" || name == "count/secrets")
    return count(o.secrets.size());
  if (name == "persistentvolumeclaims" || name == "count/persistentvolumeclaims")
    return count(o.claims.size());
  if (name == "services.loadbalancers" || name == "services.nodeports") {
    std::size_t n = 0;
    for (const json::value* s : o.services) {
      std::string type = s->at_path({"spec", "type"}) && s->at_path({"spec", "type"})->is_string()
                             ? s->at_path({"spec", "type"})->as_string()
                             : "ClusterIP";
      if (name == "services.loadbalancers" ? type == "LoadBalancer" : (type == "NodePort" || type == "LoadBalancer"))
        ++n;
    }
    return count(n);
  }
  // Claims: overall, or per storage class ("<class>.storageclass.storage.k8s.io/<what>").
  const std::string per_class = ".storageclass.storage.k8s.io/";
  std::string cls, what = name;
  bool by_class = false;
  if (auto at = name.find(per_class); at != std::string::npos) {
    cls = name.substr(0, at);
    what = name.substr(at + per_class.size());
    by_class = true;
  }
  if (what == "requests.storage" || (by_class && what == "persistentvolumeclaims")) {
    k8s::quantity total;
    std::size_t n = 0;
    for (const json::value* c : o.claims) {
      const json::value* sc = c->at_path({"spec", "storageClassName"});
      if (by_class && (!sc || !sc->is_string() || sc->as_string() != cls))
        continue;
      ++n;
      total += k8s::quantity_member(c->at_path({"spec", "resources", "requests"}), "storage");
    }
    return what == "requests.storage" ? total : count(n);
  }
  return {};
}

} // namespace

json::value used_of(const json::value& hard, const namespace_objects& objects) {
  json::value used = json::object{};
  if (!hard.is_object())
    return used;
  for (const auto& [name, _] : hard.as_object())
    used[name] = used_one(name, objects).to_string();
  return used;
}

} // namespace kozmo::quota
