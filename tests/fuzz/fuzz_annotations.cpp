// What a pod's annotations ask for: HiveD's pod-scheduling-spec YAML and Kozmo's flat
// kozmo.io/* scheduling keys (actors/scheduler/pod_scheduling_spec.hpp), and the simulated
// kubelet's kozmo.io/sim-* script (actors/kubelet/pod_script.hpp).
//
// Input: annotations separated by a line "%%"; each is key=value (at the first '='); an entry
// without '=' is the value of hivedscheduler.microsoft.com/pod-scheduling-spec. Property: a
// spec written back as flat annotations (scheduling_annotations, what training and tasks put on
// their pods) reads as the same request.
#include "actors/kubelet/pod_script.hpp"
#include "actors/scheduler/pod_scheduling_spec.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <map>
#include <string>

using namespace kozmo;

namespace {

std::map<std::string, std::string> annotations_of(std::string_view text) {
  std::map<std::string, std::string> out;
  for (;;) {
    auto at = text.find("\n%%\n");
    std::string_view entry = text.substr(0, at);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos)
      out[scheduler::hived_spec_annotation] = std::string(entry);
    else
      out[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
    if (at == std::string_view::npos)
      return out;
    text.remove_prefix(at + 4);
  }
}

void same_request(const scheduler::pod_scheduling_spec& a, const scheduler::pod_scheduling_spec& b) {
  fuzz::require(a.virtual_cluster == b.virtual_cluster, "round trip keeps the virtual cluster", b.virtual_cluster);
  fuzz::require(a.priority == b.priority, "round trip keeps the priority");
  fuzz::require(a.leaf_cell_type == b.leaf_cell_type, "round trip keeps the leaf cell type", b.leaf_cell_type);
  fuzz::require(a.leaf_cell_number == b.leaf_cell_number, "round trip keeps the leaf cell number");
  fuzz::require(a.pinned_cell_id == b.pinned_cell_id, "round trip keeps the pinned cell", b.pinned_cell_id);
  fuzz::require(a.lazy_preemption_enable == b.lazy_preemption_enable, "round trip keeps lazy preemption");
  fuzz::require(a.affinity_group == b.affinity_group, "round trip keeps the gang's name", b.affinity_group);
  fuzz::require(a.members == b.members, "round trip keeps the gang's members");
  fuzz::require(a.min_members == b.min_members, "round trip keeps an elastic gang's minimum");
  fuzz::require(a.gang_level == b.gang_level, "round trip keeps the gang level", b.gang_level);
  fuzz::require(a.preferred_level == b.preferred_level, "round trip keeps the preferred level", b.preferred_level);
  fuzz::require(a.subgroup == b.subgroup, "round trip keeps the subgroup", b.subgroup);
  fuzz::require(a.subgroup_min_members == b.subgroup_min_members, "round trip keeps the subgroup's minimum");
  fuzz::require(a.subgroup_level == b.subgroup_level, "round trip keeps the subgroup level", b.subgroup_level);
}

void check_scheduling(const std::map<std::string, std::string>& annotations, const scheduler::spec_defaults* d) {
  auto spec = scheduler::parse_pod_scheduling_spec(annotations, "ns", "pod", d);
  if (!spec)
    return;
  std::map<std::string, std::string> written;
  for (auto& [k, v] : scheduler::scheduling_annotations(*spec))
    written[k] = v;
  auto again = scheduler::parse_pod_scheduling_spec(written, "ns", "pod", d);
  fuzz::require(again.has_value(), "the flat annotations Kozmo writes for a spec parse",
                again ? std::string_view{} : std::string_view(again.err().message));
  same_request(*spec, *again);
  (void)scheduler::format_members(spec->members);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  auto annotations = annotations_of(text);
  check_scheduling(annotations, nullptr);
  scheduler::spec_defaults defaults{"default", 1};
  check_scheduling(annotations, &defaults);
  (void)scheduler::parse_hived_spec(std::string(text), "ns", "pod");

  (void)kubelet::parse_pod_script(annotations);
  for (const auto& [k, v] : annotations)
    (void)kubelet::parse_duration(v);
  return 0;
}
