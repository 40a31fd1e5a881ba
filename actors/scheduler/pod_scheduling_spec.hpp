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
//   kozmo.io/gang (group name), kozmo.io/gang-members ("4x2,1x4": podNumber x leafCellNumber),
//   kozmo.io/gang-min-members (an elastic gang's fewest pods, 1..its members' pods; its pods
//   must all ask the same GPUs; flat form only).
// Gang topology has flat keys only, read beside either form: kozmo.io/gang-level,
// kozmo.io/preferred-level, kozmo.io/subgroup, kozmo.io/subgroup-min-members,
// kozmo.io/subgroup-level. A level is a word (a cell type or level name, checked against the
// cluster by the scheduler core); min-members is 1..10000 and needs kozmo.io/subgroup.
//
// Errors are user errors (HTTP 400 in extender mode, an Event in direct mode) whose message
// names the field and says what is accepted.
#pragma once

#include "k8s/error.hpp"
#include "k8s/model/kozmo_keys.hpp"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kozmo::scheduler {

inline constexpr const char* hived_spec_annotation = keys::hived_spec;

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
  int min_members = 0; // elastic: the fewest pods it runs with (0: not elastic, all of them)
  // Gang topology (empty: none). Levels are resolved against the cells by the core.
  std::string gang_level;
  std::string preferred_level;
  std::string subgroup;
  int subgroup_min_members = 0; // 0: not given (the subgroup needs all its pods)
  std::string subgroup_level;

  bool has_topology() const {
    return !gang_level.empty() || !preferred_level.empty() || !subgroup.empty();
  }
  bool opportunistic() const { return priority == -1; }
};

// What Kozmo fills in where a pod's flat keys say nothing (the HiveD annotation is taken as
// written): the virtual cluster, and the pod's GPUs (its GPU limit, else the size of the gang's
// only member). A pod that names no key at all is then a gang of one.
struct spec_defaults {
  std::string virtual_cluster;
  int leaf_cell_number = 0; // the pod's GPU limit; 0: none
};

// Reads the pod's scheduling request from its annotations. `ns`/`name` name the default
// group. Without `defaults`, a pod that has neither the HiveD annotation nor any kozmo.io
// scheduling key is an error with reason "NotRequested".
expected<pod_scheduling_spec> parse_pod_scheduling_spec(const std::map<std::string, std::string>& annotations,
                                                        const std::string& ns, const std::string& name,
                                                        const spec_defaults* defaults = nullptr);

// The writer beside the parser: the flat annotations that ask for `spec` (what training and
// tasks put on the pods they create). Virtual cluster, priority and leaf cell number always;
// leaf type, pinned cell and lazy preemption when set; the gang's name and members when the
// spec names a group.
std::vector<std::pair<std::string, std::string>> scheduling_annotations(const pod_scheduling_spec& spec);

// "4x2,1x4": pods x GPUs per member, the kozmo.io/gang-members form.
std::string format_members(const std::vector<affinity_member>& members);

// The HiveD YAML form alone (for the extender and tests).
expected<pod_scheduling_spec> parse_hived_spec(const std::string& yaml_text, const std::string& ns,
                                               const std::string& name);

} // namespace kozmo::scheduler
