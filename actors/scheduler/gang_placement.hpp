// Gang (affinity group) placement on physical cells: all pods of a group get leaves, or none
// do and the state is unchanged.
//
// Notes:
//  1. Members are placed largest pods first (HiveD's order: big pods are hardest to fit), each
//     pod by choose_pod_leaves with the group's leaves so far as `near`, so pods pack onto the
//     same switch, socket, node, then rack when free cells allow. The answer lists pods in
//     request order.
//  2. All or nothing: on the first pod that cannot be placed everything taken for the group is
//     released; allocation_state's release restores the exact prior state.
//  3. A refusal names what is missing, per pod size: how many pods of that size the group needs
//     and how many free slots of that size exist per node right now (each size counted on its
//     own; sizes compete for the same GPUs). Its error reason is "Unschedulable": the pods wait.
//  4. Request errors (reason "BadRequest"): no members, a count <= 0, an unknown leaf type;
//     a group that already holds cells: "Conflict".
#pragma once

#include "actors/scheduler/allocation_state.hpp"
#include "k8s/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace kozmo::scheduler {

// `affinityGroup.members[]`: pod_count pods of leaf_cell_number leaves each.
struct gang_member {
  int pod_count = 0;
  int leaf_cell_number = 0;
};

struct gang_request {
  std::string group;      // affinity group name; owner of the leaves in allocation_state
  std::string leaf_type;  // empty: any leaf type (each pod still gets one type)
  std::vector<gang_member> members;
};

struct pod_placement {
  std::string node;              // Kubernetes node name
  std::string leaf_type;
  std::vector<int> leaf_indices; // GPU indices on `node`, tree order
  std::vector<cell_id> leaves;   // the same leaves as cells, tree order
  bool relaxed = false;          // placed by the relaxed rule (buddy_allocator.hpp note 3)
};

struct gang_placement {
  std::string group;
  // pods[i] are the pods of members[i], pod_count of them.
  std::vector<std::vector<pod_placement>> pods;
};

// Places the whole group or nothing (notes 1-4).
expected<gang_placement> place_gang(allocation_state& state, const gang_request& request);

// Frees every leaf of the group; returns how many (0 for an unknown group).
int release_gang(allocation_state& state, std::string_view group);

// How many pods of `leaf_count` leaves each node could take now, nodes with none left out.
std::vector<std::pair<std::string, int>> free_slots_by_node(const allocation_state& state,
                                                            int leaf_count,
                                                            std::string_view leaf_type);

} // namespace kozmo::scheduler
