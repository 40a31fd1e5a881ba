// HiveD's scheduler configuration (actors/scheduler/config.hpp parse_config), the cell forest
// and virtual clusters built from it (scheduler_core::load), and the simulated nodes
// `kozmo local --cluster FILE` makes of it (runtime/hived_shape.hpp shape_from_hived_config).
// Properties: what loads was parsed (load implies parse_config), and a configuration Kozmo
// writes for a cluster shape (hived_config_from_shape) of a loaded configuration's nodes loads.
#include "actors/scheduler/config.hpp"
#include "actors/scheduler/scheduler_core.hpp"
#include "runtime/hived_shape.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace kozmo;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(fuzz::as_text(data, size));
  bool parsed = scheduler::parse_config(text).has_value();
  auto core = scheduler::scheduler_core::load(text);
  if (core) {
    fuzz::require(parsed, "scheduler_core::load accepts only what parse_config accepts");
    (void)core->force_pod_bind_threshold();
  }
  (void)runtime::is_hived_config(text);
  auto shape = runtime::shape_from_hived_config(text);
  if (shape && !shape->nodes.empty() && shape->nodes.size() <= 64) {
    std::string written = runtime::hived_config_from_shape(*shape);
    auto again = scheduler::scheduler_core::load(written);
    fuzz::require(again.has_value(), "the HiveD configuration Kozmo writes for a shape loads",
                  again ? std::string_view{} : std::string_view(again.err().message));
  }
  return 0;
}
