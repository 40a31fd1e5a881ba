// Choosing one pod's GPUs inside a set of candidate cells, with a cost per GPU: HiveD's buddy
// allocation (cell_allocation.go) with its relaxed fallback, over the facade's search roots
// (virtual-cluster cells, node-level cells), bad GPUs, and GPUs that can be had by preempting
// their user. A pod's leaves always sit on one Kubernetes node, inside one node-level cell;
// an empty leaf type means any type (chains are tried together). Checked against a
// brute-force oracle through the core in tests/unit/scheduler_alloc_test.cpp.
//
// Rules:
//  1. cost(leaf): -1 unusable, 0 free, >= 1 preemptible (higher = a more valuable victim).
//     A pass with max_cost 0 uses free leaves only; any other pass also preemptible ones.
//  2. Buddy: the smallest cell at or below node level whose leaves are all usable and that
//     holds the pod; keys, in order: GPUs to preempt, the cell's summed cost, cell size, (opportunistic only) whether
//     it overlaps a VC's bound cell, size of the largest all-usable cell around it inside its
//     root (cut from the smallest free piece), closeness to the gang's GPUs, fewest free GPUs
//     on its node, an already bound root before a new binding, tree order.
//  3. Relaxed (no buddy cell anywhere): the node-level cell with the fewest usable GPUs that
//     still holds the pod; inside it whole usable pieces smallest first.
#pragma once

#include "actors/scheduler/cluster_state.hpp"

#include <climits>
#include <optional>
#include <vector>

namespace kozmo::scheduler {

struct choice_root {
  cell_id cell = no_cell;
  bool new_binding = false;  // choosing here binds a virtual cell first
  int lender = -1;           // borrowing: the VC whose cell it is (-1: the group's own or none)
};

struct leaf_pick {
  int root = -1;                 // index into the roots
  std::vector<cell_id> leaves;   // tree order
  int preempted = 0;             // preemptible leaves among them
  bool relaxed = false;
};

// A non-owning reference to the caller's cost function: it is called for every GPU surveyed,
// so no std::function (allocation, double indirection). The callable must outlive the request.
class cost_ref {
public:
  cost_ref() = default;
  template <class F>
  cost_ref(const F& f) // NOLINT: implicit, like std::function
      : object_(&f), call_([](const void* o, cell_id id) { return (*static_cast<const F*>(o))(id); }) {}
  int operator()(cell_id id) const { return call_(object_, id); }

private:
  const void* object_ = nullptr;
  int (*call_)(const void*, cell_id) = nullptr;
};

struct pick_request {
  int leaf_count = 1;
  int max_cost = 0;
  bool avoid_vc_cells = false;   // opportunistic pods keep out of VCs' bound cells when they can
  // cost(leaf) == 0 implies the leaf is free, unreserved and healthy (cluster_state's avail):
  // cells with no available leaf are skipped without asking cost for each leaf.
  bool cost_implies_avail = false;
  // cost(leaf) >= 0 implies cluster_state::barrier(leaf) < unusable_from (a preemption pass
  // of a group of that priority): cells whose barrier is that or more are skipped whole.
  int unusable_from = INT_MAX;
  // A pass that may take preemptible GPUs (max_cost > 0) with unusable_from set may search
  // through cluster_state::victims() (victim_index.hpp), skipping subtrees whose bounds cannot
  // beat the best cell found so far, instead of surveying every GPU under the roots. Set it
  // when, moreover, cost(leaf) == 0 implies the leaf is available and cost(leaf) >= 1 implies
  // cost(leaf) >= barrier(leaf) + 2 (the victim index's weight is then a lower bound). The
  // choice is the same; only the relaxed fallback still surveys.
  bool victim_bounds = false;
  cost_ref cost;
  const std::vector<cell_id>* near = nullptr;
  // Optional, for the pods of one gang in turn: a survey_memo keeps what was counted under
  // each root so that the next pod recounts only the roots whose GPUs changed.
  class survey_memo* memo = nullptr;
};

// Which roots' counts are still valid in pick_leaves' per-thread counts. One memo serves one
// gang placement with one cost function; the caller calls changed(leaf) for every GPU it takes
// between two picks, and must not interleave picks of another placement on the same thread.
class survey_memo {
public:
  explicit survey_memo(const cell_tree& tree) : tree_(tree) {}
  ~survey_memo() { clear(); }
  survey_memo(const survey_memo&) = delete;
  survey_memo& operator=(const survey_memo&) = delete;

  bool valid(cell_id root) const { return root < valid_.size() && valid_[root]; }
  void mark(cell_id root);
  void changed(cell_id leaf);
  void clear();

private:
  const cell_tree& tree_;
  static thread_local std::vector<char> valid_; // by cell; all 0 between memos
  std::vector<cell_id> marked_;
};

std::optional<leaf_pick> pick_leaves(const cluster_state& state, const std::vector<choice_root>& roots,
                                     const pick_request& request);

} // namespace kozmo::scheduler
