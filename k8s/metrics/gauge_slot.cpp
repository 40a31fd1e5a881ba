#include "k8s/metrics/registry.hpp"

namespace kozmo::metrics {

void gauge_slot::move_to(const gauge_family& family, labels values) {
  std::string key;
  for (const auto& [k, v] : values) {
    key.append(k).push_back('=');
    key.append(v).push_back('\x1f'); // a separator no label value holds
  }
  if (holding_ && key == key_)
    return;
  leave();
  held_ = family.series(values);
  held_.inc();
  holding_ = true;
  key_ = std::move(key);
}

void gauge_slot::leave() {
  if (!holding_)
    return;
  held_.dec();
  holding_ = false;
  key_.clear();
}

} // namespace kozmo::metrics
