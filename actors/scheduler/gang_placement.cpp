// All-or-nothing gang placement over the buddy allocator; see gang_placement.hpp.
#include "actors/scheduler/gang_placement.hpp"

#include "actors/scheduler/buddy_allocator.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace kozmo::scheduler {
namespace {

std::string type_phrase(std::string_view leaf_type) {
  return leaf_type.empty() ? std::string("GPUs of any type")
                           : "GPUs of type " + std::string(leaf_type);
}

status check_request(const allocation_state& state, const gang_request& request) {
  if (request.group.empty()) return error::bad_request("the affinity group has no name");
  if (request.members.empty())
    return error::bad_request("affinity group '" + request.group + "' has no members");
  for (const auto& m : request.members)
    if (m.pod_count <= 0 || m.leaf_cell_number <= 0)
      return error::bad_request("affinity group '" + request.group +
                                "' has a member with podNumber " + std::to_string(m.pod_count) +
                                " and leafCellNumber " + std::to_string(m.leaf_cell_number) +
                                "; both must be positive");
  if (!request.leaf_type.empty()) {
    auto info = state.tree().type_info(request.leaf_type);
    if (!info || !info->is_leaf)
      return error::bad_request("leaf cell type '" + request.leaf_type +
                                "' is not in the physical cluster");
  }
  if (state.holds(request.group))
    return error::conflict("affinity group '" + request.group + "' already holds cells");
  return ok;
}

// "the gang 'g' needs 4 × 2 GPUs of type V100 (each pod on one node); 3 free 2-GPU slots
// exist (node-1: 1, node-2: 2)" — what a user needs to decide between waiting and resizing.
std::string refusal_reason(const allocation_state& state, const gang_request& request) {
  std::map<int, int, std::greater<>> pods_by_size;
  for (const auto& m : request.members) pods_by_size[m.leaf_cell_number] += m.pod_count;
  std::string needs;
  for (const auto& [size, count] : pods_by_size) {
    if (!needs.empty()) needs += " + ";
    needs += std::to_string(count) + " × " + std::to_string(size);
  }
  std::string out = "the gang '" + request.group + "' needs " + needs + " " +
                    type_phrase(request.leaf_type) + " (each pod on one node)";
  int largest_node = 0;
  for (cell_id node : node_level_cells(state, request.leaf_type))
    largest_node = std::max(largest_node, state.tree().at(node).leaf_count);
  for (const auto& [size, count] : pods_by_size) {
    out += "; ";
    if (size > largest_node) {
      out += "no node holds " + std::to_string(size) + " " + type_phrase(request.leaf_type) +
             " (the largest holds " + std::to_string(largest_node) + ")";
      continue;
    }
    const auto slots = free_slots_by_node(state, size, request.leaf_type);
    const int total = std::accumulate(slots.begin(), slots.end(), 0,
                                      [](int sum, const auto& s) { return sum + s.second; });
    out += std::to_string(total) + " free " + std::to_string(size) + "-GPU slot" +
           (total == 1 ? "" : "s") + (total == 1 ? " exists" : " exist");
    if (slots.empty()) continue;
    out += " (";
    for (std::size_t i = 0; i < slots.size(); ++i)
      out += (i ? ", " : "") + slots[i].first + ": " + std::to_string(slots[i].second);
    out += ")";
  }
  return out;
}

pod_placement to_placement(const allocation_state& state, const leaf_choice& choice) {
  const cell_tree& tree = state.tree();
  pod_placement pod;
  pod.node = tree.at(choice.node_cell).node;
  pod.leaf_type = tree.at(choice.node_cell).leaf_type;
  pod.leaves = choice.leaves;
  pod.relaxed = choice.relaxed;
  for (cell_id leaf : choice.leaves) pod.leaf_indices.push_back(tree.at(leaf).leaf_indices.at(0));
  return pod;
}

} // namespace

std::vector<std::pair<std::string, int>> free_slots_by_node(const allocation_state& state,
                                                            int leaf_count,
                                                            std::string_view leaf_type) {
  std::map<std::string, int> by_node;
  if (leaf_count < 1) return {};
  for (cell_id node : node_level_cells(state, leaf_type)) {
    const int slots = state.free_leaves(node) / leaf_count;
    if (slots > 0) by_node[state.tree().at(node).node] += slots;
  }
  return {by_node.begin(), by_node.end()};
}

expected<gang_placement> place_gang(allocation_state& state, const gang_request& request) {
  if (auto checked = check_request(state, request); !checked) return checked.err();

  // Largest pods first; remember each pod's slot in the answer.
  std::vector<std::size_t> order(request.members.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return request.members[a].leaf_cell_number > request.members[b].leaf_cell_number;
  });

  gang_placement placement;
  placement.group = request.group;
  placement.pods.resize(request.members.size());
  std::vector<cell_id> taken;
  for (std::size_t member : order) {
    const gang_member& m = request.members[member];
    for (int pod = 0; pod < m.pod_count; ++pod) {
      auto choice = choose_pod_leaves(state, m.leaf_cell_number, request.leaf_type, taken);
      if (!choice) {
        state.release(request.group);
        return error{refusal_reason(state, request), 0, "Unschedulable"};
      }
      if (auto took = state.take(choice->leaves, request.group); !took) {
        state.release(request.group);
        return error::internal("buddy allocator chose used cells: " + took.err().message);
      }
      taken.insert(taken.end(), choice->leaves.begin(), choice->leaves.end());
      placement.pods[member].push_back(to_placement(state, *choice));
    }
  }
  return placement;
}

int release_gang(allocation_state& state, std::string_view group) {
  return state.release(group);
}

} // namespace kozmo::scheduler
