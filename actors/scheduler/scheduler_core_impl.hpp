// The facade's private state, shared by scheduler_core.cpp (pods, groups, decisions),
// scheduler_core_place.cpp (placement and preemption), scheduler_core_queue.cpp (groups and
// their waiting order), scheduler_core_recover.cpp (bind-info and recovery) and
// scheduler_core_inspect.cpp (inspect JSON). Not part of the public API.
#pragma once

#include "actors/scheduler/cluster_state.hpp"
#include "actors/scheduler/leaf_chooser.hpp"
#include "actors/scheduler/scheduler_core.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kozmo::scheduler::detail {

// Where one pod of a group runs.
struct pod_placement {
  std::string node;              // Kubernetes node name
  std::string leaf_type;
  std::vector<int> leaf_indices; // GPU indices on `node`, tree order
  std::vector<cell_id> leaves;   // the same leaves as cells, tree order
  bool relaxed = false;          // placed by the relaxed rule (leaf_chooser.hpp rule 3)
};

struct slot {
  int member = 0;        // index into the group's members
  pod_placement place;
  std::string pod_uid;   // empty: not assigned to a pod yet
  int vc_cell = -1;      // virtual cell whose quota these GPUs use (-1: none / opportunistic)
  bool borrowed = false; // vc_cell is another VC's, borrowed (note 9)
};

// What a pending group's placement depends on has not changed while this stays the same:
// its VC's stamp (and the unbound space's while the VC can bind new cells) for a guaranteed
// group of a VC, every change for the others.
struct scope_stamp {
  int vc = -1;
  std::uint64_t a = 0, b = 0;
  bool operator==(const scope_stamp& o) const { return vc == o.vc && a == o.a && b == o.b; }
};

// A pending group's last failed placement (queueing hint): at which stamp, whether it was old
// enough to reserve then, and the wait reason it got.
struct placement_hint {
  scope_stamp at;
  bool old = false;
  // The placement is known to fail at `at` (a group of its class failed there), but `reason`
  // is the one its pods were told before: schedule() refreshes it within its budget.
  bool stale = false;
  std::string reason;
};

// Pending groups that place alike: same VC, priority, leaf type, pinned cell and members, on
// the same side of the reservation age. One failing says the others fail at the same stamp.
using placement_class = std::tuple<int, int, std::string, std::string, std::vector<std::pair<int, int>>, bool>;

enum class group_state { pending, preempting, allocated };

struct gang_topology; // scheduler_core_topology.cpp

// Whether cell `id` lies in `cell` (or is it): up the parents while below its level.
inline bool cell_inside(const cell_tree& tree, cell_id id, cell_id cell) {
  const int level = tree.at(cell).level;
  while (id != no_cell && id != cell && tree.at(id).level < level) id = tree.parent(id);
  return id == cell;
}

struct group_entry {
  // What every round reads of each waiting group to skip it (queueing hints) comes first, in
  // as few cache lines as it fits: a round behind 10,000 waiting gangs is that walk.
  int id = 0;
  int vc = -1;                 // index into model.vcs; -1 in physical mode
  group_state state = group_state::pending;
  // Every undecided pod has been told the hint's reason (nothing to say while it holds).
  bool told = false;
  // Lazy preemption: downgraded to opportunistic, pods keep running.
  bool lazy_preempted = false;
  // Head of line: waiting since, and whether it holds cells as a reservation.
  bool reserving = false;
  std::int64_t waiting_since_ms = -1;
  std::optional<placement_hint> hint;
  // Its class's entry in core_impl::failed_classes, while the memo's generation is the same.
  scope_stamp* class_failed = nullptr;
  std::uint64_t class_generation = 0;
  pod_scheduling_spec spec;    // the first pod's spec
  std::string name;
  std::int64_t created_ms = 0;
  std::vector<slot> slots;
  std::set<std::string> pods;  // live pods (uids)
  // Preempting: the groups whose pods must go first.
  std::set<int> victims;
  std::string preempt_reason;
  std::string lazy_reason;     // lazy preemption: why it was downgraded
  std::string preemptor;
  std::int64_t preempted_ms = 0;
  // Elastic (note 10): try_place's members when not spec.members (a size to try), slots whose
  // pods are being deleted to shrink it (their GPUs held until each pod is gone), and, for a
  // gang preempting, the victims it shrinks (group id -> the pods to delete; others: all).
  std::vector<affinity_member> placing;
  std::vector<slot> leaving;
  std::map<int, std::vector<std::string>> shrinking;
  bool elastic() const { return spec.min_members > 0; }
  // Borrowing (note 9): the VCs whose cells its slots borrow; for a lender's gang preempting
  // borrowers, when their pods are deleted unless they finished first (-1: at once).
  std::set<int> lenders;
  std::int64_t reclaim_due_ms = -1;
  std::optional<placement_class> klass;  // its class, kept (priority and age set on use)
  // Its key in core_impl::waiting while it is there (the priority it had when queued).
  std::optional<std::tuple<int, std::int64_t, std::string_view>> turn;
  // Gang topology (scheduler_core.hpp note 11); null for a gang that asks none.
  std::shared_ptr<gang_topology> topo;

  int priority() const { return lazy_preempted ? -1 : spec.priority; }
  // What its GPUs weigh against others' preemption passes: a borrower's count as opportunistic
  // to the lenders (the only ones whose passes see them), whatever its priority.
  int barrier_priority() const { return lenders.empty() ? priority() : -1; }
  bool guaranteed() const { return priority() >= 0; }
};

struct pod_entry {
  pod_view view;
  std::string group;
  bool decided = false;     // a bind decision was handed out
  bool bound = false;
  std::string last_reason;  // last wait/preempt reason handed out
};

// One tentative placement of a whole group (not yet committed to the cluster state).
struct attempt {
  std::vector<slot> slots;
  std::vector<int> new_bindings;   // virtual cells bound for it; unbound again on undo
  std::set<int> victims;           // group ids whose GPUs it needs
  int preempted = 0;
  cluster_state::stamps before;    // the state's stamps before it; undo puts them back
};


// Lookups by std::string_view without building a std::string (heterogeneous lookup).
struct string_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct core_impl {
  cluster_model model;
  cluster_state state;
  std::map<std::string, group_entry, std::less<>> groups;
  std::unordered_map<int, group_entry*> by_id;
  std::unordered_map<std::string, pod_entry, string_hash, std::equal_to<>> pods; // by uid
  // Groups with a pod not decided yet, in their turn: highest priority, then oldest, then name.
  // A sorted vector: a round walks it in order. Changes are batched into the next walk (a
  // burst of binds behind 10,000 waiting gangs erased from the vector one by one moved 400 KB
  // each, half of such a round's time): an unqueued group leaves a hole (null), a queued one
  // waits in `arrivals`, and `waiting_in_turn` merges both before a round reads the order.
  using turn_key = std::tuple<int, std::int64_t, std::string_view>;
  std::vector<std::pair<turn_key, group_entry*>> waiting;
  std::vector<std::pair<turn_key, group_entry*>> arrivals;
  std::size_t holes = 0;
  // The names a hole's key views until the holes are swept: its group may be erased before
  // (all its pods deleted), and a key viewing the freed name would misorder `waiting` for
  // lower_bound, which then misses a group that is erased while its entry stays behind.
  // A deque: adding a name moves none of the others.
  std::deque<std::string> hole_names;
  void queue(group_entry& g);    // into `waiting` (again, after its priority changed)
  void unqueue(group_entry& g);
  // Out of the waiting order once every pod of the group present has its decision.
  void unqueue_if_decided(group_entry& g) {
    if (std::all_of(g.pods.begin(), g.pods.end(), [&](const std::string& u) { return pods.at(u).decided; })) unqueue(g);
  }
  const std::vector<std::pair<turn_key, group_entry*>>& waiting_in_turn();
  std::size_t undecided = 0;     // pods without a bind decision
  std::size_t placed = 0;        // groups not pending
  void set_state(group_entry& g, group_state to) {
    placed += (to != group_state::pending) - (g.state != group_state::pending);
    g.state = to;
  }
  std::vector<group_notice> notices;
  scheduler_options options;
  int next_id = 0;
  std::vector<char> scratch;       // leaves taken by the attempt in progress
  // try_place's lists, kept between attempts so that a pass allocates nothing for them
  // (a preemption pass lists every bound cell of the VC: hundreds).
  std::vector<choice_root> roots_scratch;
  std::vector<cell_id> near_scratch, touched_scratch;
  std::vector<group_entry*> order_scratch; // schedule()'s round order
  // A VC's bound cells of one leaf type (any type: ""), vc_cells_of order: the widest
  // candidates of a pass, listed again only after a bind or an unbind.
  struct bound_roots {
    std::uint64_t version = ~std::uint64_t{0};
    std::vector<choice_root> roots;
  };
  std::map<std::pair<int, std::string>, bound_roots, std::less<>> bound_roots_cache;
  const std::vector<choice_root>& bound_roots_of(int vc, const std::string& leaf_type);

  explicit core_impl(cluster_model m)
      : model(std::move(m)), state(model), scratch(model.tree.size(), 0), vc_held(model.vcs.size()),
        vc_in_flight(model.vcs.size(), 0), vc_leaf_types(model.vcs.size()) {
    // A group not registered (yet) counts as the lowest: its GPUs are never skipped.
    state.priority_of = [this](int id) {
      const group_entry* g = group(id);
      return g ? g->barrier_priority() : -2;
    };
    bool lenders = false;
    for (const auto& vc : model.vcs) lenders = lenders || !vc.lending_limit.empty();
    may_borrow.assign(model.vcs.size(), 0);
    borrowable_cache.assign(model.vcs.size(), {0, 0});
    scope_watch_cache.assign(model.vcs.size(), {0, 0});
    for (std::size_t v = 0; v < model.vcs.size(); ++v)
      may_borrow[v] = model.cfg.borrowing.enabled && lenders && !model.vcs[v].borrowing_limit.empty();
    for (std::size_t v = 0; v < model.vcs.size(); ++v) {
      std::set<std::string> types;
      for (int index : state.vc_cells_of[v]) types.insert(state.vc_cells[index].leaf_type);
      vc_leaf_types[v].assign(types.begin(), types.end());
    }
    plan_borrowing();
  }

  bool physical_mode() const { return model.vcs.empty(); }
  group_entry* group(int id) { auto it = by_id.find(id); return it == by_id.end() ? nullptr : it->second; }

  // --- placement (scheduler_core_place.cpp) --------------------------------------------
  // A whole-group placement; nullopt when it does not fit. `max_cost` 1 allows preemption,
  // 2 reserves (note 5), 3 borrows other VCs' idle cells where its own do not fit (note 9).
  std::optional<attempt> try_place(group_entry& g, int max_cost, const std::set<std::string>* nodes);
  void undo(attempt& a);
  // A placement's GPUs owned by the group (and its lenders noted); returns the GPUs of its own
  // VC's quota the slots use, for count_quota.
  int take_gpus(group_entry& g, const std::vector<slot>& slots);
  void commit_allocated(group_entry& g, attempt& a);
  void commit_preempting(group_entry& g, attempt& a);
  // Places a pending group: allocated, preempting, or still pending with a reason. With
  // options.shortcuts and no node restriction, a group is searched again only when something
  // its placement depends on changed since it or a group of its class last failed (queueing
  // hints: the search would fail the same way).
  std::string place_group(group_entry& g, const std::set<std::string>* nodes, std::int64_t now_ms);
  std::string search_group(group_entry& g, const std::set<std::string>* nodes, std::int64_t now_ms);
  // Read for every waiting group on every round (queueing hints): inline, and what depends
  // on the VC's bindings alone (which stamp a guaranteed gang watches) kept per binding version.
  scope_stamp scope_of(const group_entry& g) const {
    const auto& s = state.stamp();
    if (!g.guaranteed() || physical_mode() || g.vc < 0) return {-1, s.changes, 0};
    const int watch = g.spec.leaf_cell_type.empty() ? scope_watch_any(g.vc) : scope_watch(g.vc, g.spec.leaf_cell_type);
    const std::uint64_t b = watch == 1 ? s.outside : watch == 2 ? (s.bindings | (std::uint64_t{1} << 63)) : 0;
    return {g.vc, s.vc[static_cast<std::size_t>(g.vc)], b};
  }
  // Which stamp besides its own VC's a guaranteed gang's placement depends on (note 9): 1 the
  // space outside bound cells (it could bind or borrow there), 2 loans and bindings anywhere
  // (it may borrow, none lendable now), 0 none.
  int scope_watch(int vc, const std::string& leaf_type) const;
  int scope_watch_any(int vc) const {
    auto& cached = scope_watch_cache[static_cast<std::size_t>(vc)];
    if (cached.first != state.binding_version() + 1) cached = {state.binding_version() + 1, scope_watch(vc, "")};
    return cached.second;
  }
  mutable std::vector<std::pair<std::uint64_t, int>> scope_watch_cache; // per VC: (version + 1, watch)
  bool old_enough(const group_entry& g, std::int64_t now_ms) const {
    return options.reserve_after_ms > 0 && g.waiting_since_ms >= 0 && now_ms - g.waiting_since_ms >= options.reserve_after_ms;
  }
  std::map<placement_class, scope_stamp> failed_classes;
  std::uint64_t failed_generation = 1;  // moves when failed_classes is cleared
  // The class hint (place_group): whether a gang of g's class failed at this scope.
  bool class_fails(group_entry& g, const scope_stamp& at, bool old);
  // A waiting gang whose pods were told a reason fails like its class where it stands (`at`,
  // `old`) though its own hint was for elsewhere: its hint moves there and is marked stale (the
  // counts in its reason moved) without a search or a copy of the reason.
  bool told_fails_like_class(group_entry& g, const scope_stamp& at, bool old);
  // Groups whose stale wait reason the last schedule() left for later, in turn.
  std::vector<group_entry*> stale;
  // Quiet rounds: the state's change count after a round that changed nothing (~0: none), a
  // pod removed or recovered since (or an extender call), and when the next waiting group
  // becomes old enough to reserve.
  std::uint64_t quiet_at = ~std::uint64_t{0};
  bool touched = true;
  std::int64_t next_old_ms = 0;
  // Groups a pod joined since the last round (ids; a group may be gone since). After a quiet
  // round only they can decide anything new: the next round examines them alone, in turn,
  // until one of them changes the state.
  std::vector<int> joined;
  std::vector<turn_key> joined_turns; // schedule()'s: theirs, sorted
  // Preempting -> allocated once every victim is gone.
  bool finish_preemption(group_entry& g);
  void release_group(group_entry& g);      // frees GPUs, reservations and VC quota
  void cancel_preemption(group_entry& g, const std::string& by);
  // Elastic gangs (note 10, scheduler_core_elastic.cpp): an attempt at the gang's full size,
  // else at its minimum; growing an allocated gang one pod at a time on free GPUs; shrinking
  // victims above their minimum instead of deleting them whole; a leaving pod gone.
  std::optional<attempt> try_sizes(group_entry& g, int max_cost, const std::set<std::string>* nodes);
  void grow(group_entry& g);
  // Which of the attempt's victims go whole (`whole`) and which only give up the pods whose GPUs
  // it needs; with `apply` those pods' slots start leaving. True when some victim shrinks.
  bool shrink_victims(group_entry& g, const attempt& a, std::set<int>& whole, bool apply);
  bool leaving_gone(group_entry& g, std::string_view uid);
  void free_slot_gpus(group_entry& g, slot& s);
  // Borrowing (note 9): whether a VC's gangs may borrow now; the notices a borrow and a
  // reclaim give; when the next reclaim falls due.
  bool can_borrow(int vc) const { return vc >= 0 && may_borrow[static_cast<std::size_t>(vc)]; }
  // GPUs a VC's gangs could borrow now, by count (whole cells of types it may still borrow
  // that lenders may still lend and hold unbound), of one leaf type ("": any). An upper bound
  // for cannot_fit; 0 says a borrow pass cannot succeed. Cached per binding_version for "".
  int borrowable(int vc, const std::string& leaf_type) const;
  // What borrowable() weighs, per VC, worked out once from the configuration: each type of its
  // borrowingLimit with its leaf type and GPUs per cell, and each VC's lendingLimit of it.
  struct borrow_term {
    std::string type, leaf_type;
    int limit = 0, leaves = 1;
    std::vector<int> lend_limit; // per VC
  };
  std::vector<std::vector<borrow_term>> borrow_terms;
  void plan_borrowing();
  mutable std::vector<std::pair<std::uint64_t, int>> borrowable_cache; // per VC: (version + 1, GPUs)
  std::vector<char> may_borrow; // per VC: borrowing is on, it has a borrowingLimit, someone lends
  void note_borrowed(const group_entry& g);
  void note_reclaim(group_entry& g, std::int64_t now_ms);
  std::int64_t next_reclaim_ms() const; // INT64_MAX: none
  std::int64_t now = 0; // schedule()'s now_ms, for pod_outcome
  // Dominant-resource fair share among a lender's borrowers (note 9): the borrower VCs whose
  // cells a reclaim pass leaves alone, all but the one with the largest share of borrowed GPUs
  // to quota; empty outside that pass.
  std::set<int> drf_spared;
  std::set<int> drf_spare_for(const group_entry& g) const;
  void downgrade(group_entry& g, const std::string& reason, const std::string& by, std::int64_t now_ms);
  std::string wait_reason(const group_entry& g) const;
  // The map of who holds what (scheduler_core_map.cpp).
  std::vector<vc_usage> vc_usages() const;
  std::vector<waiting_gang> waiting_gangs() const;
  std::vector<map_cell> map_cells() const;
  // What wait_reason says of the cluster's free GPUs for one leaf type ("" = any): node-level
  // cells' totals and, per pod size, the free slots and the per-node list when short.
  struct node_slots {
    int slots = 0;
    std::string list;  // " (node: k, ...)" when at most 16 nodes have a slot; "" otherwise
  };
  struct free_summary {
    int total = 0, free = 0, largest = 0;
    std::vector<std::pair<cell_id, int>> usable;  // node-level cells with free GPUs, tree order
    std::map<int, node_slots> by_size;             // filled on demand
  };
  free_summary count_free(const std::string& type) const;
  const node_slots& slots_of(free_summary& s, int size) const;
  // With options.shortcuts, the summaries are kept until state.avail_version() moves.
  mutable std::map<std::string, free_summary, std::less<>> free_cache;
  mutable std::map<std::string, std::pair<int, int>, std::less<>> node_sizes; // by type: GPUs, largest node
  mutable std::uint64_t free_cache_version = ~std::uint64_t{0};
  // A necessary condition for a pending group to fit, from counters: true when it cannot,
  // so that place_group answers its wait reason without searching the trees (the search
  // would fail the same way, without side effects). Opportunistic: more GPUs than are
  // available in the cluster, or a pod larger than any node's free GPUs. Guaranteed in a VC:
  // more than the VC's unused quota plus the quota its lower-priority groups hold (all a
  // preemption could free) plus the quota of its preempting groups (counted twice while their
  // victims run). Never for pinned groups, a node restriction (extender), or a group old
  // enough to reserve.
  bool cannot_fit(const group_entry& g, const std::set<std::string>* nodes, std::int64_t now_ms);
  // Per VC: the quota its guaranteed groups hold, by priority, and the part of it held by
  // preempting groups; kept by count_quota wherever a group's slots take or give back quota.
  std::vector<std::map<int, int>> vc_held;
  std::vector<int> vc_in_flight;
  // Per VC, the distinct leaf types of its cells (fixed by the configuration).
  std::vector<std::vector<std::string>> vc_leaf_types;
  static int vc_leaves(const group_entry& g);  // quota the group's slots hold
  void count_quota(const group_entry& g, int leaves);

  // --- gang topology (scheduler_core_topology.cpp; scheduler_core.hpp note 11) ------------
  // A pod joining `g` (add_pod, after add_group): checks its levels against the cells and the
  // gang's other pods, and sets g.topo up. An error refuses the pod (BadRequest).
  status topology_admit(group_entry& g, const pod_view& pod);
  // A recovered pod's subgroup onto its slot (recover_pod, after recover).
  void topology_recovered(const pod_view& pod);
  // place_group for a gang with g.topo: waits for its subgroups, searches, records relaxing.
  std::string place_topology_group(group_entry& g, const std::set<std::string>* nodes, std::int64_t now_ms);
  // try_place for a gang with g.topo: one try_place per candidate cell (combination).
  std::optional<attempt> try_place_topology(group_entry& g, int max_cost, const std::set<std::string>* nodes);
  // Whether a kept slot serves a pod of `pod`'s size and subgroup.
  bool topology_slot_fits(const group_entry& g, const slot& s, const pod_scheduling_spec& pod) const;
  json::value topology_json(const group_entry& g) const;
  // While try_place_topology runs: per member of the group, the cell its pods must lie in
  // (no_cell: anywhere). try_place's cost() refuses GPUs outside it.
  const std::vector<cell_id>* topo_within = nullptr;
  // Cells per level word, and a mark per cell, resolved once (the tree is immutable).
  struct level_cells {
    std::vector<cell_id> cells; // tree order
    std::vector<char> mark;     // by cell id
  };
  // Keyed by the exact type, or "~" + the word in lower case (one entry for all its spellings).
  std::map<std::string, level_cells, std::less<>> levels;
  std::set<std::string, std::less<>> cell_types; // every cell type of the tree, filled once
  const level_cells* level_of(const std::string& word);

  // --- groups (scheduler_core_queue.cpp; queue and unqueue above) ------------------------
  group_entry& add_group(const pod_view& pod);

  // --- bind-info and recovery (scheduler_core_recover.cpp) ---------------------------------
  // One pod's bind-info annotation: its own placement, then `group_part`, which is
  // bind_info_group_part(g) (the whole gang's placement, the same for each of its pods).
  std::string bind_info(const slot& s, const std::string& group_part) const;
  std::string bind_info_group_part(const group_entry& g) const;
  status recover(const pod_view& pod);
  void recover_grown(group_entry& g, const pod_view& pod, const std::string& node, const std::vector<int>& indices);

  // --- inspect JSON (scheduler_core_inspect.cpp) ------------------------------------------
  json::value group_json(const group_entry& g) const;
  json::value vc_json(int vc) const;
  json::value physical_json() const;
};

std::string join_indices(const std::vector<int>& v); // "1,3,4"
// A wanted leaf type ("" = any) and a cell's.
inline bool type_matches(const std::string& want, const std::string& leaf_type) {
  return want.empty() || want == leaf_type;
}
void append_joined(std::string& out, const std::vector<int>& v, std::string_view separator);

} // namespace kozmo::scheduler::detail
