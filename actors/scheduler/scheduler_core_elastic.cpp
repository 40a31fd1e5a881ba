// Elastic gangs (scheduler_core.hpp note 10): placed at their full size when it fits, else at
// their minimum; grown one pod at a time on free GPUs; shrunk toward the minimum, pod by pod,
// when a preemption needs their GPUs, before they are deleted whole.
#include "actors/scheduler/scheduler_core_impl.hpp"

#include <algorithm>

namespace kozmo::scheduler::detail {
namespace {

std::string pods_phrase(int n) { return std::to_string(n) + (n == 1 ? " pod" : " pods"); }

} // namespace

std::optional<attempt> core_impl::try_sizes(group_entry& g, int max_cost, const std::set<std::string>* nodes) {
  if (!g.elastic()) return try_place(g, max_cost, nodes);
  // Free and borrow passes try the whole gang first; a preemption or a reservation is only
  // ever for the minimum (what the gang is guaranteed).
  if (max_cost == 0 || max_cost == 3)
    if (auto a = try_place(g, max_cost, nodes)) return a;
  g.placing = {{g.spec.min_members, g.spec.members.front().leaf_cell_number}};
  auto a = try_place(g, max_cost, nodes);
  g.placing.clear();
  return a;
}

void core_impl::grow(group_entry& g) {
  const int most = g.spec.members.front().pod_number;
  const int gpus = g.spec.members.front().leaf_cell_number;
  // Slots for the pods present (a pod deleted by a shrink comes back as a new one).
  const int want = std::min(most, static_cast<int>(g.pods.size() - g.leaving.size()));
  const int before = static_cast<int>(g.slots.size());
  int have = before;
  while (have < want) {
    g.placing = {{1, gpus}};
    auto a = try_place(g, 0, nullptr);
    if (!a && can_borrow(g.vc) && g.guaranteed() && borrowable(g.vc, g.spec.leaf_cell_type) > 0)
      a = try_place(g, 3, nullptr);
    g.placing.clear();
    if (!a) break;
    count_quota(g, take_gpus(g, a->slots));
    for (auto& s : a->slots) {
      s.member = 0;
      g.slots.push_back(std::move(s));
    }
    ++have;
  }
  if (have > before)
    notices.push_back({notice_kind::grown, g.name,
                       "grew from " + pods_phrase(before) + " to " + std::to_string(have) + " (at least " +
                           std::to_string(g.spec.min_members) + ", at most " + std::to_string(most) +
                           "): GPUs freed up",
                       {}});
}

bool core_impl::shrink_victims(group_entry& g, const attempt& a, std::set<int>& whole, bool apply) {
  std::set<cell_id> needed;
  for (const auto& s : a.slots) needed.insert(s.place.leaves.begin(), s.place.leaves.end());
  bool any = false;
  for (int v : a.victims) {
    group_entry* q = group(v);
    if (!q || !q->elastic() || q->state != group_state::allocated) {
      whole.insert(v);
      continue;
    }
    std::vector<std::size_t> give; // slots holding GPUs the attempt needs
    for (std::size_t i = 0; i < q->slots.size(); ++i)
      if (std::any_of(q->slots[i].place.leaves.begin(), q->slots[i].place.leaves.end(),
                      [&](cell_id leaf) { return needed.count(leaf) > 0; }))
        give.push_back(i);
    if (static_cast<int>(q->slots.size() - give.size()) < q->spec.min_members) {
      whole.insert(v);
      continue;
    }
    any = true;
    if (!apply) continue;
    const int before = static_cast<int>(q->slots.size());
    std::vector<std::string>& pods_to_go = g.shrinking[v];
    for (auto it = give.rbegin(); it != give.rend(); ++it) {
      slot s = std::move(q->slots[*it]);
      q->slots.erase(q->slots.begin() + static_cast<std::ptrdiff_t>(*it));
      if (s.pod_uid.empty()) {
        free_slot_gpus(*q, s); // kept for a pod not there yet: nothing to delete
        continue;
      }
      pods_to_go.push_back(s.pod_uid);
      q->leaving.push_back(std::move(s));
    }
    notices.push_back({notice_kind::shrunk, q->name,
                       "shrank from " + pods_phrase(before) + " to " + std::to_string(q->slots.size()) +
                           " (at least " + std::to_string(q->spec.min_members) + ") for gang '" + g.name +
                           "' (priority " + std::to_string(g.priority()) + "): " + std::to_string(pods_to_go.size()) +
                           " of its pods are deleted",
                       {}});
  }
  return any;
}

void core_impl::free_slot_gpus(group_entry& g, slot& s) {
  for (cell_id leaf : s.place.leaves) {
    if (state.owner[leaf] == g.id) state.set_owner(leaf, -1);
    if (state.reserver[leaf] == g.id) state.set_reserver(leaf, -1);
  }
  if (s.vc_cell >= 0) {
    state.release_use(s.vc_cell, static_cast<int>(s.place.leaves.size()), s.borrowed);
    if (!s.borrowed) count_quota(g, -static_cast<int>(s.place.leaves.size()));
  }
  s.vc_cell = -1;
}

bool core_impl::leaving_gone(group_entry& g, std::string_view uid) {
  for (auto it = g.leaving.begin(); it != g.leaving.end(); ++it)
    if (it->pod_uid == uid) {
      free_slot_gpus(g, *it);
      g.leaving.erase(it);
      return true;
    }
  return false;
}

} // namespace kozmo::scheduler::detail
