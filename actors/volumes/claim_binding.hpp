// Binding PersistentVolumeClaims to PersistentVolumes, as kube-controller-manager's
// PersistentVolume controller does, and provisioning volumes for claims of a StorageClass whose
// provisioner is kozmo.io/local-path (what kind's and minikube's local-path provisioners do: a
// directory on the host per claim). Pure: given every claim, volume and class, one pass says
// which claim binds to which volume, which volumes to make, and which phases change; the actor
// writes it.
//
// The rules (pkg/controller/volume/persistentvolume):
//  - A claim binds to the smallest Available volume that satisfies it: the same storage class
//    (a claim without storageClassName asks for ""), every access mode it asks for, at least
//    its storage request, the same volumeMode, its selector matching the volume's labels, and
//    no claimRef to another claim. A claim naming spec.volumeName binds to that volume only;
//    a volume whose claimRef names a claim (pre-bound) binds to that claim only.
//  - A claim that finds none, of a class whose provisioner is kozmo.io/local-path, gets a new
//    volume `pvc-<claim uid>`: hostPath `<volumes dir>/pvc-<uid>`, capacity its request, its
//    access modes and class, the class's reclaim policy, claimRef to it (pre-bound, so it binds
//    to this claim only on the next pass), annotated pv.kubernetes.io/provisioned-by. Refused
//    (ProvisioningFailed): no volumes dir, a selector, volumeMode Block, a request over the
//    provisioner's limit. A class of another provisioner: ExternalProvisioning, as Kubernetes
//    says it; a class that does not exist: ProvisioningFailed.
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
  std::string provisioned_by;        // annotation pv.kubernetes.io/provisioned-by
  std::string host_path;             // spec.hostPath.path
  bool deleting = false;
};

struct storage_class {
  std::string name;
  std::string provisioner;
  std::string reclaim_policy = "Delete";
};

// The provisioner `kozmo local` runs, and the largest request it accepts (capacity is a label
// on a directory, never allocated; the bound keeps nonsense out of the volume's spec).
inline constexpr const char* local_path_provisioner = "kozmo.io/local-path";
inline constexpr const char* max_local_path_request = "1Pi";

struct provisioning {
  std::vector<storage_class> classes;
  std::string volumes_dir; // where volumes' directories go; "" = nowhere (provision nothing)
};

claim claim_from(const json::value& pvc);
volume volume_from(const json::value& pv);
storage_class class_from(const json::value& sc);

struct bind {
  std::string claim_key;  // ns/name
  std::string volume;
};

struct phase_change {
  std::string key;   // a claim's ns/name, or a volume's name
  std::string phase; // "Available", "Released", "Lost", ...
  std::string message;
};

// A volume to create for a claim (the PersistentVolume's JSON, ready to POST).
struct provision {
  std::string claim_key;
  std::string volume;      // pvc-<claim uid>
  std::string directory;   // its hostPath
  json::value object;
};

struct claim_wait {
  std::string claim_key;
  std::string reason;  // "FailedBinding", "VolumeMismatch", "ProvisioningFailed", "ExternalProvisioning"
  std::string message; // as Kubernetes says it
};

struct pass_result {
  std::vector<bind> binds;
  std::vector<provision> provisions;
  std::vector<phase_change> volume_phases;
  std::vector<phase_change> claim_phases;
  std::vector<std::string> delete_volumes; // reclaim policy Delete, claim gone
  std::vector<claim_wait> waits;
};

// One pass over everything. Claims and volumes being deleted are left alone.
pass_result plan_pass(const std::vector<claim>& claims, const std::vector<volume>& volumes,
                      const provisioning& prov = {});

// The directory to remove once volume `v` is deleted: only a volume this provisioner made,
// whose hostPath is exactly `<volumes_dir>/<its name>` (never a directory a user named).
std::optional<std::string> directory_of_deleted(const volume& v, const std::string& volumes_dir);

// Whether `v` can hold `c` (all but the claimRef and phase rules); when not, why.
std::optional<std::string> mismatch(const claim& c, const volume& v);

} // namespace kozmo::volumes
