#include "actors/trainer/trainjob_actor.hpp"

#include "actors/controller/object_view.hpp"
#include "actors/controller/pass_loop.hpp"
#include "actors/controller/spawn_child.hpp"
#include "actors/controller/supervisor_actor.hpp"
#include "actors/trainer/ssh_keys.hpp"
#include "actors/trainer/trainjob_reconcile.hpp"
#include "actors/training/training_metrics.hpp"
#include "k8s/model/codec.hpp"
#include "messages/watch_messages.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <map>
#include <set>

namespace kozmo::trainer {
namespace {

struct child_config {
  options opts;
  std::chrono::milliseconds min_backoff;
  std::chrono::milliseconds max_backoff;
};

struct trainjob_state {
  static inline const char* name = "trainjob";

  std::shared_ptr<const child_config> cfg;
  std::shared_ptr<const k8s::custom_object> job;
  controller::object_view<k8s::pod> pods;
  controller::object_view<k8s::service> services;
  std::shared_ptr<const k8s::custom_object> snapshot;
  std::set<std::string> claims; // the job's PersistentVolumeClaims that exist
  std::set<std::string> config_maps; // the job's ConfigMaps that exist (the MPI hostfile)
  // MPI: the SSH Secret was created or met 409 (the controller may create Secrets, not read them).
  bool ssh_secret_exists = false;
  std::optional<ssh_key_pair> ssh_keys;
  // Runtimes this job can see, by "<kind>/<name>" (TrainingRuntimes of its namespace only).
  std::map<std::string, std::shared_ptr<const k8s::custom_object>> runtimes;
  std::vector<std::string> deleting; // uids of pods this actor deleted and may still see
  std::optional<observed::create_refusal> create_refused;
  controller::pass_loop loop;
  metrics::gauge_slot counted_in; // kozmo_training_jobs{kind="TrainJob",phase}
};

using trainjob_actor = caf::stateful_actor<trainjob_state>;

std::string runtime_key(const std::string& kind, const std::string& name) { return kind + "/" + name; }

controller::pass_decision run_pass(trainjob_actor* self) {
  auto& st = self->state;
  observed world;
  world.job = *st.job;
  world.now = st.loop.now();
  if (const auto* ref = st.job->document.at_path({"spec", "runtimeRef"})) {
    auto kind = ref->get_string("kind", kind_cluster_runtime);
    if (auto it = st.runtimes.find(runtime_key(kind, ref->get_string("name"))); it != st.runtimes.end())
      world.runtime = *it->second;
  }
  if (st.snapshot)
    world.snapshot = *st.snapshot;
  std::vector<std::string> still;
  for (const auto& [_, p] : st.pods.items) {
    if (std::find(st.deleting.begin(), st.deleting.end(), p->metadata.uid) != st.deleting.end())
      still.push_back(p->metadata.uid);
    else
      world.pods.push_back(*p);
  }
  st.deleting = std::move(still);
  for (const auto& [_, s] : st.services.items)
    world.services.push_back(*s);
  world.create_refused = st.create_refused;
  world.claims.assign(st.claims.begin(), st.claims.end());
  world.config_maps.assign(st.config_maps.begin(), st.config_maps.end());
  world.ssh_secret_exists = st.ssh_secret_exists;
  world.ssh_keys = st.ssh_keys;
  auto result = reconcile(world, st.cfg->opts);
  training::count_job_in(st.counted_in, "TrainJob", phase(result.status));
  if (result.needs_ssh_keys && !st.ssh_keys) {
    st.ssh_keys = make_ssh_key_pair();
    if (!st.ssh_keys)
      spdlog::error("trainer: {}: cannot make an SSH key pair for the MPI Secret", st.loop.who());
    else
      return {{}, st.loop.now()}; // again at once, with the keys
  }
  if (!result.skipped.empty()) {
    spdlog::debug("trainer: {} skipped: {}", st.loop.who(), result.skipped);
    return {};
  }
  return {std::move(result.plan), result.wake_at};
}

void note_answer(trainjob_actor* self, const controller::step& s, json::value& answer) {
  auto& st = self->state;
  if (const auto* c = std::get_if<controller::create_step>(&s)) {
    if (c->where.resource == "pods") {
      st.create_refused.reset();
      training::count_pod_created();
      if (auto p = k8s::from_json<k8s::pod>(answer))
        st.pods.upsert(std::make_shared<const k8s::pod>(std::move(*p)));
    } else if (c->where.resource == "services") {
      if (auto svc = k8s::from_json<k8s::service>(answer))
        st.services.upsert(std::make_shared<const k8s::service>(std::move(*svc)));
    } else if (c->where.resource == "secrets") {
      st.ssh_secret_exists = true;
      st.ssh_keys.reset(); // not kept longer than needed
    } else if (c->where.resource == "configmaps") {
      auto cm = k8s::from_json<k8s::custom_object>(answer);
      if (cm && cm->metadata.name == snapshot_name(st.job->metadata.name))
        st.snapshot = std::make_shared<const k8s::custom_object>(std::move(*cm));
      else if (cm)
        st.config_maps.insert(cm->metadata.name);
    } else if (c->where.resource == "persistentvolumeclaims") {
      if (const auto* meta = answer.find("metadata"))
        st.claims.insert(meta->get_string("name"));
    }
  } else if (const auto* d = std::get_if<controller::delete_step>(&s)) {
    if (d->ref.resource == "pods")
      st.deleting.push_back(d->uid);
  } else if (const auto* p = std::get_if<controller::patch_step>(&s)) {
    if (p->ref.resource == "trainjobs")
      if (auto job = controller::newer_copy(*st.job, std::move(answer)))
        st.job = std::move(job);
  }
}

void note_reread(trainjob_actor* self, const controller::step& s, json::value& now) {
  auto& st = self->state;
  auto resource = controller::resource_of(s);
  if (resource == "pods") {
    if (auto p = k8s::from_json<k8s::pod>(now))
      st.pods.take_reread(std::make_shared<const k8s::pod>(std::move(*p)), st.job->metadata.uid);
  } else if (resource == "services") {
    if (auto svc = k8s::from_json<k8s::service>(now))
      st.services.take_reread(std::make_shared<const k8s::service>(std::move(*svc)), st.job->metadata.uid);
  } else if (resource == "configmaps") {
    auto cm = k8s::from_json<k8s::custom_object>(now);
    if (cm && cm->metadata.name == snapshot_name(st.job->metadata.name))
      st.snapshot = std::make_shared<const k8s::custom_object>(std::move(*cm));
    else if (cm)
      st.config_maps.insert(cm->metadata.name);
  } else if (resource == "persistentvolumeclaims") {
    if (const auto* meta = now.find("metadata"))
      st.claims.insert(meta->get_string("name")); // already there
  } else if (resource == "trainjobs") {
    if (auto job = controller::newer_copy(*st.job, std::move(now)))
      st.job = std::move(job);
  }
}

// A pod the API server refused for a reason retrying alone will not change (rule 8).
void note_failure(trainjob_actor* self, const controller::plan_outcome& out) {
  const auto& steps = out.plan.steps;
  const auto* c = out.failed_step < steps.size() ? std::get_if<controller::create_step>(&steps[out.failed_step]) : nullptr;
  if (c != nullptr && c->where.resource == "secrets" && out.code == 409) {
    self->state.ssh_secret_exists = true; // made by an earlier run of this controller
    self->state.ssh_keys.reset();
    return;
  }
  if (c == nullptr || c->where.resource != "pods" || out.code < 400 || out.code >= 500 || out.code == 409 ||
      out.code == 429)
    return;
  const auto* meta = c->object.find("metadata");
  self->state.create_refused =
      observed::create_refusal{"pod " + (meta ? meta->get_string("name") : std::string()), out.code, out.message};
}

void on_other(trainjob_actor* self, const controller::owned_event& ev) {
  auto& st = self->state;
  if (!ev.object)
    return;
  const bool gone = ev.type == watch::event_type::deleted;
  if (ev.resource == "configmaps") {
    if (ev.object->metadata.name != snapshot_name(st.job->metadata.name)) {
      if (gone)
        st.config_maps.erase(ev.object->metadata.name);
      else
        st.config_maps.insert(ev.object->metadata.name);
    } else {
      st.snapshot = gone ? nullptr : ev.object;
    }
  } else if (ev.resource == "persistentvolumeclaims") {
    if (gone)
      st.claims.erase(ev.object->metadata.name);
    else
      st.claims.insert(ev.object->metadata.name);
  } else if (ev.resource == "trainingruntimes" || ev.resource == "clustertrainingruntimes") {
    auto kind = ev.resource == "trainingruntimes" ? std::string(kind_runtime) : std::string(kind_cluster_runtime);
    auto key = runtime_key(kind, ev.object->metadata.name);
    if (gone)
      st.runtimes.erase(key);
    else
      st.runtimes[key] = ev.object;
    if (st.snapshot)
      return; // the job runs its snapshot: a runtime's change is nothing to it
  }
  st.loop.request();
}

template <class T>
void on_owned(trainjob_actor* self, controller::object_view<T>& view, const object_event<T>& ev) {
  auto& st = self->state;
  if (view.take_event(ev.type == watch::event_type::deleted, ev.object, st.job->metadata.namespace_, st.deleting))
    st.loop.request();
}

caf::behavior trainjob_behavior(trainjob_actor* self, std::shared_ptr<const child_config> cfg,
                                controller::child_tools tools, std::shared_ptr<const k8s::custom_object> job,
                                controller::owned_view view) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.job = std::move(job);
  const auto& j = *st.job;
  controller::pass_hooks hooks;
  hooks.pass = [self] { return run_pass(self); };
  hooks.absorb = [self](const controller::step& s, json::value& answer) { note_answer(self, s, answer); };
  hooks.reread = [self](const controller::step& s, json::value& now) { note_reread(self, s, now); };
  hooks.failed = [self](const controller::plan_outcome& out) { note_failure(self, out); };
  hooks.settled = [self] { return !self->state.create_refused; };
  st.loop.start(self, tools,
                {"TrainJob " + j.metadata.namespace_ + "/" + j.metadata.name,
                 trainjob_ref(j.metadata.namespace_, j.metadata.name), st.cfg->min_backoff, st.cfg->max_backoff,
                 "trainjob"},
                std::move(hooks));
  for (auto& p : view.pods)
    st.pods.upsert(std::move(p));
  for (auto& s : view.services)
    st.services.upsert(std::move(s));
  for (const auto& o : view.others)
    on_other(self, o);
  st.loop.request();
  return st.loop.handlers().or_else(
      [self](object_event<k8s::custom_object>& ev) {
        auto& st = self->state;
        if (ev.type == watch::event_type::deleted || !ev.object ||
            controller::older_than(ev.object->metadata.resource_version, st.job->metadata.resource_version))
          return;
        st.job = ev.object;
        st.loop.request();
      },
      [self](object_event<k8s::pod>& ev) { on_owned(self, self->state.pods, ev); },
      [self](object_event<k8s::service>& ev) { on_owned(self, self->state.services, ev); },
      [self](controller::owned_event& ev) { on_other(self, ev); });
}

} // namespace

caf::actor spawn_trainjob_controller(caf::actor_system& sys, caf::actor pods_watch, controller_config cfg) {
  controller::supervisor_config sc;
  sc.name = "trainer";
  sc.cli = cfg.cli;
  sc.ns = cfg.ns;
  sc.primaries.push_back({trainjob_ref("", ""), std::string(kind_trainjob), std::string(api_version)});
  sc.pods_watch = std::move(pods_watch);
  sc.services = true;
  sc.owned.push_back({{"", "v1", "configmaps", "", "", ""}, std::string(label::jobset_name)});
  sc.owned.push_back({{"", "v1", "persistentvolumeclaims", "", "", ""}, std::string(label::jobset_name)});
  sc.referenced.push_back({{std::string(group), "v1alpha1", "trainingruntimes", "", "", ""}, std::string(kind_runtime),
                           std::string(api_version), false});
  sc.referenced.push_back({{std::string(group), "v1alpha1", "clustertrainingruntimes", "", "", ""},
                           std::string(kind_cluster_runtime), std::string(api_version), true});
  sc.route_label = std::string(label::jobset_name);
  sc.recorder = std::move(cfg.recorder);
  auto child = std::make_shared<const child_config>(child_config{std::move(cfg.opts), cfg.min_backoff, cfg.max_backoff});
  sc.spawn_child = [child](caf::event_based_actor* parent, const controller::child_tools& tools,
                           std::shared_ptr<const k8s::custom_object> job, controller::owned_view view) {
    return controller::spawn_child(parent->system(), parent, trainjob_behavior, child, tools, std::move(job),
                                   std::move(view));
  };
  return controller::spawn_supervisor(sys, std::move(sc));
}

} // namespace kozmo::trainer
