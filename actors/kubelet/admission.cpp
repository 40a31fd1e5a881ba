#include "actors/kubelet/admission.hpp"

#include "k8s/model/quantity.hpp"

#include <algorithm>

namespace kozmo::kubelet {
namespace {

k8s::quantity amount(const k8s::container& c, const std::string& name) {
  if (auto it = c.resources.requests.find(name); it != c.resources.requests.end())
    return it->second;
  if (auto it = c.resources.limits.find(name); it != c.resources.limits.end())
    return it->second;
  return {};
}

std::int64_t quantity_of(const std::string& text, bool milli) {
  auto q = k8s::quantity::parse(text);
  if (!q)
    return 0;
  return milli ? q->milli_value() : q->value();
}

} // namespace

resource_need need_of(const k8s::pod& pod) {
  resource_need need;
  for (const auto& c : pod.spec.containers) {
    need.gpus += amount(c, "nvidia.com/gpu").value();
    need.milli_cpu += amount(c, "cpu").milli_value();
    need.memory_bytes += amount(c, "memory").value();
  }
  for (const auto& c : pod.spec.init_containers) {
    need.gpus = std::max(need.gpus, amount(c, "nvidia.com/gpu").value());
    need.milli_cpu = std::max(need.milli_cpu, amount(c, "cpu").milli_value());
    need.memory_bytes = std::max(need.memory_bytes, amount(c, "memory").value());
  }
  need.pods = 1;
  return need;
}

resource_need capacity_of(const node_shape& node) {
  resource_need cap;
  cap.gpus = node.gpus;
  cap.milli_cpu = quantity_of(node.cpu, true);
  cap.memory_bytes = quantity_of(node.memory, false);
  cap.pods = quantity_of(node.pods, false);
  return cap;
}

std::optional<admission_refusal> admit(const resource_need& pod, const resource_need& used,
                                       const resource_need& capacity) {
  struct check {
    const char* name;
    std::int64_t requested, used, capacity;
  };
  for (const check& c : {check{"nvidia.com/gpu", pod.gpus, used.gpus, capacity.gpus},
                         check{"cpu", pod.milli_cpu, used.milli_cpu, capacity.milli_cpu},
                         check{"memory", pod.memory_bytes, used.memory_bytes, capacity.memory_bytes},
                         check{"pods", pod.pods, used.pods, capacity.pods}}) {
    if (c.requested == 0 || c.requested + c.used <= c.capacity)
      continue;
    return admission_refusal{std::string("OutOf") + c.name,
                             std::string("Node didn't have enough resource: ") + c.name +
                                 ", requested: " + std::to_string(c.requested) + ", used: " + std::to_string(c.used) +
                                 ", capacity: " + std::to_string(c.capacity)};
  }
  return std::nullopt;
}

} // namespace kozmo::kubelet
