// What a pod asks of the GPU scheduler: HiveD's scheduling spec, or Kozmo's own annotations.
//
// HiveD's annotation is accepted unchanged:
//   hivedscheduler.microsoft.com/pod-scheduling-spec: |
//     virtualCluster: vc1
//     priority: 100                  # -1 = opportunistic, 0..1000 guaranteed
//     leafCellType: V100             # empty = any type (old key: gpuType)
//     leafCellNumber: 2              # GPUs of this pod (old key: gpuNumber)
//     pinnedCellId: VC1-RACK         # optional
//     gangReleaseEnable: false
//     lazyPreemptionEnable: true
//     ignoreK8sSuggestedNodes: true  # default true
//     affinityGroup:                 # default: a group of this pod alone, named <ns>/<pod>
//       name: job1
//       members: [{podNumber: 4, leafCellNumber: 2}]
//
// Kozmo's own keys say the same in flat annotations (the HiveD spec wins when both exist):
//   kozmo.io/virtual-cluster, kozmo.io/priority, kozmo.io/leaf-cell-type,
//   kozmo.io/leaf-cell-number, kozmo.io/pinned-cell, kozmo.io/lazy-preemption,
//   kozmo.io/gang (group name), kozmo.io/gang-members ("4x2,1x4": podNumber x leafCellNumber).
//
// Errors are user errors (HTTP 400 in extender mode, an Event in direct mode) whose message
// names the field and says what is accepted.
#pragma once

#include "k8s/error.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kozmo::scheduler {

inline constexpr const char* hived_spec_annotation = "hivedscheduler.microsoft.com/pod-scheduling-spec";

struct affinity_member {
  int pod_number = 0;
  int leaf_cell_number = 0;
  friend bool operator==(const affinity_member&, const affinity_member&) = default;
};

struct pod_scheduling_spec {
  std::string virtual_cluster;
  int priority = 0;
  std::string pinned_cell_id;
  std::string leaf_cell_type; // empty: any type
  int leaf_cell_number = 0;
  bool gang_release_enable = false;
  bool lazy_preemption_enable = false;
  bool ignore_k8s_suggested_nodes = true;
  std::string affinity_group;
  std::vector<affinity_member> members;

  bool opportunistic() const { return priority == -1; }
};

// Reads the pod's scheduling request from its annotations. `ns`/`name` name the default
// group. Returns nothing-found as an error with reason "NotRequested" when neither the HiveD
// annotation nor any kozmo.io scheduling key is present.
expected<pod_scheduling_spec> parse_pod_scheduling_spec(const std::map<std::string, std::string>& annotations,
                                                        const std::string& ns, const std::string& name);

// The HiveD YAML form alone (for the extender and tests).
expected<pod_scheduling_spec> parse_hived_spec(const std::string& yaml_text, const std::string& ns,
                                               const std::string& name);

} // namespace kozmo::scheduler
