#include "k8s/apiserver/field_schema.hpp"
#include "k8s/apiserver/structural.hpp"
#include "k8s/apiserver/transition_rules.hpp"

#include <map>
#include <mutex>
#include <sstream>

namespace kozmo::apiserver {
namespace {

// The fields of the Go types (k8s.io/api v0.32). "name:Type" is a struct field, "name:[]Type"
// a list of structs, a bare name an opaque value (scalar, map, or a struct we do not detail).
constexpr std::string_view builtin_types = R"(
ObjectMeta: name generateName namespace selfLink uid resourceVersion generation creationTimestamp deletionTimestamp deletionGracePeriodSeconds labels annotations ownerReferences:[]OwnerReference finalizers managedFields
OwnerReference: apiVersion kind name uid controller blockOwnerDeletion
ObjectReference: kind namespace name uid apiVersion resourceVersion fieldPath
Pod: apiVersion kind metadata:ObjectMeta spec:PodSpec status
PodSpec: volumes initContainers:[]Container containers:[]Container ephemeralContainers restartPolicy terminationGracePeriodSeconds activeDeadlineSeconds dnsPolicy nodeSelector serviceAccountName serviceAccount automountServiceAccountToken nodeName hostNetwork hostPID hostIPC shareProcessNamespace securityContext imagePullSecrets hostname subdomain affinity schedulerName tolerations hostAliases priorityClassName priority dnsConfig readinessGates runtimeClassName enableServiceLinks preemptionPolicy overhead topologySpreadConstraints setHostnameAsFQDN os hostUsers schedulingGates resourceClaims resources
Container: name image command args workingDir ports:[]ContainerPort envFrom env:[]EnvVar resources:ResourceRequirements resizePolicy restartPolicy volumeMounts:[]VolumeMount volumeDevices livenessProbe readinessProbe startupProbe lifecycle terminationMessagePath terminationMessagePolicy imagePullPolicy securityContext stdin stdinOnce tty
ContainerPort: name hostPort containerPort protocol hostIP
EnvVar: name value valueFrom
VolumeMount: name readOnly recursiveReadOnly mountPath subPath mountPropagation subPathExpr
ResourceRequirements: limits requests claims
PodTemplate: apiVersion kind metadata:ObjectMeta template:PodTemplateSpec
PodTemplateSpec: metadata:ObjectMeta spec:PodSpec
Node: apiVersion kind metadata:ObjectMeta spec:NodeSpec status
NodeSpec: podCIDR podCIDRs providerID unschedulable taints configSource externalID
Service: apiVersion kind metadata:ObjectMeta spec:ServiceSpec status
ServiceSpec: ports:[]ServicePort selector clusterIP clusterIPs type externalIPs sessionAffinity loadBalancerIP loadBalancerSourceRanges externalName externalTrafficPolicy healthCheckNodePort publishNotReadyAddresses sessionAffinityConfig ipFamilies ipFamilyPolicy allocateLoadBalancerNodePorts loadBalancerClass internalTrafficPolicy trafficDistribution
ServicePort: name protocol appProtocol port targetPort nodePort
ConfigMap: apiVersion kind metadata:ObjectMeta data binaryData immutable
Secret: apiVersion kind metadata:ObjectMeta data stringData type immutable
Namespace: apiVersion kind metadata:ObjectMeta spec:NamespaceSpec status
NamespaceSpec: finalizers
Event: apiVersion kind metadata:ObjectMeta involvedObject:ObjectReference reason message source firstTimestamp lastTimestamp count type eventTime series action related:ObjectReference reportingComponent reportingInstance
Lease: apiVersion kind metadata:ObjectMeta spec:LeaseSpec
LeaseSpec: holderIdentity leaseDurationSeconds acquireTime renewTime leaseTransitions strategy preferredHolder
Endpoints: apiVersion kind metadata:ObjectMeta subsets
ServiceAccount: apiVersion kind metadata:ObjectMeta secrets imagePullSecrets automountServiceAccountToken
CustomResourceDefinition: apiVersion kind metadata:ObjectMeta spec:CustomResourceDefinitionSpec status
CustomResourceDefinitionSpec: group names scope versions conversion preserveUnknownFields
Binding: apiVersion kind metadata:ObjectMeta target:ObjectReference
PersistentVolumeClaim: apiVersion kind metadata:ObjectMeta spec:PersistentVolumeClaimSpec status
PersistentVolumeClaimSpec: accessModes selector resources volumeName storageClassName volumeMode dataSource dataSourceRef volumeAttributesClassName
PersistentVolume: apiVersion kind metadata:ObjectMeta spec:PersistentVolumeSpec status
PersistentVolumeSpec: capacity accessModes claimRef:ObjectReference persistentVolumeReclaimPolicy storageClassName mountOptions volumeMode nodeAffinity volumeAttributesClassName hostPath nfs local csi iscsi cephfs rbd fc flexVolume azureFile azureDisk cinder flocker glusterfs portworxVolume quobyte scaleIO storageos vsphereVolume photonPersistentDisk gcePersistentDisk awsElasticBlockStore
ResourceQuota: apiVersion kind metadata:ObjectMeta spec:ResourceQuotaSpec status
ResourceQuotaSpec: hard scopes scopeSelector
LimitRange: apiVersion kind metadata:ObjectMeta spec:LimitRangeSpec
LimitRangeSpec: limits:[]LimitRangeItem
LimitRangeItem: type max min default defaultRequest maxLimitRequestRatio
Role: apiVersion kind metadata:ObjectMeta rules:[]PolicyRule
PolicyRule: verbs apiGroups resources resourceNames nonResourceURLs
RoleBinding: apiVersion kind metadata:ObjectMeta subjects:[]Subject roleRef:RoleRef
Subject: kind apiGroup name namespace
RoleRef: apiGroup kind name
StorageClass: apiVersion kind metadata:ObjectMeta provisioner parameters reclaimPolicy mountOptions allowVolumeExpansion volumeBindingMode allowedTopologies
)";

struct field_type {
  std::string type;  // struct name, "" = opaque
  bool list = false;
};
using struct_fields = std::map<std::string, field_type, std::less<>>;

const std::map<std::string, struct_fields, std::less<>>& type_table() {
  static const auto table = [] {
    std::map<std::string, struct_fields, std::less<>> t;
    std::istringstream in{std::string(builtin_types)};
    std::string line;
    while (std::getline(in, line)) {
      auto colon = line.find(": ");
      if (colon == std::string::npos)
        continue;
      struct_fields fields;
      std::istringstream words(line.substr(colon + 2));
      std::string w;
      while (words >> w) {
        auto c = w.find(':');
        field_type ft;
        if (c != std::string::npos) {
          std::string ty = w.substr(c + 1);
          ft.list = ty.rfind("[]", 0) == 0;
          ft.type = ft.list ? ty.substr(2) : ty;
          w = w.substr(0, c);
        }
        fields[w] = ft;
      }
      t[line.substr(0, colon)] = std::move(fields);
    }
    return t;
  }();
  return table;
}

std::string join_path(const std::string& base, std::string_view key) {
  return base.empty() ? std::string(key) : base + "." + std::string(key);
}

void walk_builtin(const std::string& type, json::value& v, const std::string& path, bool prune,
                  std::vector<std::string>& unknown) {
  const auto& table = type_table();
  auto it = table.find(type);
  if (it == table.end() || !v.is_object())
    return;
  auto& members = v.as_object();
  std::vector<std::string> drop;
  for (auto& [key, child] : members) {
    auto f = it->second.find(key);
    if (f == it->second.end()) {
      unknown.push_back(join_path(path, key));
      drop.push_back(key);
      continue;
    }
    if (f->second.type.empty())
      continue;
    if (f->second.list) {
      if (!child.is_array())
        continue;
      auto& arr = child.as_array();
      for (std::size_t i = 0; i < arr.size(); ++i)
        walk_builtin(f->second.type, arr[i], join_path(path, key) + "[" + std::to_string(i) + "]", prune, unknown);
    } else {
      walk_builtin(f->second.type, child, join_path(path, key), prune, unknown);
    }
  }
  if (prune)
    for (const auto& key : drop)
      members.erase(key);
}

// ---- structural schemas (CRDs) -------------------------------------------------------------

bool preserves(const json::value& schema) { return schema.get_bool("x-kubernetes-preserve-unknown-fields"); }

void walk_schema(const json::value& schema, json::value& v, const std::string& path, bool prune,
                 std::vector<std::string>& unknown) {
  if (!schema.is_object())
    return;
  if (v.is_object()) {
    const json::value* props = schema.find("properties");
    const json::value* additional = schema.find("additionalProperties");
    bool open = preserves(schema) || (additional && additional->is_bool() && additional->as_bool());
    if (schema.get_bool("x-kubernetes-embedded-resource"))
      open = open || !props;
    if (!props && !additional && (schema.get_string("type").empty() || preserves(schema)))
      open = true;
    auto& members = v.as_object();
    std::vector<std::string> drop;
    for (auto& [key, child] : members) {
      const json::value* sub = props && props->is_object() ? props->find(key) : nullptr;
      if (sub) {
        walk_schema(*sub, child, join_path(path, key), prune, unknown);
        continue;
      }
      if (additional && additional->is_object()) {
        walk_schema(*additional, child, join_path(path, key), prune, unknown);
        continue;
      }
      if (schema.get_bool("x-kubernetes-embedded-resource") && (key == "apiVersion" || key == "kind" || key == "metadata"))
        continue;
      if (open)
        continue;
      unknown.push_back(join_path(path, key));
      drop.push_back(key);
    }
    if (prune)
      for (const auto& key : drop)
        members.erase(key);
    return;
  }
  if (v.is_array()) {
    const json::value* items = schema.find("items");
    if (!items)
      return;
    auto& arr = v.as_array();
    for (std::size_t i = 0; i < arr.size(); ++i)
      walk_schema(*items, arr[i], path + "[" + std::to_string(i) + "]", prune, unknown);
  }
}

json::value openapi_of(const std::string& type, int depth) {
  const auto& table = type_table();
  auto it = table.find(type);
  if (it == table.end() || depth > 8)
    return json::object{{"x-kubernetes-preserve-unknown-fields", true}};
  json::object props;
  for (const auto& [name, ft] : it->second) {
    json::value sub = ft.type.empty() ? json::value(json::object{{"x-kubernetes-preserve-unknown-fields", true}})
                                      : openapi_of(ft.type, depth + 1);
    if (ft.list)
      sub = json::object{{"type", "array"}, {"items", sub}};
    props.set(name, std::move(sub));
  }
  return json::object{{"type", "object"}, {"properties", std::move(props)}};
}

} // namespace

std::vector<std::string> find_unknown_fields(const resource_type& rt, std::string_view version, json::value& obj,
                                             bool prune) {
  std::vector<std::string> unknown;
  if (!obj.is_object())
    return unknown;
  if (rt.builtin) {
    walk_builtin(rt.kind, obj, "", prune, unknown);
    return unknown;
  }
  const crd_version* cv = rt.crd_version_of(version);
  if (!cv || cv->schema.is_null())
    return unknown;
  // apiVersion, kind and metadata are always allowed; metadata is checked as ObjectMeta.
  auto& members = obj.as_object();
  std::vector<std::string> drop;
  const json::value* props = cv->schema.find("properties");
  for (auto& [key, child] : members) {
    if (key == "apiVersion" || key == "kind")
      continue;
    if (key == "metadata") {
      walk_builtin("ObjectMeta", child, "metadata", prune, unknown);
      continue;
    }
    const json::value* sub = props && props->is_object() ? props->find(key) : nullptr;
    if (sub) {
      walk_schema(*sub, child, key, prune, unknown);
      continue;
    }
    if (preserves(cv->schema))
      continue;
    unknown.push_back(key);
    drop.push_back(key);
  }
  if (prune)
    for (const auto& key : drop)
      members.erase(key);
  return unknown;
}

std::vector<field_error> validate_custom_resource(const resource_type& rt, std::string_view version, json::value& obj,
                                                  const json::value* old) {
  const crd_version* cv = rt.crd_version_of(version);
  if (!cv || cv->schema.is_null() || !obj.is_object())
    return {};
  default_custom_resource(cv->schema, obj);
  auto errs = check_custom_resource(cv->schema, obj);
  if (old && old->is_object()) {
    auto transitions = check_transition_rules(cv->schema, obj, *old);
    errs.insert(errs.end(), transitions.begin(), transitions.end());
  }
  return errs;
}

json::value builtin_openapi_schema(std::string_view kind) {
  if (!type_table().count(kind))
    return nullptr;
  return openapi_of(std::string(kind), 0);
}

} // namespace kozmo::apiserver
