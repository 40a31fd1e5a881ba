// Groups and their turn: a group's entry, created by its first pod (waiting or recovered), and
// the waiting order a round walks (core_impl::waiting, with its holes and arrivals).
#include "actors/scheduler/scheduler_core_impl.hpp"

#include <algorithm>
#include <string_view>

namespace kozmo::scheduler::detail {

group_entry& core_impl::add_group(const pod_view& pod) {
  auto [it, fresh] = groups.try_emplace(pod.spec.affinity_group);
  group_entry& g = it->second;
  if (!fresh) return g;
  g.id = next_id++;
  g.name = pod.spec.affinity_group;
  g.spec = pod.spec;
  g.created_ms = pod.created_ms;
  for (std::size_t v = 0; v < model.vcs.size(); ++v)
    if (model.vcs[v].name == pod.spec.virtual_cluster) g.vc = static_cast<int>(v);
  by_id[g.id] = &g;
  return g;
}

namespace {
bool turn_before(const std::pair<core_impl::turn_key, group_entry*>& a, const core_impl::turn_key& key) {
  return a.first < key;
}
} // namespace

void core_impl::queue(group_entry& g) {
  unqueue(g);
  g.turn.emplace(-g.priority(), g.created_ms, std::string_view(g.name));
  arrivals.emplace_back(*g.turn, &g);
}

void core_impl::unqueue(group_entry& g) {
  if (!g.turn) return;
  auto it = std::lower_bound(waiting.begin(), waiting.end(), *g.turn, turn_before);
  if (it != waiting.end() && it->second == &g) {
    it->second = nullptr;
    std::get<2>(it->first) = hole_names.emplace_back(std::get<2>(it->first));
    ++holes;
  } else {
    auto a = std::find_if(arrivals.begin(), arrivals.end(), [&](const auto& e) { return e.second == &g; });
    if (a != arrivals.end()) arrivals.erase(a);
  }
  g.turn.reset();
}

const std::vector<std::pair<core_impl::turn_key, group_entry*>>& core_impl::waiting_in_turn() {
  if (holes > 0) {
    waiting.erase(std::remove_if(waiting.begin(), waiting.end(), [](const auto& e) { return e.second == nullptr; }),
                  waiting.end());
    holes = 0;
    hole_names.clear();
  }
  if (!arrivals.empty()) {
    std::sort(arrivals.begin(), arrivals.end());
    const auto middle = static_cast<std::ptrdiff_t>(waiting.size());
    waiting.insert(waiting.end(), arrivals.begin(), arrivals.end());
    std::inplace_merge(waiting.begin(), waiting.begin() + middle, waiting.end());
    arrivals.clear();
  }
  return waiting;
}

} // namespace kozmo::scheduler::detail
