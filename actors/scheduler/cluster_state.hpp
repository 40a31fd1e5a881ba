// The scheduler core's mutable view of the cluster, below the facade (scheduler_core.hpp):
// who holds each GPU, which GPUs are bad, and which physical cell stands for each virtual
// cell of each virtual cluster (VC). Internal to the core; the actors use scheduler_core.
//
// Virtual cells (HiveD's model, simplified where the outcome is the same):
//  1. A VC's quota is a list of virtual cells: `cellNumber` cells of each `virtualCells` entry
//     plus one per pinned cell. A virtual cell is bound LAZILY to a physical cell of the same
//     chain and level the first time a guaranteed group of the VC needs it, and unbound when
//     no guaranteed group of the VC uses it any more (pinned cells stay bound to their cell).
//     Inside a bound cell the VC's pods use the physical GPUs directly: virtual and physical
//     cells have the same shape, so a virtual buddy placement and its physical image agree.
//  2. Binding is buddy allocation over the cells no virtual cell holds (`bindings`, an
//     allocation_state whose "groups" are virtual cells): the smallest maximal unbound cell
//     that contains a cell of the wanted level, preferring healthy cells and cells no pod
//     uses, and never a choice after which the other VCs' unbound cells could not all be
//     carved any more (the same carving the configuration check does).
//  3. Doomed cells: when the healthy unbound capacity of a chain is below what the VCs' unbound
//     virtual cells need, some of those virtual cells are bound to bad physical cells
//     ("doomed", shown Bad) so the VC sees that its quota is really smaller; they are unbound
//     again when healthy capacity returns. A health change only marks the doomed cells stale:
//     settle() recomputes them, once for a burst of node reports (a thousand nodes listed at
//     start-up, or registering one by one, each re-dooming the whole cluster was quadratic).
//     A virtual cell released while GPUs are bad does the same. The core settles before every
//     placement decision, a recovery and an inspect.
#pragma once

#include "actors/scheduler/allocation_state.hpp"
#include "actors/scheduler/victim_index.hpp"
#include "actors/scheduler/virtual_clusters.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <set>
#include <string>
#include <vector>

namespace kozmo::scheduler {

struct vc_cell {
  int vc = 0;                  // index into model.vcs
  std::string qualified_type;  // as written in the config (or the pinnedCellId)
  std::string chain;
  std::string type;
  int level = 1;
  int leaf_count = 0;
  std::string leaf_type;
  bool pinned = false;
  cell_id bound = no_cell;     // the physical cell it stands for now
  bool doomed = false;         // bound to bad hardware because healthy capacity ran out (note 3)
  int used = 0;                // GPUs held inside it by the VC's guaranteed groups
  // Borrowing (scheduler_core.hpp note 9): the VC whose gangs borrowed this idle cell (-1:
  // none) and the GPUs they hold in it (part of `used`). Cleared when it is unbound.
  int borrower = -1;
  int borrowed_used = 0;
};

class cluster_state {
public:
  explicit cluster_state(const cluster_model& model);

  const cluster_model& model() const { return *model_; }
  const cell_tree& tree() const { return model_->tree; }

  // --- physical GPUs -------------------------------------------------------------------
  // Group id using a leaf (-1: free) and the group reserving it for a preemption (-1: none).
  // Read freely; change only through set_owner / set_reserver (they keep the counts below).
  std::vector<int> owner;
  std::vector<int> reserver;
  int used_leaves(cell_id id) const { return used_[id]; }
  // Leaves under a cell that are free, unreserved and healthy.
  int avail_leaves(cell_id id) const { return avail_[id]; }
  // The same over the whole cluster.
  int total_avail() const { return total_avail_; }
  // Node-level cells of a leaf type ("" = every type) with an available GPU, in no fixed
  // order: a full cluster has few, and a wait reason counts its free slots from them.
  template <class Fn>
  void visit_nodes_with_avail(const std::string& leaf_type, Fn&& fn) const {
    for (const auto& [type, cells] : nodes_with_avail_)
      if (leaf_type.empty() || type == leaf_type)
        for (cell_id id : cells) fn(id);
  }
  // Changes whenever a GPU becomes available or stops being so.
  std::uint64_t avail_version() const { return avail_version_; }
  void set_owner(cell_id leaf, int group);    // -1 frees
  void set_reserver(cell_id leaf, int group); // -1 clears
  // Which cells a preemption pass can skip (leaf_chooser): per cell, the lowest barrier among
  // its leaves. A leaf's barrier is -2 when nobody owns or reserves it, else the highest
  // priority of its owner and reserver (opportunistic -1), per `priority_of`. A leaf whose
  // barrier is p or more cannot be had by a group of priority p, so neither can a cell's.
  // Without `priority_of` every barrier stays -2 (nothing is skipped).
  int barrier(cell_id id) const { return barrier_[id]; }
  std::function<int(int group)> priority_of;
  // A group's priority changed (a downgrade): call for each of its GPUs.
  void refresh_barrier(cell_id leaf);
  // Bounds over the buddy candidates under each cell, for the preemption search.
  const victim_index& victims() const {
    victims_.flush();
    return victims_;
  }
  int tree_rank(cell_id id) const { return bindings.tree_rank(id); }
  cell_id node_cell_of(cell_id id) const;

  // --- health ----------------------------------------------------------------------------
  // Health rule: until the first set_health call every configured node is healthy; after it
  // a node is healthy only when its last report said so (see scheduler_core.hpp).
  // True when some GPU's health changed.
  bool set_health(const std::string& node, bool healthy);
  bool is_bad_leaf(cell_id leaf) const { return bad_[leaf] > 0; }
  int bad_leaves(cell_id id) const { return bad_[id]; }
  bool node_healthy(const std::string& node) const;
  // GPUs that pods of other schedulers hold on a node (`gpus`, which ones unknown: the device
  // plugin chose them). That many of the node's leaves count as bad, so no pod of ours is
  // placed on them and the VCs' quota shrinks as for bad hardware (note 3): free ones first,
  // from the node's last leaf back (its first cells stay whole for buddy placement), then
  // reserved ones, then leaves our own pods hold (the node is over-committed). When one of
  // our pods takes a marked leaf (a recovery), the mark moves to a free leaf if there is one;
  // when a leaf is freed on a node whose marks sit on our pods' leaves, one moves onto it.
  // On a bad node every leaf is bad already and no mark is kept. True when some GPU's
  // availability changed.
  bool set_foreign(const std::string& node, int gpus);
  int foreign_gpus(std::string_view node) const {
    auto it = foreign_gpus_.find(node);
    return it == foreign_gpus_.end() ? 0 : it->second;
  }
  // Leaves under a cell that count as bad because other schedulers' pods hold them.
  int foreign_leaves(cell_id id) const { return foreign_[id]; }
  // Re-dooms now (note 3). Cheap when nothing is bad.
  void refresh_doomed();
  // Re-dooms if a health change or a release since the last call asks for it (note 3).
  void settle() {
    if (doom_stale_) {
      doom_stale_ = false;
      refresh_doomed();
    }
  }

  // --- virtual cells ---------------------------------------------------------------------
  std::vector<vc_cell> vc_cells;
  std::vector<std::vector<int>> vc_cells_of; // per VC: indices into vc_cells
  // Physical cell -> virtual cell bound exactly there (-1 none).
  int vc_cell_at(cell_id id) const { return bound_at_[id]; }
  // The bound virtual cell containing a physical cell (-1 none).
  int vc_cell_containing(cell_id id) const;
  // The physical cell an unbound virtual cell would be bound to now (note 2); nullopt when
  // none fits. `for_doom`: prefer bad cells instead (note 3).
  std::optional<cell_id> prospect(const vc_cell& c, bool for_doom = false) const;
  void bind(int vc_cell_index, cell_id physical);
  // Best-fit indexes for the hot path: bound ordinary cells of a VC, and top-level cells of a
  // leaf type, by the most available leaves on one node inside them (what decides whether a
  // pod fits), ascending, then tree order; fn(cell) returns false to stop.
  template <class Fn>
  void visit_bound_fitting(int vc, int need, Fn&& fn) const {
    flush_index();
    const auto& index = vc_index_[vc];
    for (auto it = index.lower_bound({need, -1, no_cell}); it != index.end(); ++it)
      if (!fn(std::get<2>(*it))) return;
  }
  // Unbound ordinary virtual cells of a VC, one call per (chain, level) with its first index.
  template <class Fn>
  void visit_unbound_kinds(int vc, Fn&& fn) const {
    for (auto it = unbound_.lower_bound({vc, std::string(), 0}); it != unbound_.end(); ++it) {
      if (std::get<0>(it->first) != vc) return;
      if (!it->second.empty()) fn(*it->second.begin());
    }
  }
  // The first unbound ordinary cell of a VC with this chain and level; -1 if none.
  int first_unbound(int vc, const std::string& chain, int level) const {
    auto it = unbound_.find({vc, chain, level});
    return it == unbound_.end() || it->second.empty() ? -1 : *it->second.begin();
  }
  template <class Fn>
  void visit_tops_fitting(const std::string& leaf_type, int need, Fn&& fn) const {
    flush_index();
    for (const auto& [type, index] : top_index_) {
      if (!leaf_type.empty() && type != leaf_type) continue;
      for (auto it = index.lower_bound({need, -1, no_cell}); it != index.end(); ++it)
        if (!fn(std::get<2>(*it))) break;
    }
  }
  // The buddy rule's "smallest free cell anywhere", indexed: the smallest cell inside a node
  // (or a whole node) of `leaf_type` ("" = any) whose every GPU is available, holding at least
  // `need` GPUs and fewer than `below`; ties in tree order. no_cell when there is none. The
  // best-fit indexes above only give a few candidates; this says when a smaller free cell
  // lies outside them.
  cell_id smallest_whole(const std::string& leaf_type, int need, int below) const;
  void unbind(int vc_cell_index);
  // A VC's guaranteed group starts / stops using a virtual cell's GPUs; `borrowed`: a gang of
  // the cell's borrower (its use counts in lent_used of the cell's VC).
  void add_use(int vc_cell_index, int leaves, bool borrowed = false);
  void release_use(int vc_cell_index, int leaves, bool borrowed = false);
  // GPUs of a VC's cells that borrowers hold now.
  int lent_used(int vc) const { return lent_used_[static_cast<std::size_t>(vc)]; }
  // GPUs a VC's gangs hold in cells it borrows, from every lender.
  int borrowed_used(int vc) const { return borrowed_used_[static_cast<std::size_t>(vc)]; }
  // A lender's borrowers now: borrower VC -> cells lent to it.
  const std::map<int, int>& loans_of(int lender) const { return loans_of_[static_cast<std::size_t>(lender)]; }
  // Borrowing (scheduler_core.hpp note 9): a VC's bound cell becomes lent to `borrower`; the
  // mark goes when the borrowers' use ends or the cell is unbound. Counted per VC and cell
  // type (plain, the last step of a qualified name): cells lent, cells borrowed.
  void lend(int vc_cell_index, int borrower);
  int lent_cells(int vc, const std::string& type) const { return count_of(lent_cells_, vc, type); }
  int borrowed_cells(int vc, const std::string& type) const { return count_of(borrowed_cells_, vc, type); }
  // Unbound ordinary cells of a VC of one plain cell type, all chains.
  int unbound_of_type(int vc, const std::string& type) const;
  // Quota of a VC's unpinned virtual cells that no group uses, of one leaf type ("" = of
  // every type); kept by add_use / release_use.
  int vc_unused(int vc, const std::string& leaf_type) const;
  // All the quota of those cells, used or not.
  int vc_quota(int vc, const std::string& leaf_type) const;
  // Bad GPUs anywhere in the cluster.
  int bad_total() const { return bad_total_; }
  // Whether any ordinary virtual cell of the VC is unbound (its groups may bind new cells).
  bool has_unbound(int vc) const { return unbound_count_[static_cast<std::size_t>(vc)] > 0; }

  // --- change stamps (the core's queueing hints) -----------------------------------------
  // Counters that move on every change a placement or a wait reason can depend on: `changes`
  // on any; `vc[v]` on a change of owner, reserver or health of a GPU inside one of VC v's
  // bound cells, of its bindings or of its quota use; `outside` on such a change to a GPU no
  // bound cell holds and on any binding. Equal stamps: nothing in that scope changed since.
  struct stamps {
    std::uint64_t changes = 0, outside = 0;
    std::vector<std::uint64_t> vc;
    std::uint64_t bindings = 0; // any bind, unbind, loan or end of a loan
  };
  const stamps& stamp() const { return stamps_; }
  // Counts every bind and unbind of a virtual cell, and loans (never restored): lists of
  // bound cells kept by a caller are current while it is unchanged.
  std::uint64_t binding_version() const { return binding_version_; }
  // A tentative placement undone: its bindings are gone again, and so is their mark.
  void restore_stamp(stamps s) { stamps_ = std::move(s); }
  // Changes the state cannot see: a group's priority (its GPUs), a VC's preemptions in flight.
  void changed(cell_id leaf);
  void vc_changed(int vc);

  allocation_state bindings; // leaves covered by bound virtual cells, "group" = "vc/<index>"

private:
  bool feasible_after(const vc_cell& c, int free_level) const;
  const std::vector<int>& unbound_demand(const std::string& chain) const; // by level
  void leaf_changed(cell_id leaf, bool was_avail);
  // A leaf's badness (an unhealthy node, or a mark of set_foreign) becomes `bad`.
  bool apply_bad(cell_id leaf, bool bad);
  // Brings a node's leaves in line with its health and its GPUs held elsewhere.
  bool refresh_node(const std::string& node);
  int fit_measure(cell_id id) const;
  // No pod uses the cell and none of its GPUs is bad (allocation_state's spare mark).
  bool spare(cell_id id) const { return used_[id] == 0 && bad_[id] == 0; }
  bool leaf_avail(cell_id leaf) const { return owner[leaf] < 0 && reserver[leaf] < 0 && bad_[leaf] == 0; }
  using fit_key = std::tuple<int, int, cell_id>; // avail, tree rank, cell
  void reindex(std::set<fit_key>& index, std::vector<int>& keys, cell_id id) const;
  // The indexes are brought up to date lazily, on the next visit: a gang changes many GPUs
  // of the same cells, and each cell is re-keyed once instead of once per GPU.
  void flush_index() const;

  const cluster_model* model_;
  std::vector<int> used_;
  std::vector<int> bad_;
  std::vector<int> foreign_; // per cell: leaves under it marked by set_foreign
  std::map<std::string, int, std::less<>> foreign_gpus_; // node -> GPUs other pods hold there
  std::vector<int> bound_at_;
  std::vector<int> avail_;
  std::vector<int> barrier_;
  std::map<std::string, std::set<cell_id>, std::less<>> nodes_with_avail_; // by leaf type
  mutable victim_index victims_; // flushed on read
  int total_avail_ = 0;
  std::uint64_t avail_version_ = 0;
  std::vector<std::map<std::string, int, std::less<>>> vc_unused_; // per VC, by leaf type; "" = all
  std::vector<std::map<std::string, int, std::less<>>> vc_quota_;  // the same, used or not
  // The key a cell is indexed under in vc_index_ / top_index_ (fit_measure when last indexed).
  mutable std::vector<int> fit_vc_, fit_top_;
  mutable std::vector<std::set<fit_key>> vc_index_;            // per VC: (avail, rank, bound cell)
  mutable std::map<std::string, std::set<fit_key>> top_index_; // per leaf type: top-level cells
  mutable std::vector<cell_id> dirty_;                         // cells whose index key may be stale
  // Cells at or below node level whose every leaf is available ("whole"), per (leaf type, leaf
  // count): a bitmap over that kind's cells in tree order and how many bits are set. A leaf
  // change flips at most one bit per ancestor; a query finds the first set bit.
  struct whole_kind {
    std::string leaf_type;
    int size = 0;
    std::vector<cell_id> cells;       // by position, tree order
    std::vector<std::uint64_t> bits;  // by position
    int count = 0;
  };
  std::vector<whole_kind> whole_;
  std::vector<int> whole_kind_of_; // by cell: index into whole_ (-1: above node level)
  std::vector<int> whole_pos_;     // by cell: position in its kind
  std::map<std::string, std::vector<cell_type_info>, std::less<>> chain_types_;
  std::map<std::string, std::vector<int>, std::less<>> demand_; // chain -> unbound cells by level
  std::map<std::tuple<int, std::string, int>, std::set<int>> unbound_; // (vc, chain, level)
  std::set<std::string, std::less<>> healthy_nodes_; // nodes whose last report was healthy
  bool health_reported_ = false;
  int bad_total_ = 0;
  stamps stamps_;
  std::uint64_t binding_version_ = 0;
  std::vector<cell_id> leaves_scratch_; // bind()'s
  std::vector<std::size_t> unbound_count_;  // per VC: its ordinary cells in unbound_
  std::vector<int> lent_used_;              // per VC: GPUs borrowers hold in its cells
  std::vector<int> borrowed_used_;          // per VC: GPUs it holds in cells it borrows
  std::vector<std::map<int, int>> loans_of_; // per lender: borrower -> cells lent
  using type_counts = std::vector<std::map<std::string, int, std::less<>>>; // per VC, by plain type
  type_counts lent_cells_, borrowed_cells_;
  static int count_of(const type_counts& counts, int vc, const std::string& type) {
    const auto& by_type = counts[static_cast<std::size_t>(vc)];
    auto it = by_type.find(type);
    return it == by_type.end() ? 0 : it->second;
  }
  void end_loan(vc_cell& c);
  // Per VC and plain type: the (chain, level) pairs of its ordinary cells of that type.
  std::vector<std::map<std::string, std::vector<std::pair<std::string, int>>, std::less<>>> kinds_of_type_;
  bool doom_stale_ = false; // a health change or a release since the last refresh_doomed
};

} // namespace kozmo::scheduler
