// How a pod (and a node) enters the GPU scheduler: the one reading of a Kubernetes pod into the core's
// pod_view, shared by direct mode (the scheduler actor) and the extender, so that both accept
// the same pods with the same defaults and refuse the same ones with the same messages. Pure.
//
// Defaults (Kozmo's flat keys; HiveD's annotation is taken as written):
//  - the virtual cluster is `default_virtual_cluster` when kozmo.io/virtual-cluster is absent;
//  - the pod's GPUs are the sum of its containers' GPU limits (requests when no limit), else
//    the size of the gang's only member;
//  - a pod with no scheduling key at all is a gang of one ("<ns>/<pod>").
// A pod that asks for no GPU at all, or whose keys cannot be read, is an error (reason
// "BadRequest") whose message names the field.
#pragma once

#include "actors/scheduler/scheduler_core.hpp"
#include "k8s/model/node.hpp"
#include "k8s/model/pod.hpp"

#include <string>

namespace kozmo::scheduler {

struct intake_options {
  std::string default_virtual_cluster = "default";
  std::string gpu_resource = "nvidia.com/gpu";
};

// The GPUs a pod's containers ask for (limits, else requests).
int gpu_request(const k8s::pod& pod, const std::string& gpu_resource);

expected<pod_view> pod_view_of(const k8s::pod& pod, const intake_options& opts);

// The GPUs a bound pod holds on its node, as the kubelet admits it: the larger of its
// containers' sum and its largest init container (limits, else requests).
int gpus_held(const k8s::pod& pod, const std::string& gpu_resource);

// A pod that has finished (Succeeded / Failed) holds no GPU any more.
bool finished(const k8s::pod& pod);

// A node's GPUs may take new pods while it is Ready=True and schedulable (HiveD's health).
bool node_healthy(const k8s::node& node);

// The virtual cluster of pods that name none: "default", or the only VC of the configuration.
std::string default_virtual_cluster(std::string_view config_yaml);

} // namespace kozmo::scheduler
