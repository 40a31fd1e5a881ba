#include "actors/volumes/claim_binding.hpp"

#include "k8s/model/quantity_json.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace kozmo::volumes {
namespace {

bool deleting(const json::value& obj) {
  const json::value* ts = obj.at_path({"metadata", "deletionTimestamp"});
  return ts && !ts->is_null();
}

// Why the provisioner cannot make a volume for `c` of class `sc`; nullopt when it can.
std::optional<std::string> unprovisionable(const claim& c, const provisioning& prov) {
  if (prov.volumes_dir.empty())
    return std::string(local_path_provisioner) + " has no directory for volumes here (kozmo local gives it one when "
                                                 "it runs simulated nodes)";
  if (c.selector)
    return std::string("claim Selector is not supported");
  if (c.volume_mode != "Filesystem")
    return std::string(local_path_provisioner) + " provisions Filesystem volumes only, not " + c.volume_mode;
  static const k8s::quantity limit = *k8s::quantity::parse(max_local_path_request);
  if (c.request > limit)
    return "requested storage " + c.request.to_string() + " is more than " + local_path_provisioner +
           " accepts (" + max_local_path_request + ")";
  if (c.uid.empty())
    return std::string("the claim has no uid yet");
  return std::nullopt;
}

// The PersistentVolume the provisioner makes for `c`, pre-bound to it.
provision provision_for(const claim& c, const storage_class& sc, const provisioning& prov) {
  provision p;
  p.claim_key = c.key();
  p.volume = "pvc-" + c.uid;
  p.directory = prov.volumes_dir + "/" + p.volume;
  json::array modes;
  for (const auto& m : c.access_modes)
    modes.emplace_back(m);
  json::value pv = json::object{{"apiVersion", "v1"}, {"kind", "PersistentVolume"}};
  pv["metadata"]["name"] = p.volume;
  pv["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] = local_path_provisioner;
  json::value& spec = pv["spec"];
  spec["capacity"]["storage"] = c.request.to_string();
  spec["accessModes"] = std::move(modes);
  spec["persistentVolumeReclaimPolicy"] = sc.reclaim_policy;
  spec["storageClassName"] = sc.name;
  spec["volumeMode"] = "Filesystem";
  spec["hostPath"] = json::object{{"path", p.directory}, {"type", "DirectoryOrCreate"}};
  spec["claimRef"] = json::object{{"kind", "PersistentVolumeClaim"}, {"apiVersion", "v1"}, {"namespace", c.ns},
                                  {"name", c.name}, {"uid", c.uid}};
  p.object = std::move(pv);
  return p;
}

// A claim of a class that no existing volume satisfies: provision, or say why it waits.
void provision_or_wait(const claim& c, const provisioning& prov, const std::map<std::string, const volume*>& volume_by_name,
                       pass_result& out) {
  auto sc = std::find_if(prov.classes.begin(), prov.classes.end(),
                         [&](const storage_class& s) { return s.name == c.storage_class; });
  if (sc == prov.classes.end()) {
    out.waits.push_back({c.key(), "ProvisioningFailed", "storageclass.storage.k8s.io \"" + c.storage_class + "\" not found"});
    return;
  }
  if (sc->provisioner != local_path_provisioner) {
    out.waits.push_back({c.key(), "ExternalProvisioning",
                         "Waiting for a volume to be created either by the external provisioner '" + sc->provisioner +
                             "' or manually by the system administrator. If volume creation is delayed, please verify "
                             "that the provisioner is running and correctly registered. (kozmo local runs only " +
                             local_path_provisioner + ")"});
    return;
  }
  if (auto why = unprovisionable(c, prov)) {
    out.waits.push_back({c.key(), "ProvisioningFailed", "failed to provision volume with StorageClass \"" + sc->name +
                                                            "\": " + *why});
    return;
  }
  auto p = provision_for(c, *sc, prov);
  if (volume_by_name.count(p.volume))
    return; // made already (being deleted, or about to bind on the next pass)
  out.provisions.push_back(std::move(p));
}

} // namespace

storage_class class_from(const json::value& sc) {
  storage_class out;
  if (const json::value* meta = sc.find("metadata"))
    out.name = meta->get_string("name");
  out.provisioner = sc.get_string("provisioner");
  out.reclaim_policy = sc.get_string("reclaimPolicy", "Delete");
  return out;
}

std::optional<std::string> directory_of_deleted(const volume& v, const std::string& volumes_dir) {
  if (v.provisioned_by != local_path_provisioner || volumes_dir.empty() || v.name.empty() ||
      v.name.find('/') != std::string::npos || v.name.find("..") != std::string::npos)
    return std::nullopt;
  std::string dir = volumes_dir + "/" + v.name;
  if (v.host_path != dir)
    return std::nullopt;
  return dir;
}

claim claim_from(const json::value& pvc) {
  claim c;
  const json::value* meta = pvc.find("metadata");
  const json::value* spec = pvc.find("spec");
  if (meta) {
    c.ns = meta->get_string("namespace");
    c.name = meta->get_string("name");
    c.uid = meta->get_string("uid");
    c.resource_version = meta->get_string("resourceVersion");
  }
  if (spec) {
    c.storage_class = spec->get_string("storageClassName");
    c.access_modes = json::strings_of(spec->find("accessModes"));
    c.request = k8s::quantity_member(spec->at_path({"resources", "requests"}), "storage");
    c.volume_name = spec->get_string("volumeName");
    c.volume_mode = spec->get_string("volumeMode", "Filesystem");
    if (const json::value* sel = spec->find("selector"); sel && sel->is_object())
      if (auto s = k8s::label_selector::from_json(*sel))
        c.selector = std::move(*s);
  }
  if (const json::value* st = pvc.find("status"))
    c.phase = st->get_string("phase");
  c.deleting = deleting(pvc);
  return c;
}

volume volume_from(const json::value& pv) {
  volume v;
  const json::value* meta = pv.find("metadata");
  const json::value* spec = pv.find("spec");
  if (meta) {
    v.name = meta->get_string("name");
    v.uid = meta->get_string("uid");
    v.resource_version = meta->get_string("resourceVersion");
    if (const json::value* l = meta->find("labels"))
      v.labels = *l;
    if (const json::value* a = meta->find("annotations"); a && a->is_object())
      v.provisioned_by = a->get_string("pv.kubernetes.io/provisioned-by");
  }
  if (spec) {
    v.storage_class = spec->get_string("storageClassName");
    v.access_modes = json::strings_of(spec->find("accessModes"));
    v.capacity = k8s::quantity_member(spec->find("capacity"), "storage");
    v.volume_mode = spec->get_string("volumeMode", "Filesystem");
    v.reclaim_policy = spec->get_string("persistentVolumeReclaimPolicy", "Retain");
    if (const json::value* ref = spec->find("claimRef"); ref && ref->is_object())
      v.bound_to = claim_ref{ref->get_string("namespace"), ref->get_string("name"), ref->get_string("uid")};
    if (const json::value* hp = spec->find("hostPath"); hp && hp->is_object())
      v.host_path = hp->get_string("path");
  }
  if (const json::value* st = pv.find("status"))
    v.phase = st->get_string("phase");
  v.deleting = deleting(pv);
  return v;
}

std::optional<std::string> mismatch(const claim& c, const volume& v) {
  if (v.storage_class != c.storage_class)
    return "storageClassName does not match";
  for (const auto& m : c.access_modes)
    if (std::find(v.access_modes.begin(), v.access_modes.end(), m) == v.access_modes.end())
      return "incompatible accessMode";
  if (v.capacity < c.request)
    return "requested PV is too small";
  if (v.volume_mode != c.volume_mode)
    return "incompatible volumeMode";
  if (c.selector && !c.selector->matches(v.labels))
    return "the volume's labels do not match the claim's selector";
  return std::nullopt;
}

pass_result plan_pass(const std::vector<claim>& claims, const std::vector<volume>& volumes,
                      const provisioning& prov) {
  pass_result out;
  std::map<std::string, const claim*> claim_by_key;
  for (const auto& c : claims)
    claim_by_key[c.key()] = &c;
  std::map<std::string, const volume*> volume_by_name;
  for (const auto& v : volumes)
    volume_by_name[v.name] = &v;

  // Volumes: new ones become Available, bound ones whose claim is gone are released.
  std::set<std::string> taken; // volumes spoken for (bound, pre-bound, or bound in this pass)
  for (const auto& v : volumes) {
    if (v.deleting)
      continue;
    if (!v.bound_to) {
      if (v.phase != "Available")
        out.volume_phases.push_back({v.name, "Available", ""});
      continue;
    }
    taken.insert(v.name);
    const std::string key = v.bound_to->ns + "/" + v.bound_to->name;
    auto it = claim_by_key.find(key);
    bool claim_gone = it == claim_by_key.end() || (!v.bound_to->uid.empty() && it->second->uid != v.bound_to->uid);
    if (!claim_gone || v.bound_to->uid.empty())
      continue; // bound, or pre-bound to a claim that may come later
    if (v.reclaim_policy == "Delete") {
      out.delete_volumes.push_back(v.name);
    } else if (v.phase != "Released") {
      out.volume_phases.push_back({v.name, "Released", "the claim " + key + " was deleted"});
    }
  }

  // Claims, in the order given (the actor gives them by namespace/name).
  for (const auto& c : claims) {
    if (c.deleting)
      continue;
    if (c.phase == "Bound") {
      auto it = volume_by_name.find(c.volume_name);
      if (it == volume_by_name.end())
        out.claim_phases.push_back({c.key(), "Lost", "the volume " + c.volume_name + " was deleted"});
      continue;
    }
    if (c.phase == "Lost")
      continue;
    // A volume pre-bound to this claim.
    const volume* chosen = nullptr;
    std::string why;
    for (const auto& v : volumes)
      if (!v.deleting && v.bound_to && v.bound_to->ns == c.ns && v.bound_to->name == c.name &&
          (v.bound_to->uid.empty() || v.bound_to->uid == c.uid) && (c.volume_name.empty() || c.volume_name == v.name)) {
        if (auto m = mismatch(c, v)) {
          why = "volume " + v.name + " is bound to this claim but " + *m;
          continue;
        }
        chosen = &v;
        break;
      }
    if (!chosen && !c.volume_name.empty()) {
      auto it = volume_by_name.find(c.volume_name);
      if (it == volume_by_name.end() || it->second->deleting) {
        out.waits.push_back({c.key(), "FailedBinding", "volume \"" + c.volume_name + "\" not found"});
        continue;
      }
      const volume& v = *it->second;
      if (v.bound_to && !(v.bound_to->ns == c.ns && v.bound_to->name == c.name)) {
        out.waits.push_back({c.key(), "FailedBinding",
                             "volume \"" + v.name + "\" already bound to a different claim."});
        continue;
      }
      if (auto m = mismatch(c, v)) {
        out.waits.push_back({c.key(), "VolumeMismatch", "Cannot bind to requested volume \"" + v.name + "\": " + *m});
        continue;
      }
      chosen = &v;
    }
    if (!chosen && why.empty() && c.volume_name.empty()) {
      // The smallest free volume that fits.
      for (const auto& v : volumes) {
        if (v.deleting || v.bound_to || taken.count(v.name) || mismatch(c, v))
          continue;
        if (!chosen || v.capacity < chosen->capacity || (v.capacity == chosen->capacity && v.name < chosen->name))
          chosen = &v;
      }
    }
    if (!chosen) {
      if (!why.empty())
        out.waits.push_back({c.key(), "VolumeMismatch", why});
      else if (c.volume_name.empty() && c.storage_class.empty())
        out.waits.push_back({c.key(), "FailedBinding",
                             "no persistent volumes available for this claim and no storage class is set"});
      else if (c.volume_name.empty())
        provision_or_wait(c, prov, volume_by_name, out);
      continue;
    }
    taken.insert(chosen->name);
    out.binds.push_back({c.key(), chosen->name});
  }
  // A volume bound in this pass goes straight to Bound.
  std::erase_if(out.volume_phases, [&](const phase_change& p) {
    return std::any_of(out.binds.begin(), out.binds.end(), [&](const bind& b) { return b.volume == p.key; });
  });
  return out;
}

} // namespace kozmo::volumes
