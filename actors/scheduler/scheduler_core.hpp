// The scheduler's one entry point: everything the scheduler actor (direct mode) and the
// extender (kube-scheduler mode) ask of the GPU allocation core, as plain calls. Pure: no CAF,
// no I/O, no clock (callers pass `now_ms`). Not thread-safe: the scheduler actor serialises
// every call, which is what makes each allocation decision atomic.
//
// Vocabulary (HiveD's):
//  - An affinity group (gang) is allocated as a whole the first time one of its pods is
//    scheduled; its other pods then bind to the placements kept for them.
//  - Pod decisions: bind (node + GPU indices + the annotations to write at bind), preempt
//    (victim pods to delete first; the group holds their cells as reserving meanwhile), wait
//    (a reason a user can act on).
//  - Cells on bad nodes are not used for new placements (note 6 says which nodes are bad).
//  - Priorities: -1 is opportunistic, 0..1000 guaranteed. A guaranteed group uses only its
//    VC's quota (virtual cells, bound lazily to physical cells of the same type); an
//    opportunistic group uses any free healthy GPU, away from VCs' bound cells when it can.
//    Guaranteed preempts opportunistic anywhere; inside a VC higher priority preempts lower.
//    A victim with lazyPreemptionEnable is first downgraded to opportunistic (its pods keep
//    running) and killed only if its GPUs are still needed.
//  - A configuration without virtualClusters is "physical mode": any VC name is accepted and
//    the whole cluster is one shared quota (priorities still order preemption).
//
// Notes:
//  1. Pods arrive with add_pod (waiting, no node yet) or, on a restart, with recover_pod (bound,
//     carrying the bind-info annotation written when they were bound). Call recover_pod for
//     every bound pod before the first schedule(): recovery rebuilds each group exactly.
//  2. schedule() decides for every waiting pod in one call, highest priority first, then
//     oldest group first, without head-of-line blocking: a group that cannot be placed does not
//     stop later groups. A preempting group holds its victims' cells (reserving); once every
//     victim pod is removed the next schedule() binds it. A higher-priority preemptor cancels
//     a lower one; removing every pod of a preempting group gives its cells back.
//  3. remove_pod() is for a deleted pod and for a pod that finished (Succeeded/Failed): a
//     group's cells are released when it has no live pod left.
//  4. Errors: add_pod refuses a spec that cannot match the configuration (unknown virtual
//     cluster, leaf type not in it, unknown pinned cell, ...) with reason "BadRequest" and a
//     message naming the field; the pod is not queued (the caller posts an Event / answers 400).
//  5. Head of line: reservation, not aging. A group that has waited longer than
//     scheduler_options::reserve_after_ms (and could not preempt) reserves the cells it would
//     use, preferring those that are free or hold the fewest busy GPUs; nobody else may take
//     them as they free up, and it binds once all are free. One reservation per VC (and one
//     for opportunistic/physical-mode groups) at a time, the oldest waiting group's; smaller
//     groups keep using every other cell meanwhile. A higher-priority group may cancel it.
//  6. Health: until the first set_node/remove_node call every configured node counts as
//     healthy (extender mode and tests need no node feed). From the first call on, a node is
//     healthy only while its last report was set_node(node, true): nodes never reported count
//     as bad. When the healthy free cells of a chain no longer cover what the VCs are owed,
//     some of their unbound virtual cells are bound to bad cells ("doomed", Bad in
//     inspect_virtual_cluster) and unbound again when the nodes recover.
//  7. Recovery after a configuration change: a recovered group whose GPUs no longer lie in
//     its VC's quota (VC shrunk or removed, cells split, node renamed) is never dropped: it
//     comes back lazily preempted (opportunistic, lazyPreemptionStatus says why, a notice is
//     queued) and keeps its pods where they run.
//  8. GPUs held by other schedulers' pods (set_other_pods_gpus): that many of the node's GPUs
//     are out of reach, as bad hardware is (note 6: a VC's quota shrinks when the rest of its
//     chain cannot cover it), free ones first; which ones is a guess, since the device plugin
//     chose them, but the count is what the kubelet admits pods by. Inspect shows them as
//     otherPodsLeafCells, apart from badLeafCells, and wait reasons name them apart.
//  9. Borrowing on whole cells (configuration `borrowing: {enabled: true, reclaimTimeout: 30s}`,
//     per VC `lendingLimit` / `borrowingLimit: {<cellType>: <count>}`): a guaranteed group
//     whose own quota has no room (free GPUs; before it preempts its own VC's lower
//     priorities) may bind idle (unbound) virtual cells of VCs that lend that cell type, each
//     a whole quota cell, while the lender has lent fewer than its lendingLimit of that type
//     and the borrower holds fewer than its borrowingLimit; its pods prefer its own cells.
//     Its preemption pass may borrow too, preempting opportunistic pods inside the borrowed
//     cells (never another VC's guaranteed ones). The group is told Borrowed (notice).
//     A lender's guaranteed group takes a lent cell back when its own quota has no free room:
//     borrowers in it are victims whatever their priority (cheapest, like opportunistic ones;
//     never lazily downgraded), the lender's group holds the cells (Preempting) and the
//     borrowers are told Reclaimed with a deadline now + reclaimTimeout; the preempt decision
//     naming them comes at that deadline (pods that finish first free the cells sooner: no
//     kill), next_wake_ms() says when. No loop: the cells stay held by the lender while the
//     borrowers go, so a borrower cannot be placed on them again. Among several borrowers of
//     the lender, the one with the largest share (GPUs it holds in borrowed cells over its
//     quota's GPUs: dominant-resource fairness with GPUs the one resource) gives back first:
//     the reclaim pass first spares the others' cells, and only if that fails may take any.
//     After a restart a borrower's pods come back as opportunistic (note 7: their GPUs lie
//     outside the VC's quota). Inspect shows each VC's `lent` and `borrowed` cells.
// 10. Elastic gangs (kozmo.io/gang-min-members: the fewest pods; kozmo.io/gang-members the
//     most; all pods alike): placed whole when that fits with free GPUs (or borrowed ones),
//     else at the minimum, which is also all a preemption or a reservation asks for. An
//     allocated elastic gang grows one pod at a time, in its turn, onto free (or borrowable)
//     GPUs while it has pods without a place (notice Grown); it never preempts to grow. When a
//     preemption needs GPUs of an elastic gang above its minimum, only the pods on those GPUs
//     are the victims (notice Shrunk) if the rest still make its minimum; otherwise the whole
//     gang is, as any other. A shrunk pod's GPUs stay held until it is gone. Pods beyond the
//     places wait with a reason saying how many run.
// 11. Gang topology (scheduler_core_topology.cpp; pod keys kozmo.io/gang-level, preferred-level,
//     subgroup, subgroup-min-members, subgroup-level). A level names cells: a cell type of the
//     configuration (exact), else the word `node` (node-level cells), else every cell type that
//     is the word, starts with it followed by '-', '_', '.' or '/', or ends with it after one of
//     them, case-insensitive ("rack" names label-derived "rack-..." types and HiveD's
//     "V100-RACK"; "zone" does not name "OZONE"); a level no cell has is refused
//     by add_pod (BadRequest naming the key). Every pod of a gang must say the same gang-level
//     and preferred-level, and the pods of one subgroup the same subgroup-level and minimum.
//     a. gang-level (hard): every pod of the gang lies within one cell of that level; tried in
//        best-fit order (on the free pass the cells with the fewest available GPUs that still
//        have enough; on the others the most available first; at most 128 cells of a level),
//        with free GPUs, then preemption, then head-of-line reservation, as any gang (notes 2,
//        5). At most 256 whole-gang placements are tried per pass (b and c included).
//     b. Subgroups: a gang where some pod names a subgroup is placed only once all the pods
//        kozmo.io/gang-members counts are present (until then it waits, saying so); the
//        subgroups are then read from the pods, and each pod binds to a slot of its own
//        subgroup. Each subgroup with a level lies within one cell of that level, inside the
//        gang's cell; combinations are tried in best-fit order, subgroups sharing a cell only
//        while its available GPUs hold them all (free pass). Subgroups are laid out narrowest
//        level first, so that pods of one size confined to a node take their GPUs before those
//        that may use the whole rack.
//        All or nothing: the whole gang is placed or none of it; a subgroup's min-members is
//        validated and shown by inspect, but placement needs all of its pods (elastic gangs
//        are another rule).
//     c. preferred-level (soft): within one cell of that level first (inside the gang-level
//        cell when there is one; a preferred level no narrower than the gang's adds nothing),
//        else anywhere the hard rules allow, pass by pass (a free placement anywhere beats a
//        preemption inside the preferred cell); a placement outside it queues a
//        topology_relaxed notice, and inspect shows the reason ("topology.relaxed").
//     d. Topology gangs are searched again on every round (no queueing hints or class
//        shortcuts: a class of plain gangs must not inherit their failures). With virtual
//        clusters, a new virtual-cell binding is chosen as for any gang and then kept only if
//        it lies in the cell being tried, so a VC gang may wait where an unbound cell elsewhere
//        in that cell would have fitted.
//     e. After a restart, a recovered gang's slots keep the subgroups of the pods recovered on
//        them; a kept slot no recovered pod names takes any pod of its size.
#pragma once

#include "actors/scheduler/pod_scheduling_spec.hpp"
#include "k8s/error.hpp"
#include "k8s/json/value.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::scheduler {

inline constexpr const char* bind_info_annotation = keys::bind_info;
inline constexpr const char* leaf_cell_isolation_annotation = keys::leaf_cell_isolation;

struct pod_ref {
  std::string ns;
  std::string name;
  std::string uid;
  friend bool operator==(const pod_ref&, const pod_ref&) = default;
};

// What the scheduler needs to know of a pod.
struct pod_view {
  pod_ref ref;
  pod_scheduling_spec spec;
  std::string node;           // spec.nodeName; empty while waiting
  std::string bind_info;      // the bind-info annotation's text, when bound by Kozmo
  std::int64_t created_ms = 0; // creationTimestamp, for FIFO order
};

enum class decision_kind { bind, preempt, wait };

struct pod_decision {
  decision_kind kind = decision_kind::wait;
  pod_ref pod;
  std::string group;
  // bind: where, and the annotations to write on the pod with the binding.
  std::string node;
  std::string leaf_type;
  std::vector<int> leaf_indices;
  std::map<std::string, std::string> annotations;
  // preempt: pods to delete before this group can bind.
  std::vector<pod_ref> victims;
  // wait and preempt: why, in words a user can act on.
  std::string reason;
};

// Something that happened to a group outside any pod decision, for the caller to log and post
// as an Event on the group's pods.
enum class notice_kind {
  lazy_preempted,        // a higher-priority group took its VC cells: it now runs as opportunistic
  downgraded,            // recovered after a configuration change that no longer fits its VC
  preemption_cancelled,  // a higher-priority group took the cells it was preempting or reserving
  borrowed,              // it runs on idle cells of other VCs (note 9)
  reclaimed,             // a lender takes back the cells it borrowed: its pods go at a deadline
  grown,                 // an elastic gang got more pods placed (note 10)
  shrunk,                // an elastic gang gives up pods to a preemption instead of all of them
  topology_relaxed,      // placed outside its kozmo.io/preferred-level (note 11)
};

struct group_notice {
  notice_kind kind = notice_kind::lazy_preempted;
  std::string group;
  std::string message;
  std::vector<pod_ref> pods; // the group's live pods when the notice was taken
};

// What a person looking at the cluster asks (the cell map page, `kozmo status`, the metrics):
// each VC's GPUs, the gangs that wait and why, and who holds every GPU (cell_map.hpp turns it
// into the page's JSON).
struct vc_usage {
  std::string name;
  int guaranteed = 0; // GPUs of its cells (its quota)
  int used = 0;       // of those, held by its guaranteed gangs
  int free = 0;       // of those, neither used nor on bad hardware
  int borrowed = 0;   // GPUs its gangs hold outside its quota: opportunistic, and in borrowed cells
  int lent = 0;       // GPUs of its cells that other VCs' gangs borrowed (part of `used`)
};

struct waiting_gang {
  std::string name;
  std::string vc;          // "" in physical mode
  int priority = 0;
  int pods = 0;            // pods present
  int gpus = 0;            // GPUs the whole gang asks for
  std::string reason;      // what its pods were told last
  // A short fixed word (a metric label): VirtualClusterFull, ClusterFull, Preempting,
  // Reserving, Opportunistic.
  std::string reason_kind;
  std::int64_t since_ms = 0; // when its first pod arrived
};

// A GPU's state on the map: free, held by a guaranteed gang, by an opportunistic one, reserved
// for a preemption, held by a gang being preempted, on a bad node, held by another scheduler's
// pod.
enum class gpu_state : char {
  free = 'f', bound = 'b', opportunistic = 'o', reserved = 'r', preempting = 'p', bad = 'x', other = 'e'
};

// Consecutive GPUs of a node (tree order) alike: same state and gang.
struct gpu_run {
  gpu_state state = gpu_state::free;
  int count = 0;
  std::string gang; // holder or reserver ("" when free, bad or another scheduler's)
  std::string vc;   // the gang's VC
  friend bool operator==(const gpu_run&, const gpu_run&) = default;
};

// A physical cell, parents before children. Node-level cells have `node` and their GPUs;
// the cells above have neither (the page sums their children).
struct map_cell {
  std::string address;
  std::string type;
  int parent = -1; // index into cell_map::cells
  std::string node;
  std::vector<gpu_run> gpus;
};

struct cell_map {
  std::vector<vc_usage> vcs;
  std::vector<waiting_gang> waiting; // in their turn: highest priority, then oldest
  std::vector<map_cell> cells;
};

// The Event a notice becomes on each of its pods: reason "LazyPreempted" / "Downgraded"
// (Warning), "PreemptionCancelled" or "TopologyRelaxed" (Normal).
inline const char* event_reason(notice_kind k) {
  switch (k) {
  case notice_kind::lazy_preempted: return "LazyPreempted";
  case notice_kind::downgraded: return "Downgraded";
  case notice_kind::preemption_cancelled: return "PreemptionCancelled";
  case notice_kind::borrowed: return "Borrowed";
  case notice_kind::reclaimed: return "Reclaimed";
  case notice_kind::grown: return "Grown";
  case notice_kind::shrunk: return "Shrunk";
  case notice_kind::topology_relaxed: return "TopologyRelaxed";
  }
  return "Scheduling";
}
inline const char* event_type(notice_kind k) {
  return k == notice_kind::lazy_preempted || k == notice_kind::downgraded || k == notice_kind::reclaimed ||
                 k == notice_kind::shrunk
             ? "Warning"
             : "Normal";
}

// What remove_pod changed, so that the caller keeps no mirror of the core.
struct pod_removal {
  std::string group;           // the pod's group; empty when the core did not know the pod
  bool group_released = false; // it was the group's last live pod: its cells are free again
};

struct scheduler_options {
  // Head-of-line reservation (note 5): a group waiting longer than this starts holding the
  // cells it will use as they free up, so smaller groups cannot starve it. <= 0 disables.
  std::int64_t reserve_after_ms = 5 * 60 * 1000;
  // Counters and caches that answer without a search: a waiting group that cannot fit by the
  // counts (more GPUs than the cluster has available, a pod larger than any node's free GPUs,
  // more than its VC's unused quota plus what lower priorities hold) gets its wait reason
  // without a search of the cell trees, and wait reasons reuse the count of free GPUs per node
  // until a GPU's availability changes. Off only to check that the decisions are the same.
  bool shortcuts = true;
  // With shortcuts, a group that still cannot fit for the same reason as its class (only
  // the counts in its wait reason moved) has the new reason said within this many groups per
  // schedule(); the others keep the reason they were told until a later round (the actor runs
  // one at once while stale_reasons() > 0). A backlog of thousands then costs a round what
  // the changes cost, not a new message for every waiting pod after every bind.
  std::size_t reason_refreshes_per_round = 128;
};

class scheduler_core {
public:
  // Loads HiveD's YAML configuration (unchanged); errors name the offending cell or VC.
  static expected<scheduler_core> load(std::string_view config_yaml);
  // The configuration's forcePodBindThreshold (HiveD's bind retries before a forced bind).
  int force_pod_bind_threshold() const;

  scheduler_core(scheduler_core&&) noexcept;
  scheduler_core& operator=(scheduler_core&&) noexcept;
  ~scheduler_core();

  void set_options(const scheduler_options& options);

  // Node health: healthy = present, Ready=True and schedulable (note 6). Names not in the
  // configuration are remembered but change nothing. True when the report changed which GPUs
  // count as healthy (a status heartbeat of a node that stays Ready does not): only then can
  // a waiting pod have a new chance.
  bool set_node(std::string_view node, bool healthy);
  bool remove_node(std::string_view node);
  // GPUs that pods bound by other schedulers hold on a node (note 8); 0 when none. True when
  // it changed which GPUs can be had.
  bool set_other_pods_gpus(std::string_view node, int gpus);
  int other_pods_gpus(std::string_view node) const;

  // Note 1. Errors: no or unreadable bind-info, GPUs already taken by another group. A
  // placement the configuration no longer has (unknown node or GPU) is not an error (note 7).
  status recover_pod(const pod_view& pod);
  // A waiting pod (note 4).
  status add_pod(const pod_view& pod);
  // A pod that joins a group already placed takes one of the group's kept slots at once: its
  // GPUs are held, so no round has to weigh it against the others (a gang's later pods do
  // not wait behind a backlog). The bind, as schedule() would decide it; nullopt when the
  // pod is unknown or decided, its group is not allocated, or no slot of its size is free.
  std::optional<pod_decision> bind_placed(std::string_view uid);
  // Note 3. Unknown uid: no-op (an empty removal).
  pod_removal remove_pod(std::string_view uid);
  // A bind decided earlier has been written (Binding -> Bound).
  void pod_bound(std::string_view uid);

  // Note 2. Decisions for the pods that changed state: a pod keeps waiting silently when its
  // reason did not change since the last call.
  std::vector<pod_decision> schedule(std::int64_t now_ms);
  // Waiting groups whose new wait reason the last schedule() left for a later round.
  std::size_t stale_reasons() const;
  // When a schedule() would decide something new though nothing else happens (a reclaim's
  // deadline, note 9); nullopt when nothing is due.
  std::optional<std::int64_t> next_wake_ms() const;
  // The extender's filter: one pod, placed only on `suggested_nodes` (all nodes when empty or
  // when the pod's spec ignores kube-scheduler's suggestions). The restriction applies when
  // the group is placed; a pod whose group is already placed gets its kept slot. Asking again
  // for a pod already decided returns the same bind (filter calls are retried).
  pod_decision schedule_one(std::string_view uid, const std::vector<std::string>& suggested_nodes,
                            std::int64_t now_ms);

  // The group a pod belongs to; empty for an unknown pod.
  std::string group_of(std::string_view uid) const;
  // Pods known to the core that have no bind decision yet (waiting or preempting).
  std::size_t waiting_pods() const;
  // Groups holding GPUs (allocated or preempting).
  std::size_t placed_groups() const;

  // Notices since the last call (oldest first), each with the group's pods as they are now;
  // the list is cleared. Call it after every mutating call.
  std::vector<group_notice> take_notices();

  // The map of who holds what (cell_map above); vc_usages and waiting_gangs are its parts.
  cell_map map() const;
  std::vector<vc_usage> vc_usages() const;
  std::vector<waiting_gang> waiting_gangs() const;

  // Inspect answers, shaped like HiveD's /v1/inspect/... JSON.
  json::value inspect_groups() const;
  expected<json::value> inspect_group(std::string_view name) const;
  json::value inspect_physical_cluster() const;
  json::value inspect_virtual_clusters() const;
  expected<json::value> inspect_virtual_cluster(std::string_view vc) const;

private:
  struct impl;
  explicit scheduler_core(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

} // namespace kozmo::scheduler
