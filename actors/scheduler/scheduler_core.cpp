// The facade: pods and affinity groups, their decisions, and the calls the actors make. The
// placement rules live in scheduler_core_place.cpp, the waiting order in scheduler_core_queue.cpp,
// bind-info and recovery in scheduler_core_recover.cpp, inspect in scheduler_core_inspect.cpp,
// cluster-wide bookkeeping in cluster_state.cpp.
#include "actors/scheduler/scheduler_core.hpp"

#include "actors/scheduler/scheduler_core_impl.hpp"

#include <algorithm>
#include <set>
#include <limits>
#include <tuple>

namespace kozmo::scheduler {

using detail::group_entry;
using detail::group_state;
using detail::pod_entry;
using detail::slot;

struct scheduler_core::impl : detail::core_impl {
  using core_impl::core_impl;

  void drop_group_if_empty(const std::string& name) {
    auto it = groups.find(name);
    if (it == groups.end() || !it->second.pods.empty()) return;
    release_group(it->second);
    by_id.erase(it->second.id);
    unqueue(it->second);
    groups.erase(it);
  }

  status validate(const pod_scheduling_spec& spec) const {
    if (spec.leaf_cell_number <= 0) return error::bad_request("leafCellNumber must be at least 1");
    if (spec.min_members > 0 && (spec.members.size() != 1 || spec.min_members > spec.members.front().pod_number))
      return error::bad_request("an elastic gang (kozmo.io/gang-min-members " + std::to_string(spec.min_members) +
                                ") needs pods that all ask the same GPUs and at least that many of them");
    if (spec.priority < -1 || spec.priority > 1000)
      return error::bad_request("priority must be -1 (opportunistic) or 0..1000, got " +
                                std::to_string(spec.priority));
    if (!spec.leaf_cell_type.empty()) {
      auto info = model.tree.type_info(spec.leaf_cell_type);
      if (!info || !info->is_leaf)
        return error::bad_request("leafCellType '" + spec.leaf_cell_type +
                                  "' is not a leaf cell type of the cluster");
    }
    if (physical_mode()) {
      if (!spec.pinned_cell_id.empty() && !model.tree.find_pinned(spec.pinned_cell_id))
        return error::bad_request("pinnedCellId '" + spec.pinned_cell_id + "' does not exist");
      return ok;
    }
    auto vc = std::find_if(model.vcs.begin(), model.vcs.end(),
                           [&](const virtual_cluster& v) { return v.name == spec.virtual_cluster; });
    if (vc == model.vcs.end())
      return error::bad_request("virtualCluster '" + spec.virtual_cluster + "' does not exist");
    if (!spec.pinned_cell_id.empty() &&
        std::find(vc->pinned_ids.begin(), vc->pinned_ids.end(), spec.pinned_cell_id) == vc->pinned_ids.end())
      return error::bad_request("pinnedCellId '" + spec.pinned_cell_id +
                                "' is not a pinned cell of virtualCluster '" + vc->name + "'");
    if (!spec.leaf_cell_type.empty()) {
      const auto v = static_cast<std::size_t>(vc - model.vcs.begin());
      bool found = false;
      for (int index : state.vc_cells_of[v]) found = found || state.vc_cells[index].leaf_type == spec.leaf_cell_type;
      if (!found)
        return error::bad_request("virtualCluster '" + vc->name + "' has no " + spec.leaf_cell_type + " cells");
    }
    return ok;
  }

  void tell(group_entry& g, const std::string& reason, std::vector<pod_decision>& out);

  // A stale hint's reason said anew (the state is what it was when the hint was taken).
  const std::string& refresh_reason(group_entry& g) {
    g.hint->reason = wait_reason(g);
    g.hint->stale = false;
    g.told = false;
    return g.hint->reason;
  }

  pod_decision make(decision_kind kind, const pod_entry& p, const group_entry& g, std::string reason) const {
    pod_decision d;
    d.kind = kind;
    d.pod = p.view.ref;
    d.group = g.name;
    d.reason = std::move(reason);
    return d;
  }

  // `group_part`: the group's share of the bind-info, the same for each of its pods; worked
  // out on the first bind decision and reused for the others of the same round.
  pod_decision bind_decision(pod_entry& p, group_entry& g, slot& s, std::optional<std::string>& group_part) {
    s.pod_uid = p.view.ref.uid;
    if (!p.decided) --undecided;
    p.decided = true;
    p.last_reason.clear();
    pod_decision d = make(decision_kind::bind, p, g, {});
    d.node = s.place.node;
    d.leaf_type = s.place.leaf_type;
    d.leaf_indices = s.place.leaf_indices;
    if (!group_part) group_part = bind_info_group_part(g);
    d.annotations[bind_info_annotation] = bind_info(s, *group_part);
    d.annotations[leaf_cell_isolation_annotation] = detail::join_indices(s.place.leaf_indices);
    return d;
  }

  // How many GPUs of `node` other schedulers' pods hold beyond what nobody of ours owns: GPUs our
  // groups keep for pods not yet bound that such pods took meanwhile (note 8). A pod bound there
  // would be refused by the kubelet (OutOfnvidia.com/gpu), again and again if its controller
  // recreates it: it waits for them instead. 0 in the common case (no other pods on the node).
  int kept_gpus_taken(const slot& s) const {
    const int foreign = state.foreign_gpus(s.place.node);
    if (foreign == 0) return 0;
    const std::vector<cell_id> leaves = state.tree().leaf_cells_of(s.place.node);
    int assigned = 0; // leaves of slots whose pod is bound (or being bound) on this node
    std::set<int> seen;
    for (cell_id leaf : leaves) {
      int gid = state.owner[leaf];
      if (gid < 0 || !seen.insert(gid).second) continue;
      auto it = by_id.find(gid);
      if (it == by_id.end()) continue;
      for (const auto& other : it->second->slots)
        if (!other.pod_uid.empty() && other.place.node == s.place.node)
          assigned += static_cast<int>(other.place.leaves.size());
    }
    const int room = static_cast<int>(leaves.size()) - foreign - assigned;
    const int need = static_cast<int>(s.place.leaves.size());
    return need > room ? need - std::max(room, 0) : 0;
  }

  slot* free_slot(group_entry& g, const pod_scheduling_spec& pod) {
    for (auto& s : g.slots)
      if (s.pod_uid.empty() && (g.topo ? topology_slot_fits(g, s, pod)
                                       : g.spec.members[s.member].leaf_cell_number == pod.leaf_cell_number))
        return &s;
    return nullptr;
  }

  // Live pods of the groups `g` preempts.
  std::vector<pod_ref> victim_pods(const group_entry& g) const {
    std::vector<pod_ref> out;
    for (int v : g.victims) {
      auto it = by_id.find(v);
      if (it == by_id.end()) continue;
      // An elastic victim that shrinks gives up only some of its pods (note 10).
      if (auto only = g.shrinking.find(v); only != g.shrinking.end()) {
        for (const auto& uid : only->second)
          if (auto p = pods.find(uid); p != pods.end()) out.push_back(p->second.view.ref);
        continue;
      }
      for (const auto& uid : it->second->pods)
        if (auto p = pods.find(uid); p != pods.end()) out.push_back(p->second.view.ref);
    }
    return out;
  }

  struct preempt_words {
    decision_kind kind = decision_kind::wait;
    std::string why;
    std::vector<pod_ref> victims;
  };
  std::optional<preempt_words> told_preempt; // the current tell's (or extender call's)
  // What a preempting group's pods are told: waiting on a reclaim's deadline or a reservation,
  // or the preemption with its victims.
  preempt_words preempt_words_of(const group_entry& g) {
    int gpus = 0;
    std::vector<const std::string*> nodes; // by name, once each
    for (const auto& s : g.slots) {
      gpus += static_cast<int>(s.place.leaves.size());
      nodes.push_back(&s.place.node);
    }
    std::sort(nodes.begin(), nodes.end(), [](const std::string* a, const std::string* b) { return *a < *b; });
    nodes.erase(std::unique(nodes.begin(), nodes.end(), [](const std::string* a, const std::string* b) { return *a == *b; }),
                nodes.end());
    std::string where;
    for (const std::string* n : nodes) {
      if (!where.empty()) where += ", ";
      where += *n;
    }
    if (g.reclaim_due_ms > now) {
      std::string lent_to;
      for (int v : g.victims)
        if (const group_entry* q = group(v); q && q->vc >= 0 && lent_to.find(model.vcs[q->vc].name) == std::string::npos)
          lent_to += (lent_to.empty() ? "" : ", ") + model.vcs[q->vc].name;
      return {decision_kind::wait,
              "reclaiming " + std::to_string(gpus) + " GPUs on " + where + " lent to VC " + lent_to + " for the gang '" +
                  g.name + "': their pods are deleted in " + std::to_string((g.reclaim_due_ms - now + 999) / 1000) +
                  "s unless they finish first",
              {}};
    }
    if (g.reserving)
      return {decision_kind::wait,
              "the gang '" + g.name + "' waited past its turn and reserves " + std::to_string(gpus) + " GPUs on " +
                  where + "; it binds as soon as the pods running there finish",
              {}};
    auto victims = victim_pods(g);
    std::string why = "preempting " + std::to_string(victims.size()) + " lower-priority pod(s) to free " +
                      std::to_string(gpus) + " GPUs on " + where + " for the gang '" + g.name + "'";
    return {decision_kind::preempt, std::move(why), std::move(victims)};
  }

  // The decision for one waiting pod of a group that has been through placement. `quiet`:
  // nothing when the pod's last reason is unchanged.
  std::optional<pod_decision> pod_outcome(pod_entry& p, group_entry& g, const std::string& reason, bool quiet,
                                          std::optional<std::string>& group_part) {
    // `victims`: a preemption's, whose pods are part of what the pod was told.
    auto say = [&](decision_kind kind, std::string why,
                   std::vector<pod_ref> victims = {}) -> std::optional<pod_decision> {
      if (victims.empty()) {
        if (quiet && why == p.last_reason) return std::nullopt;
        p.last_reason = why;
      } else {
        std::string key = why;
        for (const auto& v : victims) {
          key += '|';
          key += v.uid;
        }
        if (quiet && key == p.last_reason) return std::nullopt;
        p.last_reason = std::move(key);
      }
      pod_decision d = make(kind, p, g, std::move(why));
      d.victims = std::move(victims);
      return d;
    };
    switch (g.state) {
    case group_state::allocated: {
      if (slot* s = free_slot(g, p.view.spec)) {
        if (int taken = kept_gpus_taken(*s); taken > 0)
          return say(decision_kind::wait, std::to_string(taken) + " of the GPUs affinity group '" + g.name +
                                              "' keeps for this pod on " + s->place.node +
                                              " are held by other schedulers' pods; it binds once they are free");
        return bind_decision(p, g, *s, group_part);
      }
      if (g.elastic())
        return say(decision_kind::wait, "the elastic gang '" + g.name + "' runs " + std::to_string(g.slots.size()) +
                                            " of its " + std::to_string(g.spec.members.front().pod_number) +
                                            " pods (at least " + std::to_string(g.spec.min_members) +
                                            "); this pod is placed when GPUs free up");
      return say(decision_kind::wait, "every pod of " + std::to_string(p.view.spec.leaf_cell_number) +
                                          " GPUs in affinity group '" + g.name + "' is already placed");
    }
    case group_state::preempting: {
      // The same words for each pod of the group: worked out once per tell.
      if (!told_preempt) told_preempt = preempt_words_of(g);
      return say(told_preempt->kind, told_preempt->why, told_preempt->victims);
    }
    case group_state::pending:
      // The common case of a round: told this already (no copy of the reason to find out).
      if (quiet && reason == p.last_reason) return std::nullopt;
      return say(decision_kind::wait, reason);
    }
    return std::nullopt;
  }

  // Moves a group forward (place, or finish its preemption); returns the wait reason if any.
  std::string advance(group_entry& g, const std::set<std::string>* nodes, std::int64_t now_ms) {
    if (g.state == group_state::preempting) {
      // While its victims went, a GPU it was freeing went bad or was taken by another
      // scheduler's pod: it is placed again instead of binding there.
      bool usable = true;
      for (const auto& s : g.slots)
        for (cell_id leaf : s.place.leaves) usable = usable && !state.is_bad_leaf(leaf);
      if (usable) {
        finish_preemption(g);
        return {};
      }
      release_group(g);
    }
    if (g.state == group_state::allocated) {
      if (g.elastic() && !nodes) grow(g);
      return {};
    }
    if (g.waiting_since_ms < 0) g.waiting_since_ms = now_ms;
    return place_group(g, nodes, now_ms);
  }
};

scheduler_core::scheduler_core(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
scheduler_core::scheduler_core(scheduler_core&&) noexcept = default;
scheduler_core& scheduler_core::operator=(scheduler_core&&) noexcept = default;
scheduler_core::~scheduler_core() = default;

expected<scheduler_core> scheduler_core::load(std::string_view config_yaml) {
  auto model = load_cluster_model(config_yaml);
  if (!model) return model.err();
  return scheduler_core(std::make_unique<impl>(std::move(*model)));
}

int scheduler_core::force_pod_bind_threshold() const { return impl_->model.cfg.force_pod_bind_threshold; }

void scheduler_core::set_options(const scheduler_options& options) {
  impl_->options = options;
  impl_->touched = true;
}

bool scheduler_core::set_node(std::string_view node, bool healthy) {
  return impl_->state.set_health(std::string(node), healthy);
}

bool scheduler_core::remove_node(std::string_view node) { return impl_->state.set_health(std::string(node), false); }

bool scheduler_core::set_other_pods_gpus(std::string_view node, int gpus) {
  return impl_->state.set_foreign(std::string(node), gpus);
}

int scheduler_core::other_pods_gpus(std::string_view node) const { return impl_->state.foreign_gpus(node); }

status scheduler_core::add_pod(const pod_view& pod) {
  auto& d = *impl_;
  if (auto valid = d.validate(pod.spec); !valid) return valid.err();
  if (d.pods.count(pod.ref.uid)) return ok;
  group_entry& g = d.add_group(pod);
  const auto& members = g.spec.members;
  if (std::none_of(members.begin(), members.end(), [&](const affinity_member& m) {
        return m.leaf_cell_number == pod.spec.leaf_cell_number;
      })) {
    auto name = g.name;
    d.drop_group_if_empty(name);
    return error::bad_request("affinity group '" + pod.spec.affinity_group + "' has no member of " +
                              std::to_string(pod.spec.leaf_cell_number) + " GPUs");
  }
  if (auto topology = d.topology_admit(g, pod); !topology) {
    auto name = g.name;
    d.drop_group_if_empty(name);
    return topology.err();
  }
  g.pods.insert(pod.ref.uid);
  d.pods[pod.ref.uid] = pod_entry{pod, g.name, false, false, {}};
  ++d.undecided;
  g.told = false;
  if (!g.turn) d.queue(g);
  // Many arrivals make the next round a full one anyway; and the extender, which never runs
  // schedule(), must not grow the list without end.
  constexpr std::size_t joined_max = 1024;
  if (d.joined.size() < joined_max) {
    d.joined.push_back(g.id);
  } else {
    d.joined.clear();
    d.touched = true;
  }
  return ok;
}

std::optional<pod_decision> scheduler_core::bind_placed(std::string_view uid) {
  auto& d = *impl_;
  auto it = d.pods.find(uid);
  if (it == d.pods.end() || it->second.decided) return std::nullopt;
  pod_entry& p = it->second;
  group_entry& g = d.groups.find(p.group)->second;
  if (g.state != group_state::allocated) return std::nullopt;
  slot* s = d.free_slot(g, p.view.spec);
  if (!s || d.kept_gpus_taken(*s) > 0) return std::nullopt; // schedule() says why
  std::optional<std::string> group_part;
  pod_decision out = d.bind_decision(p, g, *s, group_part);
  d.unqueue_if_decided(g);
  return out;
}

status scheduler_core::recover_pod(const pod_view& pod) {
  impl_->touched = true;
  impl_->state.settle();
  auto recovered = impl_->recover(pod);
  if (recovered) impl_->topology_recovered(pod);
  return recovered;
}

pod_removal scheduler_core::remove_pod(std::string_view uid) {
  auto& d = *impl_;
  d.touched = true;
  pod_removal out;
  auto it = d.pods.find(uid);
  if (it == d.pods.end()) return out;
  out.group = it->second.group;
  if (!it->second.decided) --d.undecided;
  d.pods.erase(it);
  auto g = d.groups.find(out.group);
  if (g == d.groups.end()) return out;
  g->second.pods.erase(std::string(uid));
  for (auto& s : g->second.slots)
    if (s.pod_uid == uid) s.pod_uid.clear();
  if (!g->second.leaving.empty()) d.leaving_gone(g->second, uid); // its GPUs free now (note 10)
  out.group_released = g->second.pods.empty();
  d.drop_group_if_empty(out.group);
  return out;
}

void scheduler_core::pod_bound(std::string_view uid) {
  if (auto it = impl_->pods.find(uid); it != impl_->pods.end()) it->second.bound = true;
}

// The pods of a group that has been through placement (advance) hear their decisions.
void scheduler_core::impl::tell(group_entry& g, const std::string& reason, std::vector<pod_decision>& out) {
  told_preempt.reset();
  bool undecided = false;
  std::optional<std::string> group_part;
  for (const auto& uid : g.pods) {
    pod_entry& p = pods.at(uid);
    if (p.decided) continue;
    if (auto dec = pod_outcome(p, g, reason, true, group_part)) out.push_back(std::move(*dec));
    undecided = undecided || !p.decided;
  }
  g.told = g.state == group_state::pending && g.hint && g.hint->reason == reason;
  if (!undecided) unqueue(g);
}

std::vector<pod_decision> scheduler_core::schedule(std::int64_t now_ms) {
  auto& d = *impl_;
  std::vector<pod_decision> out;
  std::size_t refreshes = d.options.reason_refreshes_per_round;
  d.now = now_ms;
  // Doomed cells worked out once for every node report and release since the last decision.
  d.state.settle();
  const std::uint64_t start = d.state.stamp().changes;
  // Since a round that changed nothing, nothing happened but (maybe) pods joining groups.
  const bool quiet_since = d.options.shortcuts && !d.touched && start == d.quiet_at && now_ms < d.next_old_ms;
  if (quiet_since && d.joined.empty()) {
    // Nothing happened since a round that changed nothing: every waiting group would fail as
    // it did. Only stale wait reasons are left to say, within the budget, in turn.
    std::size_t k = 0;
    for (; k < d.stale.size() && refreshes > 0; ++k) {
      group_entry& g = *d.stale[k];
      if (g.state != group_state::pending || !g.hint || !g.hint->stale) continue;
      --refreshes;
      d.tell(g, d.refresh_reason(g), out);
    }
    d.stale.erase(d.stale.begin(), d.stale.begin() + static_cast<std::ptrdiff_t>(k));
    return out;
  }
  // Groups with a pod still waiting for a decision, in their turn as the round starts.
  // `waiting` keeps its order and keys through the round (a removal only clears an entry's group).
  const auto& waiting = d.waiting_in_turn();
  std::vector<group_entry*>& order = d.order_scratch;
  order.resize(waiting.size());
  for (std::size_t i = 0; i < waiting.size(); ++i) order[i] = waiting[i].second;
  // Nothing happened since a quiet round but pods joining groups: the others would fail as
  // they did, so only the groups joined are examined, until one of them changes the state;
  // from there on every group in turn, as in any round. Stale reasons stay for the rounds
  // that catch up on them.
  const bool joined_only = quiet_since;
  auto& joined = d.joined_turns;
  joined.clear();
  if (joined_only) {
    for (int id : d.joined)
      if (const group_entry* g = d.group(id); g && g->turn) joined.push_back(*g->turn);
    std::sort(joined.begin(), joined.end());
  } else {
    d.stale.clear();
    d.next_old_ms = std::numeric_limits<std::int64_t>::max();
  }
  d.joined.clear();
  d.touched = false;
  std::size_t next_joined = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    group_entry* g = order[i];
    if (joined_only && d.state.stamp().changes == start) {
      const auto& turn = waiting[i].first;
      while (next_joined < joined.size() && joined[next_joined] < turn) ++next_joined;
      if (next_joined == joined.size()) break;
      if (joined[next_joined] != turn) continue;
    }
    d.state.settle();
    auto note_age = [&] {
      if (g->state == group_state::preempting && g->reclaim_due_ms > now_ms)
        d.next_old_ms = std::min(d.next_old_ms, g->reclaim_due_ms);
      if (g->state == group_state::pending && d.options.reserve_after_ms > 0 && g->waiting_since_ms >= 0 &&
          !d.old_enough(*g, now_ms))
        d.next_old_ms = std::min(d.next_old_ms, g->waiting_since_ms + d.options.reserve_after_ms);
    };
    // Told, and nothing it depends on changed: placing it would say the same (queueing hints).
    // Told, and a gang of its class failed where it stands now: it would fail too (its hint
    // turns stale). A stale reason (the counts in it moved) is said again within the budget,
    // else later: no placement, and no copy of the reason to find that out (a backlog holds
    // thousands). Where it stands is worked out once for both.
    if (g->state == group_state::pending && g->told && g->hint && d.options.shortcuts) {
      const bool old = d.old_enough(*g, now_ms);
      const detail::scope_stamp at = d.scope_of(*g);
      if ((g->hint->at == at && g->hint->old == old) || d.told_fails_like_class(*g, at, old)) {
        note_age();
        if (!g->hint->stale) continue;
        if (refreshes == 0) {
          d.stale.push_back(g);
          continue;
        }
        --refreshes;
        d.tell(*g, d.refresh_reason(*g), out);
        continue;
      }
    }
    std::string reason = d.advance(*g, nullptr, now_ms);
    note_age();
    if (g->state == group_state::pending && g->hint && g->hint->stale) {
      // Pods told nothing yet (one just joined) hear it now, whatever the budget.
      if (refreshes == 0 && g->told) {
        d.stale.push_back(g);
        continue;
      }
      if (refreshes > 0) --refreshes;
      reason = d.refresh_reason(*g);
    }
    // Still pending on the reason its pods were told: nothing to say (queueing hints).
    if (g->state == group_state::pending && g->told) continue;
    d.tell(*g, reason, out);
  }
  // A round that changed nothing makes the next one quiet unless something happens first.
  d.quiet_at = d.state.stamp().changes == start ? start : ~std::uint64_t{0};
  return out;
}

std::optional<std::int64_t> scheduler_core::next_wake_ms() const {
  const std::int64_t due = impl_->next_reclaim_ms();
  if (due == std::numeric_limits<std::int64_t>::max()) return std::nullopt;
  return due;
}

pod_decision scheduler_core::schedule_one(std::string_view uid, const std::vector<std::string>& suggested_nodes,
                                          std::int64_t now_ms) {
  auto& d = *impl_;
  d.touched = true;
  d.now = now_ms;
  d.state.settle();
  auto it = d.pods.find(uid);
  pod_decision out;
  if (it == d.pods.end()) {
    out.reason = "unknown pod";
    return out;
  }
  pod_entry& p = it->second;
  group_entry& g = d.groups.find(p.group)->second;
  std::optional<std::string> group_part;
  if (p.decided) {
    for (auto& s : g.slots)
      if (s.pod_uid == p.view.ref.uid) return d.bind_decision(p, g, s, group_part);
  }
  std::set<std::string> nodes(suggested_nodes.begin(), suggested_nodes.end());
  const bool restrict = !suggested_nodes.empty() && !p.view.spec.ignore_k8s_suggested_nodes;
  std::string reason = d.advance(g, restrict ? &nodes : nullptr, now_ms);
  if (restrict && g.state == group_state::pending)
    reason += " (only kube-scheduler's " + std::to_string(nodes.size()) + " suggested node(s) considered)";
  d.told_preempt.reset();
  auto dec = d.pod_outcome(p, g, reason, false, group_part);
  g.told = false;
  d.unqueue_if_decided(g);
  return dec ? std::move(*dec) : out;
}

std::string scheduler_core::group_of(std::string_view uid) const {
  auto it = impl_->pods.find(uid);
  return it == impl_->pods.end() ? std::string() : it->second.group;
}

std::size_t scheduler_core::waiting_pods() const { return impl_->undecided; }

std::size_t scheduler_core::stale_reasons() const { return impl_->stale.size(); }

std::size_t scheduler_core::placed_groups() const { return impl_->placed; }

std::vector<group_notice> scheduler_core::take_notices() {
  std::vector<group_notice> out;
  out.swap(impl_->notices);
  for (auto& n : out) {
    auto g = impl_->groups.find(n.group);
    if (g == impl_->groups.end()) continue;
    for (const auto& uid : g->second.pods)
      if (auto p = impl_->pods.find(uid); p != impl_->pods.end()) n.pods.push_back(p->second.view.ref);
  }
  return out;
}

json::value scheduler_core::inspect_groups() const {
  json::array items;
  for (const auto& [name, g] : impl_->groups) items.push_back(impl_->group_json(g));
  return items;
}

expected<json::value> scheduler_core::inspect_group(std::string_view name) const {
  auto it = impl_->groups.find(name);
  if (it == impl_->groups.end()) return error::not_found("affinity group '" + std::string(name) + "' does not exist");
  return impl_->group_json(it->second);
}

cell_map scheduler_core::map() const {
  impl_->state.settle();
  return {impl_->vc_usages(), impl_->waiting_gangs(), impl_->map_cells()};
}

std::vector<vc_usage> scheduler_core::vc_usages() const {
  impl_->state.settle();
  return impl_->vc_usages();
}

std::vector<waiting_gang> scheduler_core::waiting_gangs() const { return impl_->waiting_gangs(); }

// The inspect views settle first: they show which cells are doomed (Bad) right after a node
// report, not after the next round. Settling changes no placement a caller can see otherwise.
json::value scheduler_core::inspect_physical_cluster() const {
  impl_->state.settle();
  return impl_->physical_json();
}

json::value scheduler_core::inspect_virtual_clusters() const {
  impl_->state.settle();
  json::object o;
  for (std::size_t v = 0; v < impl_->model.vcs.size(); ++v)
    o.set(impl_->model.vcs[v].name, impl_->vc_json(static_cast<int>(v)));
  return o;
}

expected<json::value> scheduler_core::inspect_virtual_cluster(std::string_view vc) const {
  impl_->state.settle();
  for (std::size_t v = 0; v < impl_->model.vcs.size(); ++v)
    if (impl_->model.vcs[v].name == vc) return impl_->vc_json(static_cast<int>(v));
  return error::not_found("virtual cluster '" + std::string(vc) + "' does not exist");
}

} // namespace kozmo::scheduler
