#include "actors/scheduler/pod_intake.hpp"

#include "actors/scheduler/config.hpp"

#include <algorithm>

namespace kozmo::scheduler {

namespace {

int container_gpus(const k8s::container& c, const std::string& gpu_resource) {
  auto count = [&](const auto& list) {
    auto it = list.find(gpu_resource);
    return it == list.end() ? 0 : static_cast<int>(it->second.value());
  };
  int n = count(c.resources.limits);
  return n > 0 ? n : count(c.resources.requests);
}

} // namespace

int gpu_request(const k8s::pod& pod, const std::string& gpu_resource) {
  int gpus = 0;
  for (const auto& c : pod.spec.containers)
    gpus += container_gpus(c, gpu_resource);
  return gpus;
}

int gpus_held(const k8s::pod& pod, const std::string& gpu_resource) {
  int gpus = gpu_request(pod, gpu_resource);
  for (const auto& c : pod.spec.init_containers)
    gpus = std::max(gpus, container_gpus(c, gpu_resource));
  return gpus;
}

bool finished(const k8s::pod& pod) { return pod.status.phase == "Succeeded" || pod.status.phase == "Failed"; }

bool node_healthy(const k8s::node& node) {
  bool ready = false;
  for (const auto& c : node.status.conditions)
    if (c.type == "Ready")
      ready = c.status == "True";
  return ready && !node.spec.unschedulable;
}

expected<pod_view> pod_view_of(const k8s::pod& pod, const intake_options& opts) {
  const auto& meta = pod.metadata;
  std::map<std::string, std::string> annotations(meta.annotations.begin(), meta.annotations.end());
  spec_defaults defaults{opts.default_virtual_cluster, gpu_request(pod, opts.gpu_resource)};
  auto spec = parse_pod_scheduling_spec(annotations, meta.namespace_, meta.name, &defaults);
  if (!spec)
    return spec.err();
  pod_view v;
  v.ref = {meta.namespace_, meta.name, meta.uid};
  v.spec = std::move(*spec);
  v.node = pod.spec.node_name;
  if (auto it = annotations.find(bind_info_annotation); it != annotations.end())
    v.bind_info = it->second;
  if (meta.creation_timestamp)
    v.created_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(meta.creation_timestamp->time_since_epoch()).count();
  return v;
}

std::string default_virtual_cluster(std::string_view config_yaml) {
  auto parsed = parse_config(config_yaml);
  if (parsed && parsed->virtual_clusters.size() == 1 && !parsed->virtual_clusters.count("default"))
    return parsed->virtual_clusters.begin()->first;
  return "default";
}

} // namespace kozmo::scheduler
