#include "actors/training/training_job_actor.hpp"

#include "actors/controller/object_view.hpp"
#include "actors/controller/pass_loop.hpp"
#include "actors/controller/spawn_child.hpp"
#include "actors/training/mpi_view.hpp"
#include "actors/training/reconcile.hpp"
#include "actors/training/training_metrics.hpp"
#include "k8s/model/codec.hpp"
#include "messages/watch_messages.hpp"

#include <caf/all.hpp>
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

namespace {

using controller::plan;
using controller::plan_outcome;

struct job_state {
  static inline const char* name = "training_job";

  std::shared_ptr<const job_actor_config> cfg;
  controller::child_tools tools;
  std::shared_ptr<const k8s::custom_object> job;
  controller::object_view<k8s::pod> pods;
  controller::object_view<k8s::service> services;
  std::unique_ptr<mpi_view> mpi; // MPIJobs only: other jobs pay a pointer
  // Expectations (reconcile.hpp rule 3): uids of pods and services this actor deleted and
  // may still see.
  std::vector<std::string> deleting;
  controller::pass_loop loop;
  metrics::gauge_slot counted_in; // kozmo_training_jobs{kind,phase}
  bool was_finished = false; // the job as the running pass saw it (for the outcome metric)
  // The API server refused the last create (reconcile.hpp rule 6); cleared by a create that works.
  std::optional<observed::create_refusal> create_refused;
};

using job_actor = caf::stateful_actor<job_state>;

client::resource_ref job_ref(job_actor* self, std::string subresource = {}) {
  const auto& j = *self->state.job;
  auto r = resource_of_kind(j.kind);
  return {r.group, r.version, r.resource, j.metadata.namespace_, j.metadata.name, std::move(subresource)};
}

client::resource_ref core_ref(job_actor* self, const std::string& resource, const std::string& name = {}) {
  return {"", "v1", resource, self->state.job->metadata.namespace_, name, ""};
}

void request_reconcile(job_actor* self) { self->state.loop.request(); }

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
          p.steps.push_back(event_step{
              {reference_to(*self->state.job), {self->state.cfg->component, ""}, act.type, act.reason, act.message}});
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

// The job's ConfigMap, or the launcher's ServiceAccount, Role or RoleBinding, changed.
void see_mpi(job_actor* self, const std::string& resource, const json::value& object, bool gone) {
  auto& st = self->state;
  if (!st.mpi)
    st.mpi = std::make_unique<mpi_view>();
  st.mpi->see(st.job->metadata.name, resource, object, gone);
}

// What a successful call changes in the actor's view.
void note_answer(job_actor* self, const controller::step& s, json::value& answer) {
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
    } else {
      see_mpi(self, c->where.resource, answer, false);
    }
  } else if (const auto* d = std::get_if<controller::delete_step>(&s)) {
    if (d->ref.resource == "pods" || d->ref.resource == "services")
      st.deleting.push_back(d->uid);
  } else if (const auto* p = std::get_if<controller::patch_step>(&s)) {
    if (p->ref.resource == "configmaps" || p->ref.resource == "roles") {
      see_mpi(self, p->ref.resource, answer, false);
    } else if (p->ref.subresource == "status") {
      auto job = controller::newer_copy(*st.job, std::move(answer));
      if (!job)
        return;
      // The status write that made the job Succeeded or Failed counts it, once.
      if (auto now = status_of(*job); !st.was_finished && is_finished(now))
        count_job_finished(is_succeeded(now));
      st.job = std::move(job);
    }
  }
}

// What a 409 met, as the server has it now: our pod or service (or a namesake: ours is gone),
// or the job.
void note_reread(job_actor* self, const controller::step& s, json::value& now) {
  auto& st = self->state;
  const auto resource = controller::resource_of(s);
  const auto& uid = st.job->metadata.uid;
  if (resource == "pods") {
    if (auto p = k8s::from_json<k8s::pod>(now))
      st.pods.take_reread(std::make_shared<const k8s::pod>(std::move(*p)), uid);
  } else if (resource == "services") {
    if (auto svc = k8s::from_json<k8s::service>(now))
      st.services.take_reread(std::make_shared<const k8s::service>(std::move(*svc)), uid);
  } else if (resource == job_ref(self).resource) {
    if (auto job = controller::newer_copy(*st.job, std::move(now)))
      st.job = std::move(job);
  }
}

// A create the API server refused for a reason that retrying alone will not change (an invalid
// template, a quota, an admission plugin): the next pass says so in the status.
void note_failure(job_actor* self, const plan_outcome& out) {
  const auto& p = out.plan;
  const auto* c = out.failed_step < p.steps.size() ? std::get_if<controller::create_step>(&p.steps[out.failed_step])
                                                    : nullptr;
  if (c == nullptr || out.code < 400 || out.code >= 500 || out.code == 409 || out.code == 429)
    return;
  std::string what = c->where.resource == "services" ? "service" : "pod";
  const json::value* meta = c->object.find("metadata");
  self->state.create_refused =
      observed::create_refusal{what + " " + (meta ? meta->get_string("name") : std::string()), out.code, out.message};
}

// --- the pass ------------------------------------------------------------------------------

bool expected_gone(const job_state& st, const std::string& uid) {
  return std::find(st.deleting.begin(), st.deleting.end(), uid) != st.deleting.end();
}

controller::pass_decision run_pass(job_actor* self) {
  auto& st = self->state;
  count_job_in(st.counted_in, st.job->kind, job_phase(status_of(*st.job)));
  observed world;
  world.job = *st.job;
  world.now = st.loop.now();
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
  if (st.mpi)
    st.mpi->fill(world);
  world.create_refused = st.create_refused;
  auto result = reconcile(world, st.cfg->opts);
  if (!result.skipped.empty()) {
    spdlog::debug("training: {} skipped: {}", st.loop.who(), result.skipped);
    return {};
  }
  if (result.actions.empty() && !result.status)
    return {{}, result.wake_at};
  st.was_finished = result.status && is_finished(status_of(*st.job));
  return {plan_of(self, result), result.wake_at};
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
  auto& st = self->state;
  if (view.take_event(ev.type == watch::event_type::deleted, ev.object, st.job->metadata.namespace_, st.deleting))
    request_reconcile(self);
}

// The MPI hostfile ConfigMap "<job>-config", or the launcher's ServiceAccount, Role or
// RoleBinding, changed.
void on_owned_other(job_actor* self, const controller::owned_event& ev) {
  const auto& job = self->state.job->metadata.name;
  if (!ev.object || (ev.resource == "configmaps" && ev.object->metadata.name != job + "-config"))
    return;
  see_mpi(self, ev.resource, ev.object->document, ev.type == watch::event_type::deleted);
  request_reconcile(self);
}

caf::behavior job_behavior(job_actor* self, std::shared_ptr<const job_actor_config> cfg, controller::child_tools tools,
                           std::shared_ptr<const k8s::custom_object> job, controller::owned_view view) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.tools = tools;
  st.job = std::move(job);
  const auto& j = *st.job;
  controller::pass_hooks hooks;
  hooks.pass = [self] { return run_pass(self); };
  hooks.absorb = [self](const controller::step& s, json::value& answer) { note_answer(self, s, answer); };
  hooks.reread = [self](const controller::step& s, json::value& now) { note_reread(self, s, now); };
  hooks.failed = [self](const plan_outcome& out) { note_failure(self, out); };
  hooks.settled = [self] { return !self->state.create_refused; };
  st.loop.start(self, tools,
                {"training: " + j.kind + " " + j.metadata.namespace_ + "/" + j.metadata.name, job_ref(self),
                 st.cfg->min_backoff, st.cfg->max_backoff, controller_name(j.kind)},
                std::move(hooks));
  for (auto& p : view.pods)
    st.pods.upsert(std::move(p));
  for (auto& s : view.services)
    st.services.upsert(std::move(s));
  for (const auto& o : view.others)
    see_mpi(self, o.resource, o.object->document, false);
  request_reconcile(self);
  return st.loop.handlers().or_else(
      [self](object_event<k8s::custom_object>& ev) { on_job(self, ev); },
      [self](object_event<k8s::pod>& ev) { on_owned(self, self->state.pods, ev); },
      [self](object_event<k8s::service>& ev) { on_owned(self, self->state.services, ev); },
      [self](controller::owned_event& ev) { on_owned_other(self, ev); });
}

} // namespace

caf::actor spawn_training_job(caf::actor_system& sys, caf::event_based_actor* parent,
                              std::shared_ptr<const job_actor_config> cfg, controller::child_tools tools,
                              std::shared_ptr<const k8s::custom_object> job, controller::owned_view view) {
  return controller::spawn_child(sys, parent, job_behavior, std::move(cfg), std::move(tools), std::move(job),
                                 std::move(view));
}

} // namespace kozmo::training
