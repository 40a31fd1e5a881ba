#include "actors/cellgroup/cellgroup_actor.hpp"

#include "actors/controller/event_recorder_actor.hpp"
#include "k8s/client/retry.hpp"
#include "messages/scheduler_messages.hpp"
#include "k8s/metrics/registry.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

namespace kozmo::cellgroup {
namespace {

// The answers of the API calls, carried back from the client's io thread.
using bound_atom = caf::atom_constant<caf::atom("cgbound")>;  // (uid, attempt, code, error)
using reread_atom = caf::atom_constant<caf::atom("cgreread")>; // (uid, attempt, code, error, node, pod uid)
using rebind_atom = caf::atom_constant<caf::atom("cgrebind")>; // (uid, attempt): back-off elapsed

enum class pod_phase { waiting, preempting, binding, bound };

struct tracked {
  group_bind bind;
  pod_phase phase = pod_phase::waiting;
  int attempts = 0;           // binds tried so far
  std::string last_error;
};

struct cellgroup_state {
  static inline const char* name = "cellgroup";
  std::shared_ptr<client::client> cli;
  caf::actor scheduler;
  cellgroup_config cfg;
  std::map<std::string, tracked> pods;  // by uid
  std::set<std::string> victims_deleted; // uids already asked to go
};

using cellgroup_actor = caf::stateful_actor<cellgroup_state>;

// kozmo_cellgroup_binds_total{outcome="succeeded"|"failed"}, registered at start-up.
const metrics::outcome_counters& binds() {
  static const auto* m = new metrics::outcome_counters(
      "kozmo_cellgroup_binds_total", "Pod bindings written by cellgroup actors, by outcome (failed: given up)");
  return *m;
}
// kozmo_scheduling_latency_seconds: from a pod's creationTimestamp (whole seconds, as the API
// server writes it) to its binding written. Buckets from a pod bound within its creation second
// to one that waited an hour for a gang's GPUs.
const metrics::histogram& latency() {
  static const auto* h = new metrics::histogram(metrics::add_histogram(
      "kozmo_scheduling_latency_seconds", "Time from a pod's creation to its binding written by Kozmo's GPU scheduler",
      {0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}));
  return *h;
}
[[maybe_unused]] const bool binds_registered = (binds(), latency(), true);

// Unknown creation times (0) are not observed; a clock behind the API server's counts as 0 s.
void observe_latency(std::int64_t created_ms, std::int64_t bound_ms) {
  if (created_ms > 0)
    latency().observe(static_cast<double>(std::max<std::int64_t>(bound_ms - created_ms, 0)) / 1000.0);
}

std::string join(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

void post_event(cellgroup_actor* self, const std::string& ns, const std::string& name, const std::string& uid,
                const char* type, const std::string& reason, const std::string& message) {
  controller::record(self->state.cfg.recorder,
                     controller::pod_note(ns, name, uid, {self->state.cfg.component, ""}, type, reason, message));
}

void mark_bound(cellgroup_actor* self, tracked& t) {
  auto& b = t.bind;
  t.phase = pod_phase::bound;
  // Per pod at debug (kube-scheduler logs its binds at -v=2); the Scheduled Event says it too.
  spdlog::debug("cellgroup group={} pod={}/{} bound node={} gpus={}", b.group, b.ns, b.name, b.node,
               join(b.leaf_indices));
  post_event(self, b.ns, b.name, b.uid, "Normal", "Scheduled",
             "Successfully assigned " + b.ns + "/" + b.name + " to " + b.node + " with GPUs " + join(b.leaf_indices));
  binds().succeeded.inc();
  auto now = std::chrono::system_clock::now().time_since_epoch();
  observe_latency(b.created_ms, std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
}

void fail_permanently(cellgroup_actor* self, const std::string& uid, const std::string& reason) {
  auto it = self->state.pods.find(uid);
  if (it == self->state.pods.end())
    return;
  auto& b = it->second.bind;
  spdlog::warn("cellgroup group={} pod={}/{} bind to node={} given up: {}", b.group, b.ns, b.name, b.node, reason);
  self->send(self->state.scheduler, group_bind_failed{b.group, b.ns, b.name, uid, reason});
  binds().failed.inc();
  self->state.pods.erase(it);
}

void attempt_bind(cellgroup_actor* self, const std::string& uid) {
  auto it = self->state.pods.find(uid);
  if (it == self->state.pods.end() || it->second.phase != pod_phase::binding)
    return;
  auto& t = it->second;
  int attempt = ++t.attempts;
  const auto& b = t.bind;
  caf::actor me = caf::actor_cast<caf::actor>(self);
  self->state.cli->bind(client::binding{b.ns, b.name, b.node, b.uid, b.annotations},
                        [me, uid, attempt](expected<json::value> r) {
                          caf::anon_send(me, bound_atom::value, uid, attempt, r ? 0 : r.err().code,
                                         r ? std::string() : r.err().message);
                        });
}

void retry_later(cellgroup_actor* self, tracked& t) {
  if (t.attempts >= self->state.cfg.max_bind_attempts) {
    fail_permanently(self, t.bind.uid,
                     "binding failed " + std::to_string(t.attempts) + " times, last: " + t.last_error);
    return;
  }
  const auto& cfg = self->state.cfg;
  auto delay = client::backoff_delay({cfg.min_backoff, cfg.max_backoff, 0}, t.attempts - 1, 0);
  self->delayed_send(self, delay, rebind_atom::value, t.bind.uid, t.attempts);
}

// From the force threshold on, the pod is re-read: a bind whose answer was lost may have
// happened, and a pod that was deleted or bound by someone else can never be bound by us.
void reread(cellgroup_actor* self, tracked& t) {
  const auto& b = t.bind;
  caf::actor me = caf::actor_cast<caf::actor>(self);
  std::string uid = b.uid;
  int attempt = t.attempts;
  self->state.cli->get({"", "v1", "pods", b.ns, b.name, ""}, [me, uid, attempt](expected<json::value> r) {
    if (!r) {
      caf::anon_send(me, reread_atom::value, uid, attempt, r.err().code, r.err().message, std::string(),
                     std::string());
      return;
    }
    const auto* spec = r->find("spec");
    const auto* meta = r->find("metadata");
    caf::anon_send(me, reread_atom::value, uid, attempt, 0, std::string(),
                   spec ? spec->get_string("nodeName") : std::string(),
                   meta ? meta->get_string("uid") : std::string());
  });
}

void on_bind_answer(cellgroup_actor* self, const std::string& uid, int attempt, int code, const std::string& error) {
  auto it = self->state.pods.find(uid);
  if (it == self->state.pods.end() || it->second.phase != pod_phase::binding || it->second.attempts != attempt)
    return;
  auto& t = it->second;
  if (error.empty() && code == 0) {
    mark_bound(self, t);
    return;
  }
  t.last_error = error;
  spdlog::info("cellgroup group={} pod={}/{} bind attempt {} failed: {}", t.bind.group, t.bind.ns, t.bind.name,
               attempt, error);
  if (code == 404) {
    fail_permanently(self, uid, "the pod no longer exists");
    return;
  }
  if (code == 409 || attempt >= self->state.cfg.force_bind_threshold) {
    reread(self, t);
    return;
  }
  retry_later(self, t);
}

void on_reread(cellgroup_actor* self, const std::string& uid, int attempt, int code, const std::string& error,
               const std::string& node, const std::string& pod_uid) {
  auto it = self->state.pods.find(uid);
  if (it == self->state.pods.end() || it->second.phase != pod_phase::binding || it->second.attempts != attempt)
    return;
  auto& t = it->second;
  if (code == 404 || (code == 0 && pod_uid != uid)) {
    fail_permanently(self, uid, "the pod was deleted or recreated");
    return;
  }
  if (code == 0 && node == t.bind.node) {
    mark_bound(self, t); // an earlier bind went through; its answer was lost
    return;
  }
  if (code == 0 && !node.empty()) {
    fail_permanently(self, uid, "the pod was bound to " + node + " by someone else");
    return;
  }
  if (!error.empty())
    t.last_error = error;
  retry_later(self, t);
}

void on_bind(cellgroup_actor* self, group_bind& b) {
  auto& t = self->state.pods[b.uid];
  if (t.phase == pod_phase::bound || (t.phase == pod_phase::binding && t.bind.node == b.node))
    return; // done, or already on it
  t.bind = std::move(b);
  t.phase = pod_phase::binding;
  t.attempts = 0;
  attempt_bind(self, t.bind.uid);
}

void on_preempt(cellgroup_actor* self, const group_preempt& p) {
  auto& st = self->state;
  auto& t = st.pods[p.uid];
  if (t.phase == pod_phase::bound || t.phase == pod_phase::binding)
    return;
  t.bind.group = p.group;
  t.bind.ns = p.ns;
  t.bind.name = p.name;
  t.bind.uid = p.uid;
  std::string names;
  for (const auto& v : p.victims) {
    names += (names.empty() ? "" : ", ") + v.ns + "/" + v.name;
    if (!st.victims_deleted.insert(v.uid).second)
      continue;
    // What kube-scheduler tells a victim, so `kubectl describe` / `get events` say who took it.
    post_event(self, v.ns, v.name, v.uid, "Normal", "Preempted",
               "Preempted by " + p.ns + "/" + p.name + " (gang '" + p.group + "')");
    client::delete_options opts;
    opts.precondition_uid = v.uid; // never delete a same-named successor
    st.cli->remove({"", "v1", "pods", v.ns, v.name, ""}, opts, [who = v.ns + "/" + v.name](expected<json::value> r) {
      if (!r && r.err().code != 404)
        spdlog::warn("cellgroup could not delete victim pod={}: {}", who, r.err().message);
    });
  }
  // Every pod of the gang says what it waits for (`kubectl describe` on any of them).
  if (t.phase == pod_phase::waiting && !names.empty()) {
    spdlog::info("cellgroup group={} pod={}/{} preempting {}", p.group, p.ns, p.name, names);
    post_event(self, p.ns, p.name, p.uid, "Normal", "Preempting", "Preempting " + names + ": " + p.reason);
  }
  t.phase = pod_phase::preempting;
}

caf::behavior cellgroup(cellgroup_actor* self, std::shared_ptr<client::client> cli, caf::actor scheduler,
                        cellgroup_config cfg) {
  self->state.cli = std::move(cli);
  self->state.scheduler = std::move(scheduler);
  self->state.cfg = std::move(cfg);
  // An error message (e.g. a reply the scheduler did not expect) must not end the group.
  self->set_error_handler([self](caf::error& e) {
    spdlog::warn("cellgroup group={} ignored an error message: {}", self->state.cfg.group, self->system().render(e));
  });
  self->attach_functor([group = self->state.cfg.group](const caf::error& reason) {
    spdlog::debug("cellgroup group={} stopped: {}", group, caf::to_string(reason));
  });
  return {
      [self](group_bind& b) { on_bind(self, b); },
      [self](const group_preempt& p) { on_preempt(self, p); },
      [self](const group_pod_gone& g) { self->state.pods.erase(g.uid); },
      [self](const group_release&) { self->quit(); },
      [self](bound_atom, const std::string& uid, int attempt, int code, const std::string& error) {
        on_bind_answer(self, uid, attempt, code, error);
      },
      [self](reread_atom, const std::string& uid, int attempt, int code, const std::string& error,
             const std::string& node, const std::string& pod_uid) {
        on_reread(self, uid, attempt, code, error, node, pod_uid);
      },
      [self](rebind_atom, const std::string& uid, int attempt) {
        auto it = self->state.pods.find(uid);
        if (it != self->state.pods.end() && it->second.attempts == attempt)
          attempt_bind(self, uid);
      },
  };
}

} // namespace

caf::actor spawn_cellgroup(caf::actor_system& sys, std::shared_ptr<client::client> cli, caf::actor scheduler,
                           cellgroup_config cfg) {
  return sys.spawn(cellgroup, std::move(cli), std::move(scheduler), std::move(cfg));
}

} // namespace kozmo::cellgroup
