// What a namespace uses of a ResourceQuota's resources, as kube-controller-manager's quota
// controller counts it (pkg/quota/v1/evaluator/core): pure, from the namespace's objects.
//
//   pods, count/pods                 pods that have not ended (phase not Succeeded / Failed)
//   requests.cpu, cpu, requests.memory, memory, requests.ephemeral-storage, requests.<extended>
//                                    the sum of those pods' requests (a container's limit
//                                    where it has no request; the largest init container
//                                    where it asks for more than the containers together)
//   limits.cpu, limits.memory, limits.ephemeral-storage
//                                    the sum of their limits, the same way
//   services, configmaps, secrets, persistentvolumeclaims, count/<resource>
//                                    how many there are
//   services.loadbalancers, services.nodeports
//                                    services of that type
//   requests.storage, <class>.storageclass.storage.k8s.io/requests.storage,
//   <class>.storageclass.storage.k8s.io/persistentvolumeclaims
//                                    the claims' storage requests, overall and per class
// Any other resource is reported as used 0.
#pragma once

#include "k8s/json/value.hpp"
#include "k8s/model/pod.hpp"

#include <vector>

namespace kozmo::quota {

struct namespace_objects {
  std::vector<const k8s::pod*> pods;
  std::vector<const json::value*> claims; // PersistentVolumeClaims
  std::vector<const json::value*> services;
  std::vector<const json::value*> configmaps;
  std::vector<const json::value*> secrets;
};

// status.used for a quota whose spec.hard is `hard` (an object of quantities): every key of
// `hard`, as a quantity string.
json::value used_of(const json::value& hard, const namespace_objects& objects);

} // namespace kozmo::quota
