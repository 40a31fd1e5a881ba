#include "actors/training/training_job_actor.hpp"

#include "k8s/client/retry.hpp"
#include "actors/controller/executor_actor.hpp"
#include "actors/controller/object_view.hpp"
#include "actors/controller/pass_control.hpp"
#include "actors/controller/spawn_child.hpp"
#include "actors/training/reconcile.hpp"
#include "actors/training/training_metrics.hpp"
#include "k8s/model/codec.hpp"
#include "messages/atoms.hpp"
#include "messages/watch_messages.hpp"

#include <caf/all.hpp>

#include <set>
#include <spdlog/spdlog.h>

namespace kozmo::training {

job_resource resource_of_kind(const std::string& kind) {
  const kind_traits* k = traits_for(kind);
  if (k == nullptr)
    return {};
  auto api = std::string(k->api_version);
  auto slash = api.find('/');
  return {api.substr(0, slash), api.substr(slash + 1), std::string(k->plural)};
}

std::shared_ptr<const std::map<std::string, std::string>> config_data(const json::value& config_map) {
  auto data = std::make_shared<std::map<std::string, std::string>>();
  if (const auto* d = config_map.find("data"); d && d->is_object())
    for (const auto& [k, v] : d->as_object())
      if (v.is_string())
        (*data)[k] = v.as_string();
  return data;
}

namespace {

using reconcile_atom = caf::atom_constant<caf::atom("reconcile")>;
using wake_atom = caf::atom_constant<caf::atom("wake")>;
using controller::plan;
using controller::plan_outcome;

// An MPIJob's launcher ServiceAccount, Role and RoleBinding as seen ("roles/<name>", ...).
struct mpi_rbac_seen {
  std::set<std::string> names;
  std::optional<json::value> role_rules;
};

struct job_state {
  static inline const char* name = "training_job";

  std::shared_ptr<const job_actor_config> cfg;
  controller::child_tools tools;
  std::shared_ptr<const k8s::custom_object> job;
  controller::object_view<k8s::pod> pods;
  controller::object_view<k8s::service> services;
  std::shared_ptr<const std::map<std::string, std::string>> mpi_config;
  std::unique_ptr<mpi_rbac_seen> mpi_rbac; // MPIJobs only: other jobs pay a pointer
  // Expectations (reconcile.hpp rule 3): uids of pods and services this actor deleted and
  // may still see.
  std::vector<std::string> deleting;
  controller::pass_control passes;
  bool was_finished = false; // the job as the running pass saw it (for the outcome metric)
  bool gone = false;         // a write found the job deleted: no more passes
  std::optional<client::backoff> backoff;
  // The API server refused the last create (reconcile.hpp rule 6); cleared by a create that works.
  std::optional<observed::create_refusal> create_refused;
};

using job_actor = caf::stateful_actor<job_state>;

std::string who(job_actor* self) {
  const auto& j = *self->state.job;
  return j.kind + " " + j.metadata.namespace_ + "/" + j.metadata.name;
}

client::resource_ref job_ref(job_actor* self, std::string subresource = {}) {
  const auto& j = *self->state.job;
  auto r = resource_of_kind(j.kind);
  return {r.group, r.version, r.resource, j.metadata.namespace_, j.metadata.name, std::move(subresource)};
}

client::resource_ref core_ref(job_actor* self, const std::string& resource, const std::string& name = {}) {
  return {"", "v1", resource, self->state.job->metadata.namespace_, name, ""};
}

void request_reconcile(job_actor* self) {
  if (self->state.passes.request())
    self->send(self, reconcile_atom::value);
}

void arm_wake(job_actor* self, std::optional<time_point> at) {
  auto& st = self->state;
  if (auto gen = st.passes.wake(at))
    self->delayed_send(self, controller::pass_control::delay_to(*at, st.tools.time->now()), wake_atom::value, *gen);
}

// --- a pass's actions as a plan for the executor ---------------------------------------------

void add_steps(job_actor* self, action&& a, plan& p) {
  std::visit(
      [&](auto& act) {
        using A = std::decay_t<decltype(act)>;
        using namespace controller;
        if constexpr (std::is_same_v<A, create_object>) {
          auto where = core_ref(self, act.resource);
          where.group = act.group;
          p.steps.push_back(create_step{std::move(where), std::move(act.object)});
        } else if constexpr (std::is_same_v<A, delete_object>) {
          p.steps.push_back(delete_step{core_ref(self, act.resource, act.name), act.uid, ""});
        } else if constexpr (std::is_same_v<A, adopt_object>) {
          // reconcile.hpp rule 4: re-read the job, adopt only while it is still this job.
          p.steps.push_back(guard_step{job_ref(self), act.job_uid, true, "adopt " + act.resource + " " + act.name});
          p.steps.push_back(patch_step{core_ref(self, act.resource, act.name), client::patch_type::strategic, act.patch});
        } else if constexpr (std::is_same_v<A, release_object>) {
          p.steps.push_back(patch_step{core_ref(self, act.resource, act.name), client::patch_type::strategic, act.patch});
        } else if constexpr (std::is_same_v<A, patch_object>) {
          auto ref = core_ref(self, act.resource, act.name);
          ref.group = act.group;
          p.steps.push_back(patch_step{std::move(ref), client::patch_type::merge, act.patch});
        } else if constexpr (std::is_same_v<A, patch_job>) {
          p.steps.push_back(patch_step{job_ref(self), client::patch_type::merge, act.patch});
        } else if constexpr (std::is_same_v<A, delete_job>) {
          p.steps.push_back(delete_step{job_ref(self), act.uid, "Background"});
        } else {
          const auto& j = *self->state.job;
          k8s::object_reference about{j.kind, j.metadata.namespace_, j.metadata.name, j.metadata.uid, j.api_version,
                                      "", ""};
          p.steps.push_back(event_step{{about, {self->state.cfg->component, ""}, act.type, act.reason, act.message}});
        }
      },
      a);
}

plan plan_of(job_actor* self, reconcile_result& result) {
  plan p;
  bool creates = std::any_of(result.actions.begin(), result.actions.end(),
                             [](const action& a) { return std::holds_alternative<create_object>(a); });
  // Pods deleted by the garbage collector of a job deleted a moment ago must not be recreated
  // because the jobs watch has not told us yet: a pass that creates re-reads the job first.
  if (creates)
    p.steps.push_back(controller::guard_step{job_ref(self), self->state.job->metadata.uid, false, ""});
  for (auto& a : result.actions)
    add_steps(self, std::move(a), p);
  if (result.status) {
    json::value patch = json::object{};
    patch["status"] = std::move(*result.status);
    p.steps.push_back(controller::patch_step{job_ref(self, "status"), client::patch_type::merge, std::move(patch)});
  }
  return p;
}

job_status status_of(const k8s::custom_object& job) {
  const auto* s = job.document.find("status");
  return s ? status_from_json(*s) : job_status{};
}

// The launcher's ServiceAccount, Role or RoleBinding exists (or, `gone`, no longer does).
void see_rbac(job_actor* self, const std::string& resource, const json::value& object, bool gone) {
  auto& st = self->state;
  if (resource != "serviceaccounts" && resource != "roles" && resource != "rolebindings")
    return;
  if (!st.mpi_rbac)
    st.mpi_rbac = std::make_unique<mpi_rbac_seen>();
  const json::value* meta = object.find("metadata");
  std::string key = resource + "/" + (meta ? meta->get_string("name") : std::string());
  if (gone) {
    st.mpi_rbac->names.erase(key);
    if (resource == "roles")
      st.mpi_rbac->role_rules.reset();
    return;
  }
  st.mpi_rbac->names.insert(key);
  if (resource == "roles") {
    const json::value* rules = object.find("rules");
    st.mpi_rbac->role_rules = rules ? *rules : json::value(json::array{});
  }
}

// What a successful call changes in the actor's view.
void note_answer(job_actor* self, const controller::step& s, const json::value& answer) {
  auto& st = self->state;
  if (const auto* c = std::get_if<controller::create_step>(&s)) {
    if (c->where.resource == "pods" || c->where.resource == "services")
      st.create_refused.reset();
    if (c->where.resource == "pods") {
      count_pod_created();
      if (auto p = k8s::from_json<k8s::pod>(answer))
        st.pods.upsert(std::make_shared<const k8s::pod>(std::move(*p)));
    } else if (c->where.resource == "services") {
      if (auto svc = k8s::from_json<k8s::service>(answer))
        st.services.upsert(std::make_shared<const k8s::service>(std::move(*svc)));
    } else if (c->where.resource == "configmaps") {
      st.mpi_config = config_data(answer);
    } else {
      see_rbac(self, c->where.resource, answer, false);
    }
  } else if (const auto* d = std::get_if<controller::delete_step>(&s)) {
    if (d->ref.resource == "pods" || d->ref.resource == "services")
      st.deleting.push_back(d->uid);
  } else if (const auto* p = std::get_if<controller::patch_step>(&s)) {
    if (p->ref.resource == "configmaps") {
      st.mpi_config = config_data(answer);
    } else if (p->ref.resource == "roles") {
      see_rbac(self, "roles", answer, false);
    } else if (p->ref.subresource == "status") {
      auto job = k8s::from_json<k8s::custom_object>(answer);
      if (!job)
        return;
      if (job->kind.empty()) {
        job->kind = st.job->kind;
        job->api_version = st.job->api_version;
      }
      // The status write that made the job Succeeded or Failed counts it, once.
      if (auto now = status_of(*job); !st.was_finished && is_finished(now))
        count_job_finished(is_succeeded(now));
      if (!controller::older_than(job->metadata.resource_version, st.job->metadata.resource_version))
        st.job = std::make_shared<const k8s::custom_object>(std::move(*job));
    }
  }
}

void on_outcome(job_actor* self, plan_outcome& out) {
  const plan& p = out.plan;
  auto& st = self->state;
  bool again = st.passes.plan_done();
  for (std::size_t i = 0; i < p.steps.size() && i < out.answers.size(); ++i)
    if (out.answers[i])
      note_answer(self, p.steps[i], *out.answers[i]);
  switch (out.what) {
  case plan_outcome::result::stopped:
    spdlog::debug("training: {} is gone or being deleted: nothing created", who(self));
    return; // the supervisor stops this actor when the jobs watch reports the delete
  case plan_outcome::result::failed: {
    if (controller::object_gone(out, job_ref(self))) {
      spdlog::debug("training: {} was deleted: nothing more to write", who(self));
      st.gone = true;
      return; // the supervisor stops this actor when the jobs watch reports the delete
    }
    // A create the API server refused for a reason that retrying alone will not change (an
    // invalid template, a quota, an admission plugin): the next pass says so in the status.
    if (const auto* c = out.failed_step < p.steps.size() ? std::get_if<controller::create_step>(&p.steps[out.failed_step])
                                                          : nullptr;
        c != nullptr && out.code >= 400 && out.code < 500 && out.code != 409 && out.code != 429) {
      std::string what = c->where.resource == "services" ? "service" : "pod";
      const json::value* meta = c->object.find("metadata");
      st.create_refused = observed::create_refusal{what + " " + (meta ? meta->get_string("name") : std::string()),
                                                   out.code, out.message};
    }
    auto delay = st.backoff->next();
    spdlog::warn("training: {}: {} (retrying in {} ms)", who(self), out.failure, delay.count());
    self->delayed_send(self, delay, atoms::retry_atom::value);
    break;
  }
  case plan_outcome::result::done:
    if (!st.create_refused) // a pass that only reported a refusal keeps the back-off growing
      st.backoff->reset();
    break;
  }
  if (again)
    self->send(self, reconcile_atom::value);
}

// --- the pass ------------------------------------------------------------------------------

bool expected_gone(const job_state& st, const std::string& uid) {
  return std::find(st.deleting.begin(), st.deleting.end(), uid) != st.deleting.end();
}

void run_pass(job_actor* self) {
  auto& st = self->state;
  if (st.gone || !st.passes.begin())
    return;
  observed world;
  world.job = *st.job;
  world.now = st.tools.time->now();
  // Expectations whose object has vanished are fulfilled.
  std::vector<std::string> still;
  auto keep = [&](const auto& view, auto& into) {
    for (const auto& [_, o] : view.items) {
      if (expected_gone(st, o->metadata.uid))
        still.push_back(o->metadata.uid);
      else
        into.push_back(*o);
    }
  };
  keep(st.pods, world.pods);
  keep(st.services, world.services);
  st.deleting = std::move(still);
  if (st.mpi_config)
    world.mpi_config = *st.mpi_config;
  if (st.mpi_rbac) {
    world.mpi_rbac = st.mpi_rbac->names;
    world.mpi_role_rules = st.mpi_rbac->role_rules;
  }
  world.create_refused = st.create_refused;
  auto result = reconcile(world, st.cfg->opts);
  if (!result.skipped.empty()) {
    spdlog::debug("training: {} skipped: {}", who(self), result.skipped);
    arm_wake(self, std::nullopt);
    return;
  }
  arm_wake(self, result.wake_at);
  if (result.actions.empty() && !result.status)
    return;
  st.passes.plan_sent();
  st.was_finished = result.status && is_finished(status_of(*st.job));
  self->request(st.tools.executor, caf::infinite, controller::run_plan{plan_of(self, result)})
      .then([self](plan_outcome& out) { on_outcome(self, out); });
}

void on_job(job_actor* self, const object_event<k8s::custom_object>& ev) {
  auto& st = self->state;
  if (ev.type == watch::event_type::deleted || !ev.object)
    return; // the supervisor stops this actor
  if (controller::older_than(ev.object->metadata.resource_version, st.job->metadata.resource_version))
    return;
  st.job = ev.object;
  request_reconcile(self);
}

template <class T>
void on_owned(job_actor* self, controller::object_view<T>& view, const object_event<T>& ev) {
  if (!ev.object || ev.object->metadata.namespace_ != self->state.job->metadata.namespace_)
    return;
  if (ev.type == watch::event_type::deleted) {
    view.erase(*ev.object);
    auto& d = self->state.deleting;
    d.erase(std::remove(d.begin(), d.end(), ev.object->metadata.uid), d.end());
  } else {
    view.upsert(ev.object);
  }
  request_reconcile(self);
}

// The MPI hostfile ConfigMap "<job>-config", or the launcher's ServiceAccount, Role or
// RoleBinding, changed.
void on_owned_other(job_actor* self, const controller::owned_event& ev) {
  if (!ev.object)
    return;
  const bool gone = ev.type == watch::event_type::deleted;
  if (ev.resource == "configmaps") {
    if (ev.object->metadata.name != self->state.job->metadata.name + "-config")
      return;
    self->state.mpi_config = gone ? nullptr : config_data(ev.object->document);
  } else {
    see_rbac(self, ev.resource, ev.object->document, gone);
  }
  request_reconcile(self);
}

caf::behavior job_behavior(job_actor* self, std::shared_ptr<const job_actor_config> cfg, controller::child_tools tools,
                           std::shared_ptr<const k8s::custom_object> job, controller::owned_view view) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.tools = std::move(tools);
  st.backoff.emplace(st.cfg->min_backoff, st.cfg->max_backoff);
  st.job = std::move(job);
  for (auto& p : view.pods)
    st.pods.upsert(std::move(p));
  for (auto& s : view.services)
    st.services.upsert(std::move(s));
  for (const auto& o : view.others) {
    if (o.resource == "configmaps" && o.object->metadata.name == st.job->metadata.name + "-config")
      st.mpi_config = config_data(o.object->document);
    else
      see_rbac(self, o.resource, o.object->document, false);
  }
  request_reconcile(self);
  return {
      [self](object_event<k8s::custom_object>& ev) { on_job(self, ev); },
      [self](object_event<k8s::pod>& ev) { on_owned(self, self->state.pods, ev); },
      [self](object_event<k8s::service>& ev) { on_owned(self, self->state.services, ev); },
      [self](controller::owned_event& ev) { on_owned_other(self, ev); },
      [self](reconcile_atom) { run_pass(self); },
      [self](atoms::retry_atom) { request_reconcile(self); },
      [self](wake_atom, std::uint32_t gen) {
        if (self->state.passes.woke(gen))
          request_reconcile(self);
      },
  };
}

} // namespace

caf::actor spawn_training_job(caf::actor_system& sys, caf::event_based_actor* parent,
                              std::shared_ptr<const job_actor_config> cfg, controller::child_tools tools,
                              std::shared_ptr<const k8s::custom_object> job, controller::owned_view view) {
  return controller::spawn_child(sys, parent, job_behavior, std::move(cfg), std::move(tools), std::move(job),
                                 std::move(view));
}

} // namespace kozmo::training
