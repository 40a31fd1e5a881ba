#include "actors/tasks/pod_template_merge.hpp"

namespace kozmo::tasks {
namespace {

bool is_empty(const json::value& v) {
  switch (v.type()) {
  case json::value::kind::null: return true;
  case json::value::kind::boolean: return !v.as_bool();
  case json::value::kind::integer: return v.as_int() == 0;
  case json::value::kind::number: return v.as_double() == 0;
  case json::value::kind::string: return v.as_string().empty();
  case json::value::kind::array: return v.as_array().empty();
  case json::value::kind::object: return v.as_object().empty();
  }
  return true;
}

const json::value* named(const json::value* list, const std::string& name) {
  if (!list || !list->is_array())
    return nullptr;
  for (const auto& c : list->as_array())
    if (c.get_string("name") == name)
      return &c;
  return nullptr;
}

// The task's containers of one list, each over the template's "default" and (for the primary)
// "primary" containers.
json::value merge_containers(const json::value* templ_list, const json::value* own, const std::string& primary,
                             const std::string& default_name, const std::string& primary_name) {
  json::array out;
  if (!own || !own->is_array())
    return out;
  const json::value* deflt = named(templ_list, default_name);
  const json::value* prim = named(templ_list, primary_name);
  for (const auto& c : own->as_array()) {
    json::value merged;
    bool based = false;
    if (deflt) {
      merged = *deflt;
      based = true;
    }
    if (prim && c.get_string("name") == primary) {
      merged = based ? merge_values(merged, *prim) : *prim;
      based = true;
    }
    out.push_back(based ? merge_values(merged, c) : c);
  }
  return out;
}

} // namespace

json::value merge_values(const json::value& base, const json::value& over) {
  if (base.is_object() && over.is_object()) {
    json::value out = base;
    for (const auto& [k, v] : over.as_object()) {
      const json::value* b = base.find(k);
      out[k] = b ? merge_values(*b, v) : v;
    }
    return out;
  }
  if (base.is_array() && over.is_array()) {
    json::value out = base;
    for (const auto& v : over.as_array())
      out.as_array().push_back(v);
    return out;
  }
  return is_empty(over) ? base : over;
}

json::value merge_pod_template(const json::value& templ, const json::value& pod, const std::string& primary) {
  static const json::value none;
  const json::value* t = templ.find("template");
  const json::value& t_meta = t && t->find("metadata") ? *t->find("metadata") : none;
  const json::value& t_spec = t && t->find("spec") ? *t->find("spec") : none;
  const json::value& p_spec = pod.find("spec") ? *pod.find("spec") : none;

  json::value spec_base = t_spec.is_object() ? t_spec : json::value(json::object{});
  json::value spec_over = p_spec.is_object() ? p_spec : json::value(json::object{});
  for (const char* key : {"containers", "initContainers"}) {
    spec_base.as_object().erase(key);
    spec_over.as_object().erase(key);
  }
  json::value spec = merge_values(spec_base, spec_over);
  json::value containers =
      merge_containers(t_spec.find("containers"), p_spec.find("containers"), primary, "default", "primary");
  spec["containers"] = std::move(containers);
  if (const auto* init = p_spec.find("initContainers"); init && init->is_array() && !init->as_array().empty())
    spec["initContainers"] =
        merge_containers(t_spec.find("initContainers"), init, primary, "default-init", "primary-init");

  json::value out = pod;
  json::value meta = pod.find("metadata") ? *pod.find("metadata") : json::value(json::object{});
  for (const char* key : {"labels", "annotations"}) {
    const json::value* base = t_meta.find(key);
    if (!base || !base->is_object())
      continue;
    const json::value* own = meta.find(key);
    meta[key] = own && own->is_object() ? merge_values(*base, *own) : *base;
  }
  out["metadata"] = std::move(meta);
  out["spec"] = std::move(spec);
  return out;
}

} // namespace kozmo::tasks
