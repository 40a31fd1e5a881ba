#include "actors/tasks/resource_manager_actor.hpp"

#include "actors/controller/executor_actor.hpp"
#include "actors/controller/watch_into.hpp"
#include "actors/tasks/resource_pools.hpp"
#include "actors/tasks/task_spec.hpp"
#include "actors/tasks/task_status.hpp"
#include "k8s/client/client.hpp"
#include "k8s/model/codec.hpp"
#include "messages/task_messages.hpp"
#include "messages/watch_messages.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <utility>
#include <unordered_map>

namespace kozmo::tasks {
namespace {

using flush_atom = caf::atom_constant<caf::atom("poolflush")>;

constexpr std::size_t holders_shown = 50;

struct rm_state {
  static inline const char* name = "resource_manager";
  resource_manager_config cfg;
  pool_book book;
  caf::actor pools_watch;
  // Open once the pools are listed and the tokens the tasks held are restored; what arrives
  // before is held in arrival order (a task that asks and then gives back must end up not holding).
  controller::listed_gate ready;
  std::unordered_map<std::string, caf::actor> waiters;               // token → task actor
  std::set<std::string> dirty;                                        // pools whose status to write
  bool flush_armed = false;
  bool writing = false;
};

using rm_actor = caf::stateful_actor<rm_state>;

void mark(rm_actor* self, const std::string& pool) {
  auto& st = self->state;
  st.dirty.insert(pool);
  if (!st.flush_armed && !st.writing) {
    st.flush_armed = true;
    self->delayed_send(self, st.cfg.status_interval, flush_atom::value);
  }
}

void notify(rm_actor* self, const std::string& pool, const std::vector<pool_request>& granted) {
  auto& st = self->state;
  for (const auto& r : granted) {
    spdlog::debug("resource manager: {} granted a token of pool {}", r.task, pool);
    if (auto it = st.waiters.find(r.token); it != st.waiters.end()) {
      self->send(it->second, pool_granted{pool, r.token});
      st.waiters.erase(it);
    }
  }
}

pool_answer answer_of(const allocation_answer& a) {
  return {a.what == allocation::granted, a.what == allocation::no_pool, a.message};
}

// `from` is told later (pool_granted) when the request has to wait now.
pool_answer acquire(rm_actor* self, const pool_acquire& req, caf::actor from) {
  auto& st = self->state;
  pool_request r{req.token, req.ns, req.project, req.task, req.since_ms};
  auto a = st.book.allocate(req.pool, r);
  if (a.what == allocation::granted)
    st.waiters.erase(req.token);
  else
    st.waiters[req.token] = std::move(from);
  mark(self, req.pool);
  return answer_of(a);
}

void release(rm_actor* self, const pool_release& req) {
  auto& st = self->state;
  st.waiters.erase(req.token);
  bool held = st.book.holds(req.pool, req.token);
  auto granted = st.book.release(req.pool, req.token);
  notify(self, req.pool, granted);
  if (held || !granted.empty())
    spdlog::debug("resource manager: token {} of pool {} given back", req.token, req.pool);
  mark(self, req.pool);
}

// Rule 5 of resource_pools.hpp: tokens the tasks' statuses say they hold.
void restore(rm_actor* self, const json::value& list) {
  auto& st = self->state;
  int restored = 0;
  if (const auto* items = list.find("items"); items && items->is_array())
    for (const auto& item : items->as_array()) {
      const auto* status = item.find("status");
      if (!status)
        continue;
      auto s = status_from_json(*status);
      if (s.pool.empty() || !s.pool_held)
        continue;
      auto meta = k8s::from_json<k8s::object_meta>(item.find("metadata") ? *item.find("metadata") : json::value());
      if (!meta)
        continue;
      std::int64_t since = 0;
      if (s.waiting_since)
        since = std::chrono::duration_cast<std::chrono::milliseconds>(s.waiting_since->time_since_epoch()).count();
      st.book.restore(s.pool, {meta->uid, meta->namespace_, project_of(*meta), meta->namespace_ + "/" + meta->name, since});
      mark(self, s.pool);
      ++restored;
    }
  spdlog::info("resource manager: {} token(s) held before the restart restored", restored);
}

void on_pool(rm_actor* self, const object_event<k8s::custom_object>& ev) {
  auto& st = self->state;
  if (!ev.object)
    return;
  const auto& name = ev.object->metadata.name;
  if (ev.type == watch::event_type::deleted) {
    st.book.remove_pool(name);
    spdlog::info("resource manager: pool {} deleted; its holders keep their tokens until they end", name);
    return;
  }
  const auto* spec = ev.object->document.find("spec");
  std::int64_t quota = spec ? spec->get_int("quota", 0) : 0;
  if (quota <= 0) {
    spdlog::warn("resource manager: pool {} has no spec.quota above 0: treated as absent", name);
    st.book.remove_pool(name);
    return;
  }
  // The CRD bounds them (1 to 1000000); a pool written past a CRD without those bounds is
  // read within them rather than wrapped.
  static constexpr std::int64_t max_tokens = 1000000;
  auto tokens = [](std::int64_t n) { return static_cast<int>(std::clamp<std::int64_t>(n, 1, max_tokens)); };
  pool_limits limits;
  limits.quota = tokens(quota);
  if (spec->find("perNamespace"))
    limits.per_namespace = tokens(spec->get_int("perNamespace"));
  if (spec->find("perProject"))
    limits.per_project = tokens(spec->get_int("perProject"));
  notify(self, name, st.book.set_pool(name, limits));
  mark(self, name);
}

// Writes the dirty pools' statuses, one plan for all of them.
void flush(rm_actor* self) {
  auto& st = self->state;
  st.flush_armed = false;
  if (st.dirty.empty() || st.writing)
    return;
  controller::plan p;
  for (const auto& pool : st.dirty) {
    auto u = st.book.usage(pool);
    if (!u.exists)
      continue;
    json::value status = json::object{};
    status["inUse"] = u.in_use;
    status["waiting"] = u.waiting;
    json::array holders;
    for (const auto& h : st.book.holders(pool)) {
      if (holders.size() == holders_shown)
        break;
      holders.push_back(h);
    }
    status["holders"] = std::move(holders);
    json::value patch = json::object{};
    patch["status"] = std::move(status);
    p.steps.push_back(controller::patch_step{{group, version, pool_resource, "", pool, "status"},
                                              client::patch_type::merge, std::move(patch)});
  }
  st.dirty.clear();
  if (p.steps.empty())
    return;
  st.writing = true;
  self->request(st.cfg.executor, caf::infinite, controller::run_plan{std::move(p)})
      .then([self](controller::plan_outcome& out) {
        auto& st = self->state;
        st.writing = false;
        // A pool deleted meanwhile (404) needs no status; anything else is written again later.
        if (out.what == controller::plan_outcome::result::failed && out.code != 404)
          spdlog::debug("resource manager: pool status: {}", out.failure);
        if (!st.dirty.empty() && !st.flush_armed) {
          st.flush_armed = true;
          self->delayed_send(self, st.cfg.status_interval, flush_atom::value);
        }
      });
}

caf::behavior resource_manager(rm_actor* self, resource_manager_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.ready.on_open = [self] {
    spdlog::info("resource manager: ready ({} pool(s))", self->state.book.pools().size());
  };
  watch::watch_config wc;
  wc.resource = {group, version, pool_resource, "", "", ""};
  st.pools_watch = controller::watch_into<k8s::custom_object>(self, st.cfg.cli, wc, &st.ready);
  controller::list_into(self, st.cfg.cli, {group, version, task_resource, "", "", ""}, "resource manager", st.ready,
                        [self](const json::value& list) { restore(self, list); });
  return {
      [self](object_event<k8s::custom_object>& ev) { on_pool(self, ev); },
      [self](pool_acquire& req) -> caf::result<pool_answer> {
        // The sender first: making the promise takes it over from the current message.
        auto from = caf::actor_cast<caf::actor>(self->current_sender());
        if (self->state.ready.listed())
          return acquire(self, req, std::move(from));
        auto rp = self->make_response_promise<pool_answer>();
        self->state.ready.when_listed([self, req, rp, from]() mutable { rp.deliver(acquire(self, req, std::move(from))); });
        return rp;
      },
      [self](pool_release& req) { self->state.ready.when_listed([self, req] { release(self, req); }); },
      [self](flush_atom) { flush(self); },
  };
}

} // namespace

caf::actor spawn_resource_manager(caf::actor_system& sys, resource_manager_config cfg) {
  return sys.spawn(resource_manager, std::move(cfg));
}

} // namespace kozmo::tasks
