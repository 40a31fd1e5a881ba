#include "k8s/apiserver/resource_types.hpp"

#include "k8s/text.hpp"

#include <algorithm>
#include <cctype>

namespace kozmo::apiserver {
namespace {

using text::lower;

const std::vector<std::string> all_verbs = {"create", "delete", "deletecollection", "get",
                                            "list",   "patch",  "update",           "watch"};

resource_ptr builtin(std::string group, std::string plural, std::string kind, bool namespaced,
                     std::vector<std::string> short_names, std::vector<std::string> categories = {},
                     bool status = false) {
  auto rt = std::make_shared<resource_type>();
  rt->group = std::move(group);
  rt->version = "v1";
  rt->plural = std::move(plural);
  rt->kind = kind;
  rt->list_kind = kind + "List";
  rt->namespaced = namespaced;
  rt->short_names = std::move(short_names);
  rt->categories = std::move(categories);
  rt->status_subresource = status;
  rt->verbs = all_verbs;
  return rt;
}

// Splits "v2beta1" into (major 2, stage 1=beta, minor 1); stage 3 = GA, 0 = not kube-like.
struct version_rank {
  int stage = 0;
  long major = 0;
  long minor = 0;
};

version_rank rank_of(std::string_view v) {
  version_rank r;
  if (v.size() < 2 || v[0] != 'v' || !std::isdigit(static_cast<unsigned char>(v[1])))
    return r;
  std::size_t i = 1;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])))
    r.major = r.major * 10 + (v[i++] - '0');
  if (i == v.size()) {
    r.stage = 3;
    return r;
  }
  std::string_view rest = v.substr(i);
  if (rest.rfind("beta", 0) == 0) {
    r.stage = 2;
    rest.remove_prefix(4);
  } else if (rest.rfind("alpha", 0) == 0) {
    r.stage = 1;
    rest.remove_prefix(5);
  } else {
    return version_rank{};
  }
  if (rest.empty() || !std::all_of(rest.begin(), rest.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return version_rank{};
  r.minor = std::stol(std::string(rest));
  return r;
}

std::vector<std::string> string_list(const json::value* v) {
  std::vector<std::string> out;
  if (!v || !v->is_array())
    return out;
  for (const auto& item : v->as_array())
    if (item.is_string())
      out.push_back(item.as_string());
  return out;
}

} // namespace

std::string resource_type::api_version(std::string_view v) const {
  if (group.empty())
    return std::string(v);
  return group + "/" + std::string(v);
}

bool resource_type::serves(std::string_view v) const {
  if (versions.empty())
    return v == version;
  return std::any_of(versions.begin(), versions.end(), [&](const crd_version& cv) { return cv.name == v; });
}

const crd_version* resource_type::crd_version_of(std::string_view v) const {
  for (const auto& cv : versions)
    if (cv.name == v)
      return &cv;
  return nullptr;
}

bool resource_type::has_spec() const {
  if (!builtin)
    return true;
  return kind == "Pod" || kind == "Node" || kind == "Service" || kind == "Namespace" ||
         kind == "CustomResourceDefinition" || kind == "Lease" || kind == "PersistentVolumeClaim" ||
         kind == "PersistentVolume" || kind == "ResourceQuota" || kind == "LimitRange";
}

bool version_less_preferred(std::string_view a, std::string_view b) {
  // true when `a` should be listed after `b`.
  auto ra = rank_of(a);
  auto rb = rank_of(b);
  if (ra.stage != rb.stage)
    return ra.stage < rb.stage;
  if (ra.stage == 0)
    return a > b;
  if (ra.major != rb.major)
    return ra.major < rb.major;
  return ra.minor < rb.minor;
}

resource_registry::resource_registry() {
  std::vector<resource_ptr> core = {
      builtin("", "namespaces", "Namespace", false, {"ns"}, {}, true),
      builtin("", "pods", "Pod", true, {"po"}, {"all"}, true),
      builtin("", "nodes", "Node", false, {"no"}, {}, true),
      builtin("", "services", "Service", true, {"svc"}, {"all"}, true),
      builtin("", "events", "Event", true, {"ev"}),
      builtin("", "configmaps", "ConfigMap", true, {"cm"}),
      builtin("", "secrets", "Secret", true, {}),
      builtin("", "podtemplates", "PodTemplate", true, {}),
      builtin("", "endpoints", "Endpoints", true, {"ep"}),
      builtin("", "serviceaccounts", "ServiceAccount", true, {"sa"}),
      builtin("", "persistentvolumeclaims", "PersistentVolumeClaim", true, {"pvc"}, {}, true),
      builtin("", "persistentvolumes", "PersistentVolume", false, {"pv"}, {}, true),
      builtin("", "resourcequotas", "ResourceQuota", true, {"quota"}, {}, true),
      builtin("", "limitranges", "LimitRange", true, {"limits"}),
      builtin("coordination.k8s.io", "leases", "Lease", true, {}),
      builtin("rbac.authorization.k8s.io", "roles", "Role", true, {}),
      builtin("rbac.authorization.k8s.io", "rolebindings", "RoleBinding", true, {}),
      builtin("storage.k8s.io", "storageclasses", "StorageClass", false, {"sc"}),
      builtin("apiextensions.k8s.io", "customresourcedefinitions", "CustomResourceDefinition", false,
              {"crd", "crds"}, {"api-extensions"}, true),
  };
  for (auto& rt : core) {
    auto mutable_rt = std::const_pointer_cast<resource_type>(rt);
    if (rt->kind == "Pod")
      mutable_rt->binding_subresource = true;
    if (rt->kind == "Namespace") // namespaces cannot be deleted as a collection
      mutable_rt->verbs = {"create", "delete", "get", "list", "patch", "update", "watch"};
    by_key_[rt->key()] = rt;
  }
  group_order_ = {"apiextensions.k8s.io", "coordination.k8s.io", "rbac.authorization.k8s.io", "storage.k8s.io"};
}

resource_ptr resource_registry::find(std::string_view group, std::string_view version,
                                     std::string_view plural) const {
  std::string key = std::string(group) + "/" + std::string(plural);
  auto it = by_key_.find(key);
  if (it == by_key_.end() || !it->second->serves(version))
    return nullptr;
  return it->second;
}

resource_ptr resource_registry::find_by_key(std::string_view key) const {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : it->second;
}

resource_ptr resource_registry::find_by_kind(std::string_view group, std::string_view kind) const {
  for (const auto& [key, rt] : by_key_)
    if (rt->group == group && rt->kind == kind)
      return rt;
  return nullptr;
}

std::vector<resource_ptr> resource_registry::all() const {
  std::vector<resource_ptr> out;
  out.reserve(by_key_.size());
  for (const auto& [key, rt] : by_key_)
    out.push_back(rt);
  return out;
}

expected<resource_ptr> resource_registry::add_crd(const json::value& crd) {
  const json::value* spec = crd.find("spec");
  const json::value* names = spec ? spec->find("names") : nullptr;
  if (!spec || !names)
    return error::invalid("spec.names: Required value");
  auto rt = std::make_shared<resource_type>();
  rt->builtin = false;
  rt->group = spec->get_string("group");
  rt->plural = names->get_string("plural");
  rt->kind = names->get_string("kind");
  rt->singular = names->get_string("singular", lower(rt->kind));
  rt->list_kind = names->get_string("listKind", rt->kind + "List");
  rt->namespaced = spec->get_string("scope", "Namespaced") != "Cluster";
  rt->short_names = string_list(names->find("shortNames"));
  rt->categories = string_list(names->find("categories"));
  rt->verbs = all_verbs;
  rt->crd_name = rt->plural + "." + rt->group;
  if (rt->group.empty())
    return error::invalid("spec.group: Required value");
  if (rt->plural.empty())
    return error::invalid("spec.names.plural: Required value");
  if (rt->kind.empty())
    return error::invalid("spec.names.kind: Required value");
  std::string name = crd.at_path({"metadata", "name"}) && crd.at_path({"metadata", "name"})->is_string()
                         ? crd.at_path({"metadata", "name"})->as_string()
                         : std::string();
  if (name != rt->crd_name)
    return error::invalid("metadata.name: Invalid value: \"" + name + "\": must be spec.names.plural+\".\"+spec.group");

  const json::value* versions = spec->find("versions");
  if (versions && versions->is_array()) {
    for (const auto& v : versions->as_array()) {
      if (!v.get_bool("served", true))
        continue;
      crd_version cv;
      cv.name = v.get_string("name");
      if (const auto* s = v.at_path({"schema", "openAPIV3Schema"}))
        cv.schema = *s;
      if (const auto* cols = v.find("additionalPrinterColumns"))
        cv.printer_columns = *cols;
      cv.status_subresource = v.at_path({"subresources", "status"}) != nullptr;
      if (!cv.name.empty())
        rt->versions.push_back(std::move(cv));
    }
  } else if (!spec->get_string("version").empty()) {
    // apiextensions v1beta1 style single version, tolerated for old manifests.
    crd_version cv;
    cv.name = spec->get_string("version");
    if (const auto* s = spec->at_path({"validation", "openAPIV3Schema"}))
      cv.schema = *s;
    cv.status_subresource = spec->at_path({"subresources", "status"}) != nullptr;
    rt->versions.push_back(std::move(cv));
  }
  if (rt->versions.empty())
    return error::invalid("spec.versions: Required value: must have at least one served version");
  std::stable_sort(rt->versions.begin(), rt->versions.end(), [](const crd_version& a, const crd_version& b) {
    return version_less_preferred(b.name, a.name);
  });
  rt->version = rt->versions.front().name;
  rt->status_subresource = rt->versions.front().status_subresource;

  // A CRD may not shadow a built-in resource.
  auto existing = by_key_.find(rt->key());
  if (existing != by_key_.end() && existing->second->builtin)
    return error::invalid("spec.group: Invalid value: \"" + rt->group + "\": the group is reserved");
  by_key_[rt->key()] = rt;
  if (std::find(group_order_.begin(), group_order_.end(), rt->group) == group_order_.end())
    group_order_.push_back(rt->group);
  return resource_ptr(rt);
}

resource_ptr resource_registry::remove_crd(std::string_view crd_name) {
  for (auto it = by_key_.begin(); it != by_key_.end(); ++it) {
    if (!it->second->builtin && it->second->crd_name == crd_name) {
      auto rt = it->second;
      by_key_.erase(it);
      bool group_left = std::any_of(by_key_.begin(), by_key_.end(),
                                    [&](const auto& kv) { return kv.second->group == rt->group; });
      if (!group_left)
        group_order_.erase(std::remove(group_order_.begin(), group_order_.end(), rt->group), group_order_.end());
      return rt;
    }
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::vector<std::string>>> resource_registry::groups() const {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const auto& g : group_order_) {
    std::vector<std::string> versions;
    for (const auto& [key, rt] : by_key_) {
      if (rt->group != g)
        continue;
      if (rt->versions.empty()) {
        versions.push_back(rt->version);
      } else {
        for (const auto& cv : rt->versions)
          versions.push_back(cv.name);
      }
    }
    std::sort(versions.begin(), versions.end(), [](const std::string& a, const std::string& b) {
      return version_less_preferred(b, a);
    });
    versions.erase(std::unique(versions.begin(), versions.end()), versions.end());
    if (!versions.empty())
      out.emplace_back(g, std::move(versions));
  }
  return out;
}

} // namespace kozmo::apiserver
