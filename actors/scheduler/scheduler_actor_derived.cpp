// The scheduler actor with a configuration derived from the cluster's GPU nodes
// (scheduler_actor_config::derived): derived once the nodes have listed, and again, on a new
// core that recovers every placement, whenever a node's GPU signature changes.
#include "actors/scheduler/scheduler_actor_state.hpp"

#include "messages/atoms.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>

namespace kozmo::scheduler::shell {

// A derived configuration follows the GPU nodes: a change of a node's signature derives it
// again a second later (a burst of joins is one rebuild).
void follow_node(scheduler_actor* self, watch::event_type type, const node_ptr& n) {
  auto& st = self->state;
  if (!st.follow->node_event(type, n) || st.rebuild_queued || !st.start->ready())
    return;
  st.rebuild_queued = true;
  self->delayed_send(self, std::chrono::seconds(1), atoms::reconfigure_atom::value);
}

namespace {

// A core on the configuration derived from `nodes` (name → node), when it differs from the one in
// use; the configuration in use is then the new one. Nullopt when it is the same, or when it
// does not load (logged; the one in use stays). `gpu_nodes`: how many of the nodes have GPUs.
std::optional<scheduler_core> derive_core(scheduler_actor* self, const std::map<std::string, node_ptr>& nodes,
                                         std::size_t& gpu_nodes) {
  auto& st = self->state;
  auto [yaml, gpus] = st.follow->derive(nodes);
  gpu_nodes = gpus;
  if (yaml.empty() || yaml == st.cfg.config_yaml) // "": the derivation failed and said why
    return std::nullopt;
  auto core = scheduler_core::load(yaml);
  if (!core) {
    spdlog::error("scheduler: the configuration derived from {} GPU node(s) does not load, keeping the one in "
                  "use: {}", gpu_nodes, core.err().message);
    return std::nullopt;
  }
  st.cfg.config_yaml = std::move(yaml);
  return std::move(*core);
}

} // namespace

// A derived configuration from the nodes as the nodes watch listed them, before anything is
// placed (the one the actor was spawned with is a placeholder: no cells).
void derive_at_start(scheduler_actor* self, const std::map<std::string, node_ptr>& nodes) {
  std::size_t gpu_nodes = 0;
  if (auto core = derive_core(self, nodes, gpu_nodes))
    self->state.core.emplace(std::move(*core));
  if (gpu_nodes == 0)
    spdlog::warn("scheduler: no node has allocatable nvidia.com/gpu yet; GPU nodes are taken in as they register");
  else
    spdlog::info("scheduler: configuration derived from {} GPU node(s)", gpu_nodes);
}

// The derived configuration again from the nodes as they are now; when it differs, a new core
// on it, given every node's health and every pod as at start-up (bound ones recovered from
// bind-info, binds still being written from their decision, waiting ones queued), oldest first.
// Cellgroup actors keep their groups; a preemption under way is decided again. Pods the old
// core did not hold (a spec it refused) stay out.
void rebuild(scheduler_actor* self) {
  auto& st = self->state;
  st.rebuild_queued = false;
  std::size_t gpu_nodes = 0;
  auto core = derive_core(self, st.follow->nodes(), gpu_nodes);
  if (!core)
    return;
  scheduler_core old = std::move(*st.core);
  st.core.emplace(std::move(*core));
  for (const auto& [name, n] : st.follow->nodes())
    st.core->set_node(name, node_healthy(*n));
  for (const auto& [uid, held] : st.others->held())
    st.core->set_other_pods_gpus(held.first, st.core->other_pods_gpus(held.first) + held.second);
  auto pods = st.follow->carried_over([&](const std::string& uid) { return !old.group_of(uid).empty(); });
  for (const auto& p : pods)
    if (!p->spec.node_name.empty())
      recover(self, *p);
  for (const auto& p : pods)
    if (p->spec.node_name.empty() && !p->metadata.deletion_timestamp && !st.given_up.count(p->metadata.uid))
      admit(self, *p);
  spdlog::info("scheduler: configuration derived again from {} GPU node(s); {} group(s) recovered, {} pod(s) known",
               gpu_nodes, st.core->placed_groups(), pods.size());
  st.report->notices(st.core->take_notices());
  queue_pass(self);
}

} // namespace kozmo::scheduler::shell
