#include "actors/training/pod_health.hpp"

#include "actors/demystify/demystify.hpp"
#include "actors/training/pod_builder.hpp"

#include <charconv>

namespace kozmo::training {

std::optional<int> replica_index_of(const k8s::object_meta& meta) {
  auto it = meta.labels.find(label::replica_index);
  if (it == meta.labels.end())
    return std::nullopt;
  int n = 0;
  const std::string& s = it->second;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || ec != std::errc{} || ptr != s.data() + s.size() || n < 0)
    return std::nullopt;
  return n;
}

std::string replica_type_of(const k8s::object_meta& meta) {
  auto it = meta.labels.find(label::replica_type);
  return it == meta.labels.end() ? std::string{} : lower_type(it->second);
}

int main_exit_code(const k8s::pod& pod, std::string_view default_container) {
  for (const auto& cs : pod.status.container_statuses)
    if (cs.name == default_container && cs.state.terminated)
      return cs.state.terminated->exit_code;
  return unknown_exit_code;
}

bool restarts_after_failure(restart_policy policy, int exit_code) {
  switch (policy) {
  case restart_policy::always:
  case restart_policy::on_failure: return true;
  case restart_policy::exit_code: return is_retryable_exit_code(exit_code);
  case restart_policy::never: return false;
  }
  return false;
}

int container_restarts(const k8s::pod& pod) {
  int n = 0;
  for (const auto& cs : pod.status.init_container_statuses)
    n += cs.restart_count;
  for (const auto& cs : pod.status.container_statuses)
    n += cs.restart_count;
  return n;
}

std::optional<stuck_pod> stuck_reason(const k8s::pod& pod) {
  if (pod.status.phase != "Pending" && !pod.status.phase.empty())
    return std::nullopt;
  const std::string& name = pod.metadata.name;
  auto check = [&](const std::vector<k8s::container_status>& list) -> std::optional<stuck_pod> {
    for (const auto& cs : list) {
      if (!cs.state.waiting)
        continue;
      const std::string& r = cs.state.waiting->reason;
      std::string detail = cs.state.waiting->message.empty() ? "" : " (" + cs.state.waiting->message + ")";
      // What a waiting reason means is demystify's (shared with the task plugins); a replica that
      // pulls (ErrImagePull, which turns into ImagePullBackOff) counts as stuck at once here.
      auto kind = demystify::classify_waiting(r);
      if (kind == demystify::waiting_class::image_pull || r == "ErrImagePull")
        return stuck_pod{r, "pod " + name + ": container " + cs.name + " cannot pull its image" + detail +
                                "; check the image name and tag and the pod's imagePullSecrets"};
      if (kind == demystify::waiting_class::invalid_image)
        return stuck_pod{r, "pod " + name + ": container " + cs.name + " has an invalid image name" + detail +
                                "; fix the image in the replica template"};
      if (kind == demystify::waiting_class::config_error)
        return stuck_pod{r, "pod " + name + ": container " + cs.name + " cannot be configured" + detail +
                                "; check the ConfigMaps and Secrets its env and volumes refer to"};
    }
    return std::nullopt;
  };
  if (auto s = check(pod.status.init_container_statuses))
    return s;
  if (auto s = check(pod.status.container_statuses))
    return s;
  for (const auto& c : pod.status.conditions) {
    if (c.type != "PodScheduled" || c.status != "False")
      continue;
    std::string detail = c.message.empty() ? "" : ": " + c.message;
    return stuck_pod{"Unschedulable", "pod " + name + " cannot be scheduled" + detail +
                                          "; lower the resources it asks for or check the queue's capacity",
                     true};
  }
  return std::nullopt;
}

} // namespace kozmo::training
