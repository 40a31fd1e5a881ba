#include "actors/tasks/task_actor.hpp"

#include "actors/controller/object_view.hpp"
#include "actors/controller/pass_loop.hpp"
#include "actors/controller/spawn_child.hpp"
#include "actors/controller/supervisor_actor.hpp"
#include "actors/tasks/cache_store_actor.hpp"
#include "actors/tasks/machinery.hpp"
#include "actors/tasks/task_metrics.hpp"
#include "k8s/json/patch.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/kozmo_keys.hpp"
#include "messages/task_messages.hpp"
#include "messages/watch_messages.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <functional>
#include <map>
#include <utility>

namespace kozmo::tasks {
namespace {

using controller::plan;
using controller::plan_outcome;

struct owned_object_entry {
  std::string resource;
  std::shared_ptr<const k8s::custom_object> object;
};

struct task_state {
  static inline const char* name = "task_execution";

  std::shared_ptr<const task_actor_config> cfg;
  controller::child_tools tools;
  std::shared_ptr<const k8s::custom_object> task;
  controller::object_view<k8s::pod> pods;
  // The task's other objects (training jobs), by "resource/name".
  std::map<std::string, owned_object_entry> owned;
  pool_grant grant;
  // The pool a request is out for (or held from); shared with the exit handler, which may run
  // after the state is gone.
  std::shared_ptr<std::string> pool_asked = std::make_shared<std::string>();
  template_answer templ;
  std::string template_asked;
  cache_answer cache;
  int cache_asks_out = 0; // cache requests not answered yet (the round's world says so)
  controller::pass_loop loop;
  metrics::gauge_slot counted_in; // kozmo_task_executions{phase}
  // The task's status decoded, for the resourceVersion it was decoded at.
  std::string decoded_rv;
  task_status decoded;
};

using task_actor = caf::stateful_actor<task_state>;

const task_status& current_status(task_actor* self) {
  auto& st = self->state;
  if (st.decoded_rv != st.task->metadata.resource_version || st.decoded_rv.empty()) {
    const json::value* status = st.task->document.find("status");
    st.decoded = status_from_json(status ? *status : json::value());
    st.decoded_rv = st.task->metadata.resource_version;
  }
  return st.decoded;
}

std::string who(task_actor* self) {
  const auto& m = self->state.task->metadata;
  return m.namespace_ + "/" + m.name;
}

client::resource_ref task_ref(task_actor* self, std::string subresource = {}) {
  const auto& m = self->state.task->metadata;
  return {group, version, task_resource, m.namespace_, m.name, std::move(subresource)};
}

client::resource_ref pods_ref(task_actor* self, const std::string& name = {}) {
  return {"", "v1", "pods", self->state.task->metadata.namespace_, name, ""};
}

// Where a plugin's object lives: a pod, or another kind (a training job).
client::resource_ref ref_of(task_actor* self, const object_kind& kind, const std::string& name = {}) {
  if (kind.is_pod())
    return pods_ref(self, name);
  return {kind.group, kind.version, kind.resource, self->state.task->metadata.namespace_, name, ""};
}

std::string owned_key(const std::string& resource, const std::string& name) { return resource + "/" + name; }

// A newer copy of an owned object (a watch event, an answer or a re-read), or, with `gone`, its
// deletion.
void take_owned(task_actor* self, const std::string& resource, std::shared_ptr<const k8s::custom_object> obj,
                bool gone = false) {
  auto& owned = self->state.owned;
  std::string key = owned_key(resource, obj->metadata.name);
  auto it = owned.find(key);
  if (gone) {
    if (it != owned.end() && it->second.object->metadata.uid == obj->metadata.uid)
      owned.erase(it);
    return;
  }
  if (it != owned.end() && it->second.object->metadata.uid == obj->metadata.uid &&
      controller::older_than(obj->metadata.resource_version, it->second.object->metadata.resource_version))
    return;
  owned[key] = {resource, std::move(obj)};
}

void take_owned_json(task_actor* self, const std::string& resource, json::value&& doc) {
  auto obj = k8s::custom_object_from(std::move(doc));
  if (!obj)
    return;
  const auto* owner = obj->metadata.controller_ref();
  if (!owner || owner->uid != self->state.task->metadata.uid)
    return;
  take_owned(self, resource, std::make_shared<const k8s::custom_object>(std::move(*obj)));
}

void request_round(task_actor* self) { self->state.loop.request(); }

// --- resource manager and template store ------------------------------------------------------

void ask_pool(task_actor* self, const std::string& pool) {
  auto& st = self->state;
  if (*st.pool_asked == pool || !st.cfg->pools)
    return;
  *st.pool_asked = pool;
  const auto& m = st.task->metadata;
  auto since = current_status(self).waiting_since.value_or(st.loop.now());
  pool_acquire req{pool, m.uid, m.namespace_, project_of(m), who(self),
                   std::chrono::duration_cast<std::chrono::milliseconds>(since.time_since_epoch()).count()};
  self->request(st.cfg->pools, caf::infinite, std::move(req)).then([self, pool](pool_answer& a) {
    auto& st = self->state;
    if (*st.pool_asked != pool || st.grant.what == pool_grant::state::granted)
      return; // released meanwhile, or granted by a pool_granted that came first
    st.grant.what = a.granted ? pool_grant::state::granted : pool_grant::state::waiting;
    st.grant.no_pool = a.no_pool;
    st.grant.message = a.message;
    request_round(self);
  });
}

void give_back_pool(task_actor* self, const std::string& pool) {
  auto& st = self->state;
  if (st.cfg->pools)
    self->send(st.cfg->pools, pool_release{pool, st.task->metadata.uid});
  st.pool_asked->clear();
  st.grant = {};
}

void ask_template(task_actor* self, const std::string& name) {
  auto& st = self->state;
  if (st.template_asked == name || !st.cfg->templates)
    return;
  st.template_asked = name;
  template_request req{st.task->metadata.namespace_, name};
  self->request(st.cfg->templates, caf::infinite, std::move(req)).then([self, name](template_reply& r) {
    auto& st = self->state;
    st.templ.name = name;
    st.templ.found = r.found ? std::optional<json::value>(*r.found) : std::nullopt;
    st.template_asked.clear();
    request_round(self);
  });
}

// Sends a round's questions and writes to the cache store; each answer brings a round, and a
// question's answer is what the next round reads. The store runs a key's operations one after
// another, so once the round's last write is answered, all of them are: `then` (the plan whose
// status says Succeeded) goes from there, or at once when nothing is written.
void ask_cache(task_actor* self, std::vector<cache_ask> asks, std::function<void()> then) {
  auto& st = self->state;
  auto is_write = [](const cache_ask& a) { return a.op == cache_op::store || a.op == cache_op::release; };
  if (!st.cfg->cache && !asks.empty()) {
    st.cache = {true, "", std::nullopt, st.loop.now(), "no cache store runs in this controller"};
    request_round(self);
    asks.clear();
  }
  auto last_write = std::find_if(asks.rbegin(), asks.rend(), is_write);
  if (last_write == asks.rend() && then)
    std::exchange(then, {})();
  const auto& ns = st.task->metadata.namespace_;
  for (auto it = asks.begin(); it != asks.end(); ++it) {
    bool write = is_write(*it);
    std::function<void()> after = it == std::prev(last_write.base()) ? std::exchange(then, {}) : nullptr;
    ++st.cache_asks_out;
    self->request(st.cfg->cache, caf::infinite, cache_request{ns, std::move(*it), st.cfg->platform->cache_reservation_heartbeat})
        .then(
            [self, write, after](cache_reply& r) {
              auto& st = self->state;
              --st.cache_asks_out;
              if (write && !r.answer.error.empty())
                spdlog::warn("tasks: {}: the output cache: {}", who(self), r.answer.error);
              if (!write)
                st.cache = std::move(r.answer);
              if (after)
                after();
              request_round(self);
            },
            [self, after](caf::error&) {
              --self->state.cache_asks_out;
              self->state.cache = {true, "", std::nullopt, self->state.loop.now(), "the cache store stopped"};
              if (after)
                after();
              request_round(self);
            });
  }
}

// --- a round's decisions as a plan for the executor ---------------------------------------------

json::value finalizers_patch(const k8s::object_meta& meta, bool add) {
  json::array list;
  for (const auto& f : meta.finalizers)
    if (f != keys::task_finalizer)
      list.push_back(f);
  if (add)
    list.push_back(keys::task_finalizer);
  json::value p = json::object{};
  p["metadata"]["resourceVersion"] = meta.resource_version;
  p["metadata"]["finalizers"] = std::move(list);
  return p;
}

plan plan_of(task_actor* self, task_round& r) {
  auto& st = self->state;
  const auto& t = *st.task;
  plan p;
  bool wrote_task = false;
  if (r.finalizer == finalizer_change::add) {
    p.steps.push_back(controller::patch_step{task_ref(self), client::patch_type::merge, finalizers_patch(t.metadata, true)});
    wrote_task = true;
  }
  auto about = controller::reference_to(t);
  about.kind = task_kind; // a LIST item may come without kind and apiVersion
  about.api_version = api_version;
  // The round that ends the task goes before the writes that start others (plan::closing), and
  // its status before its Event: what waits for the task is done once the status lands.
  const auto& before = current_status(self);
  p.closing = r.status && r.status->phase && is_terminal(*r.status->phase) && before.phase != r.status->phase &&
              r.creates.empty();
  auto add_events = [&] {
    for (auto& e : r.events)
      p.steps.push_back(controller::event_step{{about, {st.cfg->component, ""}, e.type, e.reason, e.message}});
  };
  if (!p.closing)
    add_events();
  if (r.status) {
    static const json::value none = json::object{};
    const json::value* old = t.document.find("status");
    json::value patch = json::object{};
    patch["status"] = json::create_merge_patch(old && old->is_object() ? *old : none, status_to_json(*r.status));
    patch["metadata"]["resourceVersion"] = t.metadata.resource_version;
    p.steps.push_back(controller::patch_step{task_ref(self, "status"), client::patch_type::merge, std::move(patch),
                                             wrote_task});
    wrote_task = true;
  }
  if (p.closing)
    add_events();
  for (auto& d : r.deletes)
    p.steps.push_back(controller::delete_step{ref_of(self, d.kind, d.name), d.uid, ""});
  for (auto& c : r.creates)
    p.steps.push_back(controller::create_step{ref_of(self, c.kind), std::move(c.object)});
  if (r.finalizer == finalizer_change::remove)
    p.steps.push_back(controller::patch_step{task_ref(self), client::patch_type::merge,
                                             finalizers_patch(t.metadata, false), wrote_task});
  return p;
}

// A newer copy of the task, from an answer or a re-read.
void take_task(task_actor* self, json::value&& doc) {
  if (auto task = controller::newer_copy(*self->state.task, std::move(doc)))
    self->state.task = std::move(task);
}

// A pod of ours, from an answer or a re-read (a create that met its own earlier attempt).
void take_pod(task_actor* self, const json::value& doc) {
  auto pod = k8s::from_json<k8s::pod>(doc);
  if (!pod)
    return;
  const auto* owner = pod->metadata.controller_ref();
  if (!owner || owner->uid != self->state.task->metadata.uid)
    return;
  self->state.pods.upsert(std::make_shared<const k8s::pod>(std::move(*pod)));
}

// What a create met (its answer, or a re-read after a 409): a pod, or an owned object.
void take_created(task_actor* self, const controller::create_step& c, json::value&& doc) {
  if (c.where.resource == "pods")
    take_pod(self, doc);
  else
    take_owned_json(self, c.where.resource, std::move(doc));
}

void note_answer(task_actor* self, const controller::step& s, json::value& answer) {
  if (const auto* c = std::get_if<controller::create_step>(&s)) {
    if (c->where.resource == "pods")
      count_pod_created();
    take_created(self, *c, std::move(answer));
  } else if (const auto* d = std::get_if<controller::delete_step>(&s)) {
    // Gone from this actor's view at once: the watch's later echo comes with its
    // deletionTimestamp, which rounds leave alone.
    if (d->ref.resource != "pods") {
      self->state.owned.erase(owned_key(d->ref.resource, d->ref.name));
    } else if (auto it = self->state.pods.items.find(d->ref.name); it != self->state.pods.items.end()) {
      self->state.pods.items.erase(it);
    }
  } else if (const auto* p = std::get_if<controller::patch_step>(&s)) {
    // The status write that ended the task counts it, once: the patch holds the phase only when
    // it changes, and a task enters Succeeded or Failed once.
    if (p->ref.subresource == "status") {
      const auto* phase = p->patch.at_path({"status", "phase"});
      if (phase && phase->is_string() && (phase->as_string() == "Succeeded" || phase->as_string() == "Failed"))
        count_task_finished(phase->as_string() == "Succeeded");
    }
    take_task(self, std::move(answer));
  }
}

// What a 409 met, as the server has it now: a pod or object of ours (or a namesake: ours is
// gone), or the task.
void note_reread(task_actor* self, const controller::step& s, json::value& now) {
  auto& st = self->state;
  const auto resource = controller::resource_of(s);
  if (resource == task_resource) {
    take_task(self, std::move(now));
  } else if (resource == "pods") {
    if (auto pod = k8s::from_json<k8s::pod>(now))
      st.pods.take_reread(std::make_shared<const k8s::pod>(std::move(*pod)), st.task->metadata.uid);
  } else if (auto obj = k8s::custom_object_from(std::move(now))) {
    const auto* owner = obj->metadata.controller_ref();
    if (owner != nullptr && owner->uid == st.task->metadata.uid)
      take_owned(self, resource, std::make_shared<const k8s::custom_object>(std::move(*obj)));
    else
      st.owned.erase(owned_key(resource, obj->metadata.name));
  }
}

// --- the round ----------------------------------------------------------------------------------

// Metrics of what a round decided: attempts that failed. Counted when decided; a plan that fails
// is decided again, so a failed write can count twice (rare, and visible).
void count_outcomes(task_actor* self, const task_round& r) {
  if (!r.status)
    return;
  const auto& before = current_status(self);
  const auto& now = *r.status;
  for (const auto& a : now.attempts) {
    bool ended_now = a.phase == "Failed" && a.end_time &&
                     std::none_of(before.attempts.begin(), before.attempts.end(),
                                  [&](const attempt_record& b) { return b.attempt == a.attempt && b.end_time; });
    if (ended_now)
      count_attempt_failed(now.system_failures > before.system_failures);
  }
}

controller::pass_decision run(task_actor* self) {
  auto& st = self->state;
  count_task_in(st.counted_in, current_status(self).phase);
  task_world w;
  w.task = st.task.get();
  w.status = &current_status(self);
  for (const auto& [_, p] : st.pods.items)
    w.pods.push_back(p.get());
  for (const auto& [_, o] : st.owned)
    w.owned.push_back({o.resource, o.object.get()});
  w.config = st.cfg->platform.get();
  w.plugins = st.cfg->plugins.get();
  w.grant = st.grant;
  w.templ = st.templ;
  w.cache = st.cache;
  w.cache_asking = st.cache_asks_out > 0;
  w.now = st.loop.now();
  auto r = run_round(w);
  count_round();
  count_outcomes(self, r);
  if (r.pool == pool_action::acquire)
    ask_pool(self, r.pool_name);
  else if (r.pool == pool_action::release)
    give_back_pool(self, r.pool_name);
  if (!r.need_template.empty())
    ask_template(self, r.need_template);
  if (r.status && r.status->phase && current_status(self).phase != r.status->phase)
    spdlog::debug("tasks: {} is {} ({})", who(self), to_string(*r.status->phase), r.status->reason);
  controller::pass_decision d{plan_of(self, r), r.wake_at, {}};
  if (d.writes.steps.empty()) {
    ask_cache(self, std::move(r.cache), {});
    return d;
  }
  // A success's outputs are in the cache before the task says Succeeded: the plan goes once the
  // store has answered, so an identical task created after it hits.
  d.first = [self, asks = std::move(r.cache)](std::function<void()> send) mutable {
    ask_cache(self, std::move(asks), std::move(send));
  };
  return d;
}

void on_task(task_actor* self, const object_event<k8s::custom_object>& ev) {
  auto& st = self->state;
  if (ev.type == watch::event_type::deleted || !ev.object)
    return; // the supervisor stops this actor
  // The echo of this actor's own write (the answer already put it in the view) changes nothing.
  const auto& rv = ev.object->metadata.resource_version;
  if (controller::older_than(rv, st.task->metadata.resource_version) || rv == st.task->metadata.resource_version)
    return;
  st.task = ev.object;
  request_round(self);
}

void on_pod(task_actor* self, const object_event<k8s::pod>& ev) {
  if (!ev.object || ev.object->metadata.namespace_ != self->state.task->metadata.namespace_)
    return;
  auto& pods = self->state.pods.items;
  if (ev.type == watch::event_type::deleted) {
    self->state.pods.erase(*ev.object);
  } else {
    auto it = pods.find(ev.object->metadata.name);
    if (it != pods.end() && it->second->metadata.uid == ev.object->metadata.uid &&
        it->second->metadata.resource_version == ev.object->metadata.resource_version)
      return; // the echo of the create this actor already holds
    self->state.pods.upsert(ev.object);
  }
  request_round(self);
}

caf::behavior task_behavior(task_actor* self, std::shared_ptr<const task_actor_config> cfg,
                            controller::child_tools tools, std::shared_ptr<const k8s::custom_object> task,
                            controller::owned_view view) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.tools = tools;
  st.task = std::move(task);
  controller::pass_hooks hooks;
  hooks.pass = [self] { return run(self); };
  hooks.absorb = [self](const controller::step& s, json::value& answer) { note_answer(self, s, answer); };
  hooks.reread = [self](const controller::step& s, json::value& now) { note_reread(self, s, now); };
  st.loop.start(self, tools, {"tasks: " + who(self), task_ref(self), st.cfg->min_backoff, st.cfg->max_backoff, controller_name},
                std::move(hooks));
  for (auto& p : view.pods)
    st.pods.upsert(std::move(p));
  for (auto& o : view.others)
    take_owned(self, o.resource, std::move(o.object));
  // A task that holds a token (its status says so) tells the resource manager again: the
  // manager restored it from the statuses already, and asking is idempotent.
  if (const auto& s = current_status(self); s.pool_held && !s.pool.empty() && !(s.phase && is_terminal(*s.phase)))
    ask_pool(self, s.pool);
  // Deleted (the supervisor stops the actor with user_shutdown): nothing may stay held or queued.
  self->attach_functor([pool = st.pool_asked, pools = st.cfg->pools, uid = st.task->metadata.uid](const caf::error& reason) {
    if (reason == caf::exit_reason::user_shutdown && !pool->empty() && pools)
      caf::anon_send(pools, pool_release{*pool, uid});
  });
  request_round(self);
  return st.loop.handlers().or_else(
      [self](object_event<k8s::custom_object>& ev) { on_task(self, ev); },
      [self](object_event<k8s::pod>& ev) { on_pod(self, ev); },
      [self](controller::owned_event& ev) {
        if (!ev.object || ev.object->metadata.namespace_ != self->state.task->metadata.namespace_)
          return;
        take_owned(self, ev.resource, ev.object, ev.type == watch::event_type::deleted);
        request_round(self);
      },
      [self](pool_granted& g) {
        auto& st = self->state;
        if (g.pool != *st.pool_asked)
          return;
        st.grant = {pool_grant::state::granted, false, ""};
        request_round(self);
      },
      [self](cache_changed& c) {
        auto& st = self->state;
        if (c.key != st.cache.key || c.ns != st.task->metadata.namespace_)
          return;
        st.cache.known = false; // outputs stored or the reservation let go: ask again
        request_round(self);
      });
}

} // namespace

caf::actor spawn_task_actor(caf::actor_system& sys, caf::event_based_actor* parent,
                            std::shared_ptr<const task_actor_config> cfg, controller::child_tools tools,
                            std::shared_ptr<const k8s::custom_object> task, controller::owned_view view) {
  return controller::spawn_child(sys, parent, task_behavior, std::move(cfg), std::move(tools), std::move(task),
                                 std::move(view));
}

} // namespace kozmo::tasks
