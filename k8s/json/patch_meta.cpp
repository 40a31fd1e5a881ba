// The patch metadata of the built-in kinds, transcribed from the Go struct tags of
// k8s.io/api core/v1, k8s.io/apimachinery meta/v1 and coordination/v1
// (see shared/reference/strategic-merge-patch.md §1).
#include "k8s/json/patch_meta.hpp"

namespace kozmo::json::smp {
namespace {

bool has_strategy(std::string_view strategies, std::string_view wanted) {
  while (!strategies.empty()) {
    auto comma = strategies.find(',');
    if (strategies.substr(0, comma) == wanted)
      return true;
    if (comma == std::string_view::npos)
      break;
    strategies.remove_prefix(comma + 1);
  }
  return false;
}

// Every kind with ObjectMeta gets these.
field_meta metadata() { return {"metadata", "", "", "ObjectMeta"}; }

patch_schema make_builtin_schema() {
  std::vector<type_meta> types = {
      // --- meta/v1 ---
      {"ObjectMeta",
       {
           {"ownerReferences", "merge", "uid", ""},
           {"finalizers", "merge", "", ""},
           // managedFields: no tag, replaced.
       }},

      // --- kinds ---
      {"Pod", {metadata(), {"spec", "", "", "PodSpec"}, {"status", "", "", "PodStatus"}}},
      {"Node", {metadata(), {"spec", "", "", "NodeSpec"}, {"status", "", "", "NodeStatus"}}},
      {"Service", {metadata(), {"spec", "", "", "ServiceSpec"}, {"status", "", "", "ServiceStatus"}}},
      {"Namespace", {metadata(), {"status", "", "", "NamespaceStatus"}}}, // spec.finalizers: no tag
      {"PodTemplate", {metadata(), {"template", "", "", "PodTemplateSpec"}}},
      {"ServiceAccount", {metadata(), {"secrets", "merge", "name", ""}}}, // imagePullSecrets: no tag
      // No tagged lists of their own: Event (involvedObject, source, series, related are structs),
      // Lease (LeaseSpec is scalars), Endpoints (subsets has no tag).
      {"ConfigMap", {metadata()}},
      {"Secret", {metadata()}},
      {"Event", {metadata()}},
      {"Lease", {metadata()}},
      {"Endpoints", {metadata()}},

      // --- core/v1 building blocks ---
      {"PodTemplateSpec", {metadata(), {"spec", "", "", "PodSpec"}}},
      {"PodSpec",
       {
           {"volumes", "merge,retainKeys", "name", ""},
           {"initContainers", "merge", "name", "Container"},
           {"containers", "merge", "name", "Container"},
           {"ephemeralContainers", "merge", "name", "Container"}, // EphemeralContainerCommon has Container's tags
           {"imagePullSecrets", "merge", "name", ""},
           {"hostAliases", "merge", "ip", ""},
           {"topologySpreadConstraints", "merge", "topologyKey", ""},
           {"schedulingGates", "merge", "name", ""},
           {"resourceClaims", "merge,retainKeys", "name", ""},
           // tolerations, readinessGates, affinity terms, securityContext lists: no tag, replaced.
       }},
      {"Container",
       {
           {"ports", "merge", "containerPort", ""},
           {"env", "merge", "name", ""},
           {"volumeMounts", "merge", "mountPath", ""},
           {"volumeDevices", "merge", "devicePath", ""},
           // command, args, envFrom, resizePolicy, resources.claims: no tag, replaced.
       }},
      {"PodStatus",
       {
           {"conditions", "merge", "type", ""},
           {"podIPs", "merge", "ip", ""},
           {"hostIPs", "merge", "ip", ""},
           {"resourceClaimStatuses", "merge,retainKeys", "name", ""},
           // containerStatuses and friends have no tag: replaced whole, so the tags inside
           // ContainerStatus (volumeMounts, allocatedResourcesStatus) never come into play.
       }},
      {"NodeSpec", {{"podCIDRs", "merge", "", ""}}}, // taints: no tag, replaced
      {"NodeStatus",
       {
           {"conditions", "merge", "type", ""},
           {"addresses", "merge", "type", ""},
           // images, volumesInUse, volumesAttached: no tag, replaced.
       }},
      {"ServiceSpec", {{"ports", "merge", "port", ""}}},
      {"ServiceStatus", {{"conditions", "merge", "type", ""}}},
      {"NamespaceStatus", {{"conditions", "merge", "type", ""}}},
  };
  return patch_schema(std::move(types));
}

} // namespace

bool field_meta::merges() const { return has_strategy(strategy, "merge"); }
bool field_meta::replaces() const { return has_strategy(strategy, "replace"); }

const field_meta* type_meta::field(std::string_view json_name) const {
  for (const auto& f : fields)
    if (f.name == json_name)
      return &f;
  return nullptr;
}

const type_meta* patch_schema::type(std::string_view name) const {
  if (name.empty())
    return nullptr;
  for (const auto& t : types_)
    if (t.name == name)
      return &t;
  return nullptr;
}

const patch_schema& builtin_schema() {
  static const patch_schema schema = make_builtin_schema();
  return schema;
}

} // namespace kozmo::json::smp
