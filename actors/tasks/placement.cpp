#include "actors/tasks/placement.hpp"

#include "actors/tasks/resources.hpp"

namespace kozmo::tasks {
namespace {

json::value& array_member(json::value& obj, std::string_view key) {
  json::value& v = obj[key];
  if (!v.is_array())
    v = json::array{};
  return v;
}

json::value requirement(const std::string& key, const std::string& op, const std::vector<std::string>& values) {
  json::value r = json::object{{"key", key}, {"operator", op}};
  if (!values.empty()) {
    json::array vs;
    for (const auto& v : values)
      vs.push_back(v);
    r["values"] = std::move(vs);
  }
  return r;
}

json::value toleration(const std::string& key, const std::string& op, const std::string& value) {
  json::value t = json::object{{"key", key}, {"operator", op}};
  if (!value.empty())
    t["value"] = value;
  t["effect"] = "NoSchedule";
  return t;
}

// Whether a main container limits `resource` (the peer looks at limits, which Kozmo's resource
// rules always set when a request is).
bool limits_resource(const json::value& pod_spec, const std::string& resource) {
  const auto* cs = pod_spec.find("containers");
  if (!cs || !cs->is_array())
    return false;
  for (const auto& c : cs->as_array())
    if (const auto* l = c.at_path({"resources", "limits"}); l && l->find(resource))
      return true;
  return false;
}

} // namespace

void add_required_node_selector_requirements(json::value& pod_spec, const std::vector<json::value>& requirements) {
  if (requirements.empty())
    return;
  json::value& selector = pod_spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
  json::value& terms = array_member(selector, "nodeSelectorTerms");
  if (terms.as_array().empty()) {
    json::array exprs(requirements.begin(), requirements.end());
    terms.as_array().push_back(json::object{{"matchExpressions", std::move(exprs)}});
    return;
  }
  for (auto& term : terms.as_array()) {
    if (!term.is_object())
      term = json::object{};
    json::value& exprs = array_member(term, "matchExpressions");
    for (const auto& r : requirements)
      exprs.as_array().push_back(r);
  }
}

void apply_gpu_selectors(json::value& pod_spec, const gpu_accelerator& acc, const platform_config& config) {
  if (!limits_resource(pod_spec, config.gpu_resource_name))
    return;
  std::vector<json::value> reqs;
  std::vector<json::value> tols;
  if (!acc.device.empty()) {
    reqs.push_back(requirement(config.gpu_device_node_label, "In", {acc.device}));
    tols.push_back(toleration(config.gpu_device_node_label, "Equal", acc.device));
  }
  if (!acc.partition_size.empty()) {
    reqs.push_back(requirement(config.gpu_partition_size_node_label, "In", {acc.partition_size}));
    tols.push_back(toleration(config.gpu_partition_size_node_label, "Equal", acc.partition_size));
  } else if (acc.unpartitioned) {
    // No toleration: a node without a partition label has no partition taint to tolerate.
    reqs.push_back(requirement(config.gpu_partition_size_node_label, "DoesNotExist", {}));
  }
  for (const auto& r : reqs)
    add_required_node_selector_requirements(pod_spec, {r});
  json::value& list = array_member(pod_spec, "tolerations");
  for (auto& t : tols)
    list.as_array().push_back(std::move(t));
}

void apply_interruptible_and_defaults(json::value& pod_spec, bool interruptible, const platform_config& config) {
  json::array tolerations;
  if (interruptible)
    for (const auto& t : config.interruptible_tolerations.as_array())
      tolerations.push_back(t);
  for (const auto& t : config.default_tolerations.as_array())
    tolerations.push_back(t);
  if (const auto* own = pod_spec.find("tolerations"); own && own->is_array())
    for (const auto& t : own->as_array())
      tolerations.push_back(t);
  if (!tolerations.empty())
    pod_spec["tolerations"] = std::move(tolerations);

  if (!config.default_node_selector.empty()) {
    json::value selector = json::object{};
    for (const auto& [k, v] : config.default_node_selector)
      selector[k] = v;
    if (const auto* own = pod_spec.find("nodeSelector"); own && own->is_object())
      for (const auto& [k, v] : own->as_object())
        selector[k] = v; // the pod's own value wins
    pod_spec["nodeSelector"] = std::move(selector);
  }

  const json::value& req = interruptible ? config.interruptible_node_selector_requirement
                                         : config.non_interruptible_node_selector_requirement;
  if (!req.is_null())
    add_required_node_selector_requirements(pod_spec, {req});
}

} // namespace kozmo::tasks
