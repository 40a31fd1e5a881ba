// Binding PersistentVolumeClaims to PersistentVolumes, as kube-controller-manager's
// PersistentVolume controller does for statically provisioned volumes (`kozmo local` has no
// storage classes and provisions nothing). Pure: given every claim and volume, one pass says
// which claim binds to which volume and which phases change; the actor writes it.
//
// The rules (pkg/controller/volume/persistentvolume):
//  - A claim binds to the smallest Available volume that satisfies it: the same storage class
//    (a claim without storageClassName asks for ""), every access mode it asks for, at least
//    its storage request, the same volumeMode, its selector matching the volume's labels, and
//    no claimRef to another claim. A claim naming spec.volumeName binds to that volume only;
//    a volume whose claimRef names a claim (pre-bound) binds to that claim only.
//  - A claim that finds none stays Pending, with an Event that says why.
//  - A new volume becomes Available; a Bound volume whose claim is gone becomes Released
//    (reclaim policy Retain, the default for volumes made by hand) or is deleted (Delete); a
//    Bound claim whose volume is gone becomes Lost.
#pragma once

#include "k8s/json/value.hpp"
#include "k8s/model/quantity.hpp"
#include "k8s/model/selector.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kozmo::volumes {

struct claim {
  std::string ns, name, uid, resource_version;
  std::string storage_class;
  std::vector<std::string> access_modes;
  k8s::quantity request;
  std::string volume_name; // spec.volumeName
  std::string volume_mode = "Filesystem";
  std::string phase;       // status.phase
  std::optional<k8s::label_selector> selector;
  bool deleting = false;
  std::string key() const { return ns + "/" + name; }
};

struct claim_ref {
  std::string ns, name, uid;
};

struct volume {
  std::string name, uid, resource_version;
  std::string storage_class;
  std::vector<std::string> access_modes;
  k8s::quantity capacity;
  std::string volume_mode = "Filesystem";
  std::string reclaim_policy = "Retain";
  std::string phase;
  json::value labels; // metadata.labels (object or null)
  std::optional<claim_ref> bound_to; // spec.claimRef
  bool deleting = false;
};

claim claim_from(const json::value& pvc);
volume volume_from(const json::value& pv);

struct bind {
  std::string claim_key;  // ns/name
  std::string volume;
};

struct phase_change {
  std::string key;   // a claim's ns/name, or a volume's name
  std::string phase; // "Available", "Released", "Lost", ...
  std::string message;
};

struct claim_wait {
  std::string claim_key;
  std::string reason;  // "FailedBinding", "VolumeMismatch"
  std::string message; // as Kubernetes says it
};

struct pass_result {
  std::vector<bind> binds;
  std::vector<phase_change> volume_phases;
  std::vector<phase_change> claim_phases;
  std::vector<std::string> delete_volumes; // reclaim policy Delete, claim gone
  std::vector<claim_wait> waits;
};

// One pass over everything. Claims and volumes being deleted are left alone.
pass_result plan_pass(const std::vector<claim>& claims, const std::vector<volume>& volumes);

// Whether `v` can hold `c` (all but the claimRef and phase rules); when not, why.
std::optional<std::string> mismatch(const claim& c, const volume& v);

} // namespace kozmo::volumes
