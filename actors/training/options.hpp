// Settings of the training job controller (configuration, passed in; no globals).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace kozmo::training {

// schedulingPolicy.priorityClass → kozmo.io/priority. A class name that parses as an
// integer is used as it is (clamped to -1..1000); a name in this table maps to its value;
// anything else is 0.
inline std::map<std::string, int> default_priority_classes() {
  return {
      {"opportunistic", -1},          {"low", 0},    {"normal", 100}, {"high", 500}, {"critical", 1000},
      {"system-cluster-critical", 1000}, {"system-node-critical", 1000},
  };
}

struct options {
  // schedulerName written on pods that ask for GPUs (unless their template names one).
  std::string scheduler_name = "kozmo";
  // kozmo.io/virtual-cluster when schedulingPolicy.queue is empty.
  std::string default_virtual_cluster = "default";
  std::map<std::string, int> priority_classes = default_priority_classes();
  // "" → services are addressed as <svc>.<ns>.svc; "cluster.local" → <svc>.<ns>.svc.cluster.local.
  std::string cluster_domain;
  // How long a pod may sit in ImagePullBackOff / ErrImagePull / InvalidImageName /
  // CreateContainerConfigError before the job fails.
  std::chrono::seconds image_error_grace{300};
  // How long a pod may stay unschedulable (PodScheduled=False) before the job fails;
  // schedulingPolicy.scheduleTimeoutSeconds overrides it per job; nullopt = wait forever.
  std::optional<std::chrono::seconds> unschedulable_grace{std::chrono::seconds{300}};
  // Jobs with spec.runPolicy.managedBy set to something else are left alone.
  std::string managed_by = "kubeflow.org/training-operator";
  // The MPIJob launcher's init container that copies kubectl to /opt/kube and waits for the
  // workers (the peer's --mpi-kubectl-delivery-image).
  std::string mpi_kubectl_delivery_image = "kubeflow/kubectl-delivery:latest";
  // The most replicas one replica type may ask for, per kind ("PyTorchJob"); a kind not named
  // takes default_max_replicas. A job over it fails at once (InvalidSpec), before anything is
  // sized by the number. deploy/crds says 10000 too, so kube-apiserver refuses larger ones.
  int default_max_replicas = 10000;
  std::map<std::string, int> max_replicas;
  int max_replicas_for(const std::string& kind) const {
    auto it = max_replicas.find(kind);
    return it == max_replicas.end() ? default_max_replicas : it->second;
  }
  // Pods and services one pass creates at most, as kube-controller-manager's ReplicaSet
  // controller bounds a sync (burstReplicas, 500): a job of thousands of replicas is created
  // over several passes, and one that is deleted meanwhile stops within one of them.
  int max_creates_per_pass = 500;
};

} // namespace kozmo::training
