// Where a preemption pass can find GPUs, without weighing every GPU of a virtual cluster: per
// cell, bounds over the buddy candidates beneath it (leaf_chooser.hpp rule 2), kept as GPUs
// change hands. Part of cluster_state; read by the leaf chooser's preemption search.
//
// Notes:
//  1. A leaf's key is its barrier (cluster_state::barrier: -2 free, else the highest priority
//     of its owner and reserver); a bad leaf counts as held at INT_MAX. A cell's own values:
//     `top` the highest key of its leaves, `free` its available leaves, `weight` the sum of
//     key + 2 over its healthy leaves that are not free (what the chooser's cost function
//     charges for them as victims, at least).
//  2. Size classes: the distinct leaf counts of cells at or below node level, ascending. A cell
//     is a candidate of class i when it holds at least sizes[i] leaves and none of its children
//     does: exactly the cells the buddy rule weighs for a pod of n GPUs, sizes[i-1] < n <=
//     sizes[i]. Per cell and class: the lowest top, the most free leaves and the lowest weight
//     over the candidates in its subtree. They are bounds (each from its own candidate), so a
//     search may skip a subtree whose bounds cannot beat what it holds, never decide from them.
//  3. For the relaxed rule (any node with enough usable GPUs, however scattered): per cell at
//     or above node level, the k-th lowest leaf key of each node-level cell beneath it, the
//     lowest over those cells, for k = 1 .. the largest node. A node holds n GPUs a group of
//     priority p may use only if its n-th lowest key is below p.
//  4. Kept lazily: a leaf change (owner, reserver, priority, health) is noted, and the cells
//     above the noted leaves are recomputed once each, deepest first, before the next read
//     (flush) — a pod's eight GPUs on one node cost one pass up the tree — or every 64 noted
//     cells, so that a cluster that never preempts pays in small steps.
#pragma once

#include "actors/scheduler/cell_tree.hpp"

#include <climits>
#include <vector>

namespace kozmo::scheduler {

class victim_index {
public:
  struct bounds {
    int top = INT_MAX;    // lowest `top` of a candidate (INT_MAX: no candidate)
    int free = -1;        // most free leaves of a candidate
    int weight = INT_MAX; // lowest weight of a candidate
    bool operator==(const bounds&) const = default;
  };
  struct values {
    int top = -2, free = 0, weight = 0;
    bool operator==(const values&) const = default;
  };

  // Every leaf free and healthy.
  explicit victim_index(const cell_tree& tree);

  // The class for pods of n GPUs; -1 when no cell at or below node level holds n.
  int class_for(int n) const;
  bool candidate(cell_id id, int cls) const { return cls >= lo_[id] && cls <= hi_[id]; }
  const values& own(cell_id id) const { return own_[id]; }
  bounds at(cell_id id, int cls) const {
    if (const int pos = inner_[id]; pos >= 0) return agg_[static_cast<std::size_t>(pos) * classes() + cls];
    if (!candidate(id, cls)) return {};
    return {own_[id].top, own_[id].free, own_[id].weight};
  }
  // Asks the cache for what at(id, cls) will read: a preemption pass reads it for hundreds of
  // roots in a row, each a miss of its own otherwise. Two steps, some roots apart: the cell's
  // position, then (the position at hand) its bounds.
  void prefetch_position(cell_id id) const { __builtin_prefetch(&inner_[id]); }
  void prefetch(cell_id id, int cls) const {
    if (const int pos = inner_[id]; pos >= 0) __builtin_prefetch(&agg_[static_cast<std::size_t>(pos) * classes() + cls]);
  }
  int classes() const { return static_cast<int>(sizes_.size()); }
  // The fewest leaves a candidate of the class holds.
  int size_of(int cls) const { return sizes_[static_cast<std::size_t>(cls)]; }
  // False when no node-level cell in the subtree has n leaves of key below p (note 3); a cell
  // below node level answers true.
  bool may_host(cell_id id, int n, int p) const {
    const int pos = upper_[id];
    if (pos < 0) return true;
    if (n > host_size_) return false;
    return kth_[static_cast<std::size_t>(pos) * static_cast<std::size_t>(host_size_) + static_cast<std::size_t>(n - 1)] < p;
  }

  // One leaf's key, availability or health changed (note 4).
  void update(cell_id leaf, int key, bool available, bool bad);
  // Brings the cells above changed leaves up to date; reads need it first (note 4).
  void flush();

private:
  bool recompute(cell_id id); // false: nothing changed, nor will anything above
  void note(cell_id id);
  bool refresh_kth(cell_id id); // note 3; false: unchanged

  const cell_tree& tree_;
  std::vector<int> sizes_;      // note 2
  std::vector<signed char> lo_, hi_; // per cell: its candidate classes (lo > hi: none)
  std::vector<values> own_;     // per cell
  std::vector<int> inner_;      // per cell: position in agg_ (-1 for leaves)
  std::vector<bounds> agg_;     // per inner cell and class
  int host_size_ = 0;           // leaves of the largest node-level cell
  std::vector<int> upper_;      // per cell: position in kth_ (-1 below node level)
  std::vector<int> kth_;        // per cell at or above node level: note 3
  std::vector<int> node_leaf_start_; // by kth_ position: where its node's leaves start in node_leaves_
  std::vector<cell_id> node_leaves_;
  std::vector<int> keys_;       // scratch
  std::vector<char> noted_;     // per cell: waiting in dirty_
  std::vector<std::vector<cell_id>> dirty_; // by level: cells to recompute
  std::size_t dirty_count_ = 0;
};

} // namespace kozmo::scheduler
