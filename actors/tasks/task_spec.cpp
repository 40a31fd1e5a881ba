#include "actors/tasks/task_spec.hpp"

#include "actors/tasks/copilot.hpp"
#include "k8s/model/kozmo_keys.hpp"
#include "k8s/model/quantity.hpp"
#include "k8s/model/time.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <functional>

namespace kozmo::tasks {
namespace {

// Kubernetes' field error wording: "<path>: Required value", "<path>: Invalid value: <v>: why".
error required(const std::string& path, const std::string& why = {}) {
  return error::invalid(path + ": Required value" + (why.empty() ? "" : ": " + why));
}
error invalid(const std::string& path, const std::string& shown, const std::string& why) {
  return error::invalid(path + ": Invalid value: " + shown + ": " + why);
}
std::string quoted(const std::string& s) { return "\"" + s + "\""; }

status check_string_list(const json::value& list, const std::string& path) {
  if (list.is_null())
    return ok;
  if (!list.is_array())
    return invalid(path, json::dump(list), "must be a list of strings");
  for (std::size_t i = 0; i < list.as_array().size(); ++i)
    if (!list.as_array()[i].is_string())
      return invalid(path + "[" + std::to_string(i) + "]", json::dump(list.as_array()[i]), "must be a string");
  return ok;
}

status check_resource_map(const json::value* m, const std::string& path) {
  if (!m || m->is_null())
    return ok;
  if (!m->is_object())
    return invalid(path, json::dump(*m), "must be a map of resource name to quantity");
  for (const auto& [name, v] : m->as_object()) {
    std::string text = json::scalar_text(v);
    if (text.empty())
      return invalid(path + "[" + name + "]", json::dump(v), "must be a quantity such as \"2\", \"500m\" or \"4Gi\"");
    auto q = k8s::quantity::parse(text);
    if (!q)
      return invalid(path + "[" + name + "]", quoted(text), q.err().message);
    if (q->sign() < 0)
      return invalid(path + "[" + name + "]", quoted(text), "must be 0 or more");
  }
  return ok;
}

status check_resources(const json::value* r, const std::string& path) {
  if (!r || r->is_null())
    return ok;
  if (!r->is_object())
    return invalid(path, json::dump(*r), "must be an object with requests and limits");
  if (auto st = check_resource_map(r->find("requests"), path + ".requests"); !st)
    return st;
  return check_resource_map(r->find("limits"), path + ".limits");
}

status check_env(const json::value* env, const std::string& path) {
  if (!env || env->is_null())
    return ok;
  if (!env->is_array())
    return invalid(path, json::dump(*env), "must be a list of {name, value}");
  for (std::size_t i = 0; i < env->as_array().size(); ++i) {
    const auto& e = env->as_array()[i];
    std::string at = path + "[" + std::to_string(i) + "]";
    if (!e.is_object() || e.get_string("name").empty())
      return required(at + ".name");
  }
  return ok;
}

status check_container(const json::value& c, const std::string& path) {
  if (!c.is_object())
    return invalid(path, json::dump(c), "must be a container (image, command, args, env, resources)");
  const auto* image = c.find("image");
  if (!image || !image->is_string() || image->as_string().empty())
    return required(path + ".image");
  for (const char* key : {"command", "args"})
    if (const auto* l = c.find(key); l)
      if (auto st = check_string_list(*l, path + "." + key); !st)
        return st;
  if (auto st = check_env(c.find("env"), path + ".env"); !st)
    return st;
  return check_resources(c.find("resources"), path + ".resources");
}

status decode_pod(const json::value& pod, task_spec& out) {
  if (!pod.is_object())
    return required("spec.pod", "type pod needs spec.pod with primaryContainerName and spec");
  out.primary_container = pod.get_string("primaryContainerName");
  if (out.primary_container.empty())
    return required("spec.pod.primaryContainerName", "name the container whose exit decides the task");
  const auto* spec = pod.find("spec");
  if (!spec || !spec->is_object())
    return required("spec.pod.spec", "a pod spec with at least the primary container");
  const auto* containers = spec->find("containers");
  if (!containers || !containers->is_array() || containers->as_array().empty())
    return required("spec.pod.spec.containers");
  bool found = false;
  const auto& list = containers->as_array();
  for (std::size_t i = 0; i < list.size(); ++i) {
    std::string at = "spec.pod.spec.containers[" + std::to_string(i) + "]";
    if (!list[i].is_object() || list[i].get_string("name").empty())
      return required(at + ".name");
    found = found || list[i].get_string("name") == out.primary_container;
    if (auto st = check_container(list[i], at); !st)
      return st;
  }
  if (!found)
    return invalid("spec.pod.primaryContainerName", quoted(out.primary_container),
                   "no container of spec.pod.spec.containers has this name");
  out.pod_spec = *spec;
  return ok;
}

status decode_accelerator(const json::value& a, task_spec& out) {
  if (a.is_null())
    return ok;
  if (!a.is_object())
    return invalid("spec.gpuAccelerator", json::dump(a), "must be an object with device and partitionSize");
  gpu_accelerator acc;
  acc.device = a.get_string("device");
  if (acc.device.empty())
    return required("spec.gpuAccelerator.device", "the GPU model, as the nodes' accelerator label names it");
  acc.partition_size = a.get_string("partitionSize");
  acc.unpartitioned = a.get_bool("unpartitioned");
  if (acc.unpartitioned && !acc.partition_size.empty())
    return invalid("spec.gpuAccelerator.unpartitioned", "true", "cannot be set together with partitionSize");
  out.accelerator = std::move(acc);
  return ok;
}

status decode_string_map(const json::value* m, const std::string& path,
                         const std::function<void(const std::string&, const std::string&)>& put) {
  if (!m || m->is_null())
    return ok;
  if (!m->is_object())
    return invalid(path, json::dump(*m), "must be a map of name to string");
  for (const auto& [k, v] : m->as_object()) {
    if (!v.is_string())
      return invalid(path + "[" + k + "]", json::dump(v), "must be a string (quote numbers and booleans)");
    if (k.empty())
      return invalid(path, "\"\"", "names must not be empty");
    put(k, v.as_string());
  }
  return ok;
}

// A DNS-1123 subdomain, as Secret names are.
bool dns_subdomain(const std::string& s) {
  if (s.empty() || s.size() > 253)
    return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
      return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return alnum(s.front()) && alnum(s.back());
}

// A Secret's key: [-._a-zA-Z0-9]+.
bool secret_key(const std::string& s) {
  return !s.empty() && s.size() <= 253 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
  });
}

// An environment variable's name as the API server accepts it: [-._a-zA-Z][-._a-zA-Z0-9]*.
bool env_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
  });
}

std::string default_env_var(const std::string& name, const std::string& key) {
  std::string out = "KOZMO_SECRET_";
  for (char c : name + "_" + key)
    out += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : '_';
  return out;
}

status decode_secrets(const json::value* list, task_spec& out) {
  if (!list || list->is_null())
    return ok;
  if (!list->is_array())
    return invalid("spec.secrets", json::dump(*list), "must be a list of {name, key, mountAs, envVar | path}");
  std::map<std::string, std::string> taken; // env var or path → where
  for (std::size_t i = 0; i < list->as_array().size(); ++i) {
    const auto& item = list->as_array()[i];
    std::string at = "spec.secrets[" + std::to_string(i) + "]";
    if (!item.is_object())
      return invalid(at, json::dump(item), "must be an object with name and key");
    secret_ref r;
    r.name = item.get_string("name");
    r.key = item.get_string("key");
    if (r.name.empty())
      return required(at + ".name", "the Secret, in the task's namespace");
    if (!dns_subdomain(r.name))
      return invalid(at + ".name", quoted(r.name), "must be a Secret's name (lower case letters, digits, '-' and '.')");
    if (r.key.empty())
      return required(at + ".key", "the key of Secret " + quoted(r.name));
    if (!secret_key(r.key))
      return invalid(at + ".key", quoted(r.key), "must be a Secret's key (letters, digits, '-', '.' and '_')");
    std::string mount = item.get_string("mountAs", "env");
    if (mount != "env" && mount != "file")
      return error::invalid(at + ".mountAs: Unsupported value: " + quoted(mount) + ": supported values: \"env\", \"file\"");
    r.as_file = mount == "file";
    const json::value* env_var = item.find("envVar");
    const json::value* path = item.find("path");
    if (r.as_file && env_var && !env_var->is_null())
      return invalid(at + ".envVar", json::dump(*env_var), "mountAs file takes path, not envVar");
    if (!r.as_file && path && !path->is_null())
      return invalid(at + ".path", json::dump(*path), "mountAs env takes envVar, not path");
    std::string place;
    if (r.as_file) {
      r.path = item.get_string("path", "/etc/kozmo/secrets/" + r.name + "/" + r.key);
      bool dotdot = r.path.find("/../") != std::string::npos ||
                    (r.path.size() >= 3 && r.path.compare(r.path.size() - 3, 3, "/..") == 0);
      if (r.path.empty() || r.path[0] != '/' || r.path.back() == '/' || dotdot)
        return invalid(at + ".path", quoted(r.path), "must be an absolute file path without '..'");
      place = r.path;
    } else {
      r.env_var = item.get_string("envVar", default_env_var(r.name, r.key));
      if (!env_name(r.env_var))
        return invalid(at + ".envVar", quoted(r.env_var), "must be an environment variable's name");
      place = "$" + r.env_var;
    }
    if (auto [it, fresh] = taken.emplace(place, at); !fresh)
      return invalid(at, quoted(place), "is also where " + it->second + " goes");
    out.secrets.push_back(std::move(r));
  }
  return ok;
}

status decode_cache(const json::value* c, task_spec& out) {
  if (!c || c->is_null())
    return ok;
  if (!c->is_object())
    return invalid("spec.cache", json::dump(*c), "must be an object with enabled, version and serializable");
  for (const char* flag : {"enabled", "serializable"})
    if (const auto* v = c->find(flag); v && !v->is_null() && !v->is_bool())
      return invalid(std::string("spec.cache.") + flag, json::dump(*v), "must be true or false");
  if (!c->get_bool("enabled"))
    return ok;
  cache_spec cs;
  cs.version = c->get_string("version");
  if (cs.version.empty())
    return required("spec.cache.version", "the version of what the task computes (part of the cache key: change "
                                          "it to recompute)");
  cs.serializable = c->get_bool("serializable");
  out.cache = std::move(cs);
  return ok;
}

} // namespace

expected<task_spec> decode_task(const k8s::custom_object& task, const std::vector<std::string>& known_types) {
  const json::value* spec = task.document.find("spec");
  if (!spec || !spec->is_object())
    return required("spec");
  task_spec out;
  out.type = spec->get_string("type");
  std::string supported;
  for (const auto& t : known_types)
    supported += (supported.empty() ? "" : ", ") + quoted(t);
  if (out.type.empty())
    return required("spec.type", "one of " + supported);
  if (std::find(known_types.begin(), known_types.end(), out.type) == known_types.end())
    return error::invalid("spec.type: Unsupported value: " + quoted(out.type) + ": supported values: " + supported);

  static const json::value null_value;
  const json::value* container = spec->find("container");
  const json::value* pod = spec->find("pod");
  if (out.type == "container") {
    if (!container || container->is_null())
      return required("spec.container", "type container needs spec.container with at least an image");
    if (auto st = check_container(*container, "spec.container"); !st)
      return st.err();
    out.container = *container;
    out.primary_container = container->get_string("name", "primary");
    if (pod && !pod->is_null())
      return invalid("spec.pod", "{...}", "type container takes spec.container, not spec.pod");
  } else if (out.type == "pod") {
    if (auto st = decode_pod(pod ? *pod : null_value, out); !st)
      return st.err();
    if (container && !container->is_null())
      return invalid("spec.container", "{...}", "type pod takes spec.pod, not spec.container");
  }
  const json::value* job = spec->find("job");
  bool pod_type = out.type == "container" || out.type == "pod";
  if (pod_type && job && !job->is_null())
    return invalid("spec.job", "{...}", "type " + out.type + " takes spec." + out.type + ", not spec.job");
  if (!pod_type) { // a training job: its spec as users write it; the plugin validates it as the kind
    if (!job || !job->is_object())
      return required("spec.job", "type " + out.type + " needs spec.job: the training job's spec as written for "
                                  "its kind (replica specs, runPolicy, ...)");
    for (const char* other : {"container", "pod"})
      if (const auto* v = spec->find(other); v && !v->is_null())
        return invalid(std::string("spec.") + other, "{...}", "type " + out.type + " takes spec.job, not spec." + other);
    out.job = *job;
  }

  out.pod_template_name = spec->get_string("podTemplateName");
  if (const auto* v = spec->find("interruptible"); v && !v->is_null()) {
    if (!v->is_bool())
      return invalid("spec.interruptible", json::dump(*v), "must be true or false");
    out.interruptible = v->as_bool();
  }
  if (const auto* v = spec->find("retries"); v && !v->is_null()) {
    if (!v->is_int())
      return invalid("spec.retries", json::dump(*v), "must be a whole number");
    if (v->as_int() < 0 || v->as_int() > 1000)
      return invalid("spec.retries", json::dump(*v), "must be between 0 and 1000");
    out.retries = static_cast<int>(v->as_int());
  }
  if (const auto* v = spec->find("timeout"); v && !v->is_null()) {
    if (!v->is_string())
      return invalid("spec.timeout", json::dump(*v), "must be a duration such as \"30m\" or \"2h\"");
    auto d = k8s::parse_go_duration(v->as_string());
    if (!d)
      return invalid("spec.timeout", quoted(v->as_string()), d.err().message);
    if (d->count() <= 0)
      return invalid("spec.timeout", quoted(v->as_string()), "must be more than 0 (leave it out for no timeout)");
    out.timeout = *d;
  }
  if (const auto* v = spec->find("gpuAccelerator"))
    if (auto st = decode_accelerator(*v, out); !st)
      return st.err();
  out.resource_pool = spec->get_string("resourcePool");
  if (const auto* r = spec->find("resources"); r && !r->is_null()) {
    if (auto st = check_resources(r, "spec.resources"); !st)
      return st.err();
    out.resources = *r;
  }
  if (auto st = decode_string_map(spec->find("environment"), "spec.environment",
                                  [&](const std::string& k, const std::string& v) { out.environment.emplace_back(k, v); });
      !st)
    return st.err();
  if (auto st = decode_string_map(spec->find("inputs"), "spec.inputs",
                                  [&](const std::string& k, const std::string& v) { out.inputs[k] = v; });
      !st)
    return st.err();
  out.output_prefix = spec->get_string("outputPrefix");
  if (auto st = decode_secrets(spec->find("secrets"), out); !st)
    return st.err();
  if (auto st = decode_cache(spec->find("cache"), out); !st)
    return st.err();
  if (auto st = decode_data_loading(spec->find("dataLoading"), out); !st)
    return st.err();
  return out;
}

std::string project_of(const k8s::object_meta& meta) {
  auto it = meta.labels.find(keys::project);
  if (it != meta.labels.end() && !it->second.empty())
    return it->second;
  return meta.namespace_;
}

} // namespace kozmo::tasks
