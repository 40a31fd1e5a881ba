// A kubelet's admission of a pod bound to its node: what the pod asks for against what the
// node has left, checked before anything runs. Two schedulers (the first-fit binder and Kozmo's
// GPU scheduler) may fill the same free GPUs at the same instant; a real kubelet refuses the pod
// that does not fit, and so does the simulated one. Pure: no CAF, no I/O.
//
// A refused pod is Failed with the kubelet's reason ("OutOfnvidia.com/gpu", "OutOfcpu",
// "OutOfmemory", "OutOfpods") and message ("Node didn't have enough resource: nvidia.com/gpu,
// requested: 4, used: 8, capacity: 8"); a Warning Event says the same.
#pragma once

#include "actors/kubelet/cluster_shape.hpp"
#include "k8s/model/pod.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace kozmo::kubelet {

struct resource_need {
  std::int64_t gpus = 0;
  std::int64_t milli_cpu = 0;
  std::int64_t memory_bytes = 0;
  std::int64_t pods = 0;

  resource_need& operator+=(const resource_need& o) {
    gpus += o.gpus;
    milli_cpu += o.milli_cpu;
    memory_bytes += o.memory_bytes;
    pods += o.pods;
    return *this;
  }
};

// What a pod asks for, as the scheduler and the kubelet count it: per resource the sum over its
// containers (the request, else the limit), or its largest init container if that is more; one pod.
resource_need need_of(const k8s::pod& pod);

// The node's allocatable resources (its shape: GPUs, cpu, memory, pods).
resource_need capacity_of(const node_shape& node);

struct admission_refusal {
  std::string reason;  // "OutOfnvidia.com/gpu"
  std::string message; // "Node didn't have enough resource: nvidia.com/gpu, requested: 4, used: 8, capacity: 8"
};

// nullopt: the pod fits beside the pods already admitted (`used`); else why not, for the first
// resource that is short (GPUs first: what this simulation is about).
std::optional<admission_refusal> admit(const resource_need& pod, const resource_need& used,
                                       const resource_need& capacity);

} // namespace kozmo::kubelet
