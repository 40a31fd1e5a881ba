// The strategies of the storage kinds users' manifests bring along beside their workloads:
// PersistentVolumeClaim, PersistentVolume, ResourceQuota, LimitRange (kube-apiserver's
// pkg/registry/core/{persistentvolumeclaim,persistentvolume,resourcequota,limitrange} and their
// validation) and storage.k8s.io's StorageClass, with the DefaultStorageClass admission rule, as
// far as a user of `kozmo local` would notice them.
#include "k8s/apiserver/strategy_storage.hpp"

#include "k8s/apiserver/json_util.hpp"
#include "k8s/model/quantity.hpp"

#include <array>

namespace kozmo::apiserver {
namespace {

bool is(const resource_type& rt, std::string_view kind) { return rt.is_builtin(kind); }

// The volume sources a PersistentVolume may name (exactly one).
constexpr std::array<std::string_view, 22> volume_sources{
    "hostPath",   "nfs",       "local",          "csi",          "iscsi",       "cephfs",
    "rbd",        "fc",        "flexVolume",     "azureFile",    "azureDisk",   "cinder",
    "flocker",    "glusterfs", "portworxVolume", "quobyte",      "scaleIO",     "storageos",
    "vsphereVolume", "photonPersistentDisk", "gcePersistentDisk", "awsElasticBlockStore"};

void validate_access_modes(const json::value* spec, std::vector<field_error>& errs, const char* why) {
  const json::value* modes = spec ? spec->find("accessModes") : nullptr;
  if (!modes || !modes->is_array() || modes->as_array().empty()) {
    errs.push_back(field_error::required("spec.accessModes", why));
    return;
  }
  for (const auto& m : modes->as_array()) {
    std::string mode = m.is_string() ? m.as_string() : std::string();
    if (mode != "ReadWriteOnce" && mode != "ReadOnlyMany" && mode != "ReadWriteMany" && mode != "ReadWriteOncePod")
      errs.push_back(field_error::not_supported("spec.accessModes", mode,
                                                {"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"}));
  }
}

void validate_storage_quantity(const json::value* holder, const std::string& path, std::vector<field_error>& errs) {
  const json::value* storage = holder ? holder->find("storage") : nullptr;
  if (!storage) {
    errs.push_back(field_error::required(path));
    return;
  }
  std::string text = json::scalar_text(*storage);
  auto q = k8s::quantity::parse(text);
  if (!q)
    errs.push_back(field_error::invalid(path, go_quote(text), "quantities must match the regular expression "
                                                              "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"));
  else if (*q <= k8s::quantity::from_int(0))
    errs.push_back(field_error::invalid(path, go_quote(text), "must be greater than zero"));
}

void validate_claim(const json::value& pvc, const json::value* old, std::vector<field_error>& errs) {
  const json::value* spec = pvc.find("spec");
  validate_access_modes(spec, errs, "at least 1 access mode is required");
  validate_storage_quantity(spec ? spec->at_path({"resources", "requests"}) : nullptr, "spec.resources[storage]", errs);
  std::string mode = spec ? spec->get_string("volumeMode") : std::string();
  if (!mode.empty() && mode != "Filesystem" && mode != "Block")
    errs.push_back(field_error::not_supported("spec.volumeMode", mode, {"Block", "Filesystem"}));
  if (!old)
    return;
  // The spec is fixed at creation but for the storage request and the volume the claim is
  // bound to (once, by the binder).
  auto masked = [](const json::value* s, bool drop_volume) {
    json::value m = s ? *s : json::value(json::object{});
    if (m.is_object()) {
      m.as_object().erase("resources");
      if (drop_volume)
        m.as_object().erase("volumeName");
    }
    return m;
  };
  const json::value* old_spec = old->find("spec");
  bool binding = old_spec == nullptr || old_spec->get_string("volumeName").empty();
  if (masked(spec, binding) != masked(old_spec, binding))
    errs.push_back(field_error::forbidden(
        "spec", "spec is immutable after creation except resources.requests and volumeAttributesClassName for "
                "bound claims"));
}

void validate_volume(const json::value& pv, std::vector<field_error>& errs) {
  const json::value* spec = pv.find("spec");
  validate_access_modes(spec, errs, "");
  validate_storage_quantity(spec ? spec->find("capacity") : nullptr, "spec.capacity", errs);
  int sources = 0;
  for (auto s : volume_sources)
    if (spec && spec->find(s))
      ++sources;
  if (sources == 0)
    errs.push_back(field_error::required("spec", "must specify a volume type"));
  else if (sources > 1)
    errs.push_back(field_error::forbidden("spec", "may not specify more than 1 volume type"));
  std::string policy = spec ? spec->get_string("persistentVolumeReclaimPolicy") : std::string();
  if (!policy.empty() && policy != "Retain" && policy != "Delete" && policy != "Recycle")
    errs.push_back(field_error::not_supported("spec.persistentVolumeReclaimPolicy", policy,
                                              {"Delete", "Recycle", "Retain"}));
}

void validate_quota(const json::value& quota, std::vector<field_error>& errs) {
  const json::value* hard = quota.at_path({"spec", "hard"});
  if (!hard || !hard->is_object())
    return;
  for (const auto& [name, value] : hard->as_object()) {
    std::string text = json::scalar_text(value);
    auto q = k8s::quantity::parse(text);
    if (!q)
      errs.push_back(field_error::invalid("spec.hard[" + name + "]", go_quote(text),
                                          "quantities must match the regular expression "
                                          "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"));
    else if (*q < k8s::quantity::from_int(0))
      errs.push_back(field_error::invalid("spec.hard[" + name + "]", go_quote(text), "must be greater than or equal to 0"));
  }
}

void validate_limit_range(const json::value& lr, std::vector<field_error>& errs) {
  const json::value* limits = lr.at_path({"spec", "limits"});
  if (!limits || !limits->is_array())
    return;
  for (std::size_t i = 0; i < limits->as_array().size(); ++i) {
    std::string type = limits->as_array()[i].get_string("type");
    if (type != "Pod" && type != "Container" && type != "PersistentVolumeClaim")
      errs.push_back(field_error::not_supported("spec.limits[" + std::to_string(i) + "].type", type,
                                                {"Container", "PersistentVolumeClaim", "Pod"}));
  }
}

// storage.k8s.io/v1 StorageClass (pkg/apis/storage/validation): a provisioner, its
// parameters (at most 512, kube-apiserver's bound), and three fields fixed once made.
void validate_storage_class(const json::value& sc, const json::value* old, std::vector<field_error>& errs) {
  const json::value* provisioner = sc.find("provisioner");
  if (!provisioner || !provisioner->is_string() || provisioner->as_string().empty())
    errs.push_back(field_error::required("provisioner"));
  else if (provisioner->as_string().size() > 253)
    errs.push_back(field_error::invalid("provisioner", go_quote(provisioner->as_string()),
                                        "must be no more than 253 characters"));
  constexpr std::size_t max_parameters = 512;
  if (const json::value* params = sc.find("parameters"); params && params->is_object() &&
                                                       params->as_object().size() > max_parameters)
    errs.push_back(field_error::forbidden("parameters", "may not have more than " + std::to_string(max_parameters) +
                                                            " entries, has " +
                                                            std::to_string(params->as_object().size())));
  std::string policy = sc.get_string("reclaimPolicy");
  if (policy != "Delete" && policy != "Retain")
    errs.push_back(field_error::not_supported("reclaimPolicy", policy, {"Delete", "Retain"}));
  std::string mode = sc.get_string("volumeBindingMode");
  if (mode != "Immediate" && mode != "WaitForFirstConsumer")
    errs.push_back(field_error::not_supported("volumeBindingMode", mode, {"Immediate", "WaitForFirstConsumer"}));
  if (!old)
    return;
  auto field = [](const json::value& o, const char* name) { return o.find(name) ? *o.find(name) : json::value(); };
  for (const char* name : {"provisioner", "parameters", "reclaimPolicy"})
    if (field(sc, name) != field(*old, name))
      errs.push_back(field_error::forbidden(name, std::string("updates to ") + name + " are forbidden."));
  if (field(sc, "volumeBindingMode") != field(*old, "volumeBindingMode"))
    errs.push_back(field_error::invalid("volumeBindingMode", go_quote(mode), "field is immutable"));
}

bool annotated_default(const json::value& sc) {
  const json::value* a = sc.at_path({"metadata", "annotations"});
  if (!a || !a->is_object())
    return false;
  for (const char* key : {"storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"})
    if (a->get_string(key) == "true")
      return true;
  return false;
}

} // namespace

bool storage_kind(const resource_type& rt) {
  return is(rt, "PersistentVolumeClaim") || is(rt, "PersistentVolume") || is(rt, "ResourceQuota") ||
         is(rt, "LimitRange") || is(rt, "StorageClass");
}

void prepare_storage_for_create(const resource_type& rt, json::value& obj) {
  if (is(rt, "PersistentVolumeClaim")) {
    set_default(member_object(obj, "spec"), "volumeMode", "Filesystem");
    obj.as_object().set("status", json::object{{"phase", "Pending"}});
  } else if (is(rt, "PersistentVolume")) {
    json::value& spec = member_object(obj, "spec");
    set_default(spec, "volumeMode", "Filesystem");
    set_default(spec, "persistentVolumeReclaimPolicy", "Retain");
    obj.as_object().set("status", json::object{{"phase", "Pending"}});
  } else if (is(rt, "ResourceQuota")) {
    obj.as_object().erase("status"); // the quota's status is the controller's
  } else if (is(rt, "StorageClass") && obj.is_object()) {
    set_default(obj, "reclaimPolicy", "Delete");
    set_default(obj, "volumeBindingMode", "Immediate");
  }
}

std::optional<std::string> default_storage_class(const std::vector<std::shared_ptr<const json::value>>& classes) {
  const json::value* best = nullptr;
  for (const auto& c : classes) {
    if (!c || !annotated_default(*c))
      continue;
    auto stamp = [](const json::value& o) { return o.at_path({"metadata", "creationTimestamp"}) ? json::scalar_text(*o.at_path({"metadata", "creationTimestamp"})) : std::string(); };
    auto name = [](const json::value& o) { return o.at_path({"metadata", "name"}) ? json::scalar_text(*o.at_path({"metadata", "name"})) : std::string(); };
    if (!best || stamp(*c) > stamp(*best) || (stamp(*c) == stamp(*best) && name(*c) < name(*best)))
      best = c.get();
  }
  if (!best)
    return std::nullopt;
  return best->at_path({"metadata", "name"})->as_string();
}

void set_default_storage_class(json::value& pvc, const std::vector<std::shared_ptr<const json::value>>& classes) {
  if (!pvc.is_object())
    return;
  json::value& spec = member_object(pvc, "spec");
  if (spec.find("storageClassName"))
    return; // set, even to "" (no class)
  const json::value* annotations = pvc.at_path({"metadata", "annotations"});
  if (annotations && annotations->is_object() && annotations->find("volume.beta.kubernetes.io/storage-class"))
    return;
  if (auto name = default_storage_class(classes))
    spec.as_object().set("storageClassName", *name);
}

void validate_storage(const resource_type& rt, const json::value& obj, const json::value* old,
                      std::vector<field_error>& errs) {
  if (is(rt, "PersistentVolumeClaim"))
    validate_claim(obj, old, errs);
  else if (is(rt, "PersistentVolume"))
    validate_volume(obj, errs);
  else if (is(rt, "ResourceQuota"))
    validate_quota(obj, errs);
  else if (is(rt, "LimitRange"))
    validate_limit_range(obj, errs);
  else if (is(rt, "StorageClass"))
    validate_storage_class(obj, old, errs);
}

} // namespace kozmo::apiserver
