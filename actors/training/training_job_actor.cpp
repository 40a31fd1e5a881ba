#include "actors/training/training_job_actor.hpp"

#include "actors/training/reconcile.hpp"
#include "actors/training/training_metrics.hpp"
#include "k8s/client/client.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/make_event.hpp"
#include "messages/atoms.hpp"
#include "messages/watch_messages.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <charconv>

namespace kozmo::training {

job_resource resource_of_kind(const std::string& kind) {
  if (kind == "PyTorchJob")
    return {"kubeflow.org", "v1", "pytorchjobs"};
  if (kind == "TFJob")
    return {"kubeflow.org", "v1", "tfjobs"};
  if (kind == "MPIJob")
    return {"kubeflow.org", "v1", "mpijobs"};
  if (kind == "Caffe2Job")
    return {"kubeflow.org", "v1alpha1", "caffe2jobs"};
  return {};
}

namespace {

using reconcile_atom = caf::atom_constant<caf::atom("reconcile")>;
using wake_atom = caf::atom_constant<caf::atom("wake")>;

// The answer to one API call of the current execution, back from the client's io thread.
struct action_done {
  std::uint64_t run = 0;
  std::uint32_t index = 0; // into execution::actions; status_index for the status write
  std::uint8_t stage = 0;  // adopt: 0 = the job re-read, 1 = the patch
  std::shared_ptr<expected<json::value>> result;
};

template <class I>
typename I::result_type inspect(I& f, action_done& x) {
  return f(caf::meta::type_name("action_done"), x.run, x.index, x.stage);
}

constexpr std::uint32_t status_index = 0xffffffffu;
// The GET of the job that precedes a pass that creates objects: pods deleted by the garbage
// collector of a job deleted a moment ago must not be recreated because the jobs watch has not
// told us yet (objects whose owner is gone would linger on a server without a GC sweep).
constexpr std::uint32_t verify_index = 0xfffffffeu;

// The actions of one reconcile pass, while they are in flight.
struct execution {
  std::uint64_t id = 0;
  std::vector<action> actions;
  std::optional<json::value> status;
  bool was_finished = false; // the job as this pass saw it (for the outcome metric)
  std::size_t next = 0;
  int in_flight = 0;
  bool status_sent = false;
  std::vector<std::size_t> held_events; // Events of the wave in flight, posted once it succeeded
  std::string failure; // set by the first failed call: the rest is dropped
};

struct job_state {
  static inline const char* name = "training_job";

  std::shared_ptr<const job_actor_config> cfg;
  std::shared_ptr<const k8s::custom_object> job;
  std::map<std::string, std::shared_ptr<const k8s::pod>> pods;         // by name
  std::map<std::string, std::shared_ptr<const k8s::service>> services; // by name
  std::shared_ptr<const std::map<std::string, std::string>> mpi_config;
  // Expectations (reconcile.hpp rule 3): uids of pods and services this actor deleted and
  // may still see.
  std::vector<std::string> deleting;
  std::unique_ptr<execution> run;
  std::uint64_t runs = 0;
  std::uint32_t wake_generation = 0;
  std::optional<time_point> wake_at;
  std::chrono::milliseconds backoff{0};
  bool dirty = false;  // something changed since the last pass
  bool queued = false; // a reconcile_atom is in the mailbox
};

using job_actor = caf::stateful_actor<job_state>;

// resourceVersions are opaque, but both servers Kozmo talks to (etcd-backed and embedded)
// hand out increasing integers: an answer to our own write can overtake the watch, and the
// watch's older echo must not roll the view back.
bool older_than(const std::string& incoming, const std::string& held) {
  std::uint64_t a = 0, b = 0;
  auto ra = std::from_chars(incoming.data(), incoming.data() + incoming.size(), a);
  auto rb = std::from_chars(held.data(), held.data() + held.size(), b);
  if (ra.ec != std::errc{} || rb.ec != std::errc{} || incoming.empty() || held.empty())
    return false;
  return a < b;
}

template <class T>
void upsert(std::map<std::string, std::shared_ptr<const T>>& m, std::shared_ptr<const T> obj) {
  auto& slot = m[obj->metadata.name];
  if (slot && older_than(obj->metadata.resource_version, slot->metadata.resource_version))
    return;
  slot = std::move(obj);
}

template <class T>
void erase(std::map<std::string, std::shared_ptr<const T>>& m, const T& obj) {
  auto it = m.find(obj.metadata.name);
  if (it != m.end() && it->second->metadata.uid == obj.metadata.uid)
    m.erase(it);
}

std::string ns_of(job_actor* self) { return self->state.job->metadata.namespace_; }

client::resource_ref job_ref(job_actor* self) {
  const auto& j = *self->state.job;
  auto r = resource_of_kind(j.kind);
  return {r.group, r.version, r.resource, j.metadata.namespace_, j.metadata.name, ""};
}

client::resource_ref core_ref(job_actor* self, const std::string& resource, const std::string& name = {}) {
  return {"", "v1", resource, ns_of(self), name, ""};
}

void request_reconcile(job_actor* self) {
  auto& st = self->state;
  st.dirty = true;
  if (!st.queued && !st.run) {
    st.queued = true;
    self->send(self, reconcile_atom::value);
  }
}

void arm_wake(job_actor* self, std::optional<time_point> at) {
  auto& st = self->state;
  if (at == st.wake_at)
    return;
  st.wake_at = at;
  auto gen = ++st.wake_generation;
  if (!at)
    return;
  auto delay = std::chrono::duration_cast<std::chrono::milliseconds>(*at - std::chrono::system_clock::now());
  // The core compares whole seconds: wake a little after the mark, never before it.
  delay = std::max(delay, std::chrono::milliseconds{0}) + std::chrono::milliseconds{20};
  self->delayed_send(self, delay, wake_atom::value, gen);
}

// --- executing a pass's actions ------------------------------------------------------------

std::function<void(expected<json::value>)> reply_to(job_actor* self, std::uint32_t index, std::uint8_t stage = 0) {
  caf::actor me = caf::actor_cast<caf::actor>(self);
  auto id = self->state.run->id;
  return [me, id, index, stage](expected<json::value> r) {
    caf::anon_send(me, action_done{id, index, stage, std::make_shared<expected<json::value>>(std::move(r))});
  };
}

void post_event(job_actor* self, const record_event& ev) {
  const auto& j = *self->state.job;
  k8s::object_reference about;
  about.kind = j.kind;
  about.api_version = j.api_version;
  about.namespace_ = j.metadata.namespace_;
  about.name = j.metadata.name;
  about.uid = j.metadata.uid;
  k8s::event_source source{self->state.cfg->component, ""};
  auto body = k8s::make_event(about, source, ev.type, ev.reason, ev.message, std::chrono::system_clock::now());
  std::string what = j.metadata.namespace_ + "/" + j.metadata.name + " " + ev.reason;
  // Events are best-effort: a lost one never blocks the job.
  self->state.cfg->cli->create_event(body, [what](expected<json::value> r) {
    if (!r)
      spdlog::debug("training: event {} not recorded: {}", what, r.err().message);
  });
}

void launch(job_actor* self, std::uint32_t index) {
  auto& st = self->state;
  auto& cli = *st.cfg->cli;
  const action& a = st.run->actions[index];
  ++st.run->in_flight;
  std::visit(
      [&](const auto& act) {
        using A = std::decay_t<decltype(act)>;
        if constexpr (std::is_same_v<A, create_object>) {
          cli.create(core_ref(self, act.resource), act.object, reply_to(self, index));
        } else if constexpr (std::is_same_v<A, delete_object>) {
          client::delete_options o;
          o.precondition_uid = act.uid;
          cli.remove(core_ref(self, act.resource, act.name), o, reply_to(self, index));
        } else if constexpr (std::is_same_v<A, adopt_object>) {
          cli.get(job_ref(self), reply_to(self, index, 0)); // rule 4: re-read the job first
        } else if constexpr (std::is_same_v<A, release_object>) {
          cli.patch(core_ref(self, act.resource, act.name), client::patch_type::strategic, act.patch, {},
                    reply_to(self, index));
        } else if constexpr (std::is_same_v<A, patch_config_map>) {
          cli.patch(core_ref(self, "configmaps", act.name), client::patch_type::merge, act.patch, {},
                    reply_to(self, index));
        } else if constexpr (std::is_same_v<A, delete_job>) {
          client::delete_options o;
          o.precondition_uid = act.uid;
          o.propagation_policy = "Background";
          cli.remove(job_ref(self), o, reply_to(self, index));
        } else {
          --st.run->in_flight; // record_event: handled by the caller
        }
      },
      a);
}

// Creates go out together, so do deletes: within such a run the order does not matter (distinct
// names); anything else waits for what came before. Events are fire-and-forget, posted once
// the calls before them have succeeded.
void step(job_actor* self);

void finish(job_actor* self, bool failed) {
  auto& st = self->state;
  if (failed) {
    st.backoff = st.backoff.count() == 0 ? st.cfg->min_backoff : std::min(st.backoff * 2, st.cfg->max_backoff);
    spdlog::warn("training: {} {}/{}: {} (retrying in {} ms)", st.job->kind, ns_of(self), st.job->metadata.name,
                 st.run->failure, st.backoff.count());
    self->delayed_send(self, st.backoff, atoms::retry_atom::value);
  } else {
    st.backoff = std::chrono::milliseconds{0};
  }
  st.run.reset();
  if (st.dirty && !st.queued) {
    st.queued = true;
    self->send(self, reconcile_atom::value);
  }
}

void step(job_actor* self) {
  auto& st = self->state;
  auto& ex = *st.run;
  if (ex.in_flight > 0)
    return;
  if (!ex.failure.empty())
    return finish(self, true);
  for (auto i : ex.held_events)
    post_event(self, std::get<record_event>(ex.actions[i]));
  ex.held_events.clear();
  if (ex.next == ex.actions.size()) {
    if (ex.status && !ex.status_sent) {
      ex.status_sent = true;
      ++ex.in_flight;
      json::value patch = json::object{};
      patch["status"] = std::move(*ex.status);
      st.cfg->cli->patch_status(job_ref(self), client::patch_type::merge, patch, {}, reply_to(self, status_index));
      return;
    }
    return finish(self, false);
  }
  auto first = ex.actions[ex.next].index();
  while (ex.next < ex.actions.size()) {
    const action& a = ex.actions[ex.next];
    if (std::holds_alternative<record_event>(a)) {
      ex.held_events.push_back(ex.next++);
      continue;
    }
    bool batchable = std::holds_alternative<create_object>(a) || std::holds_alternative<delete_object>(a);
    if (ex.in_flight > 0 && (!batchable || a.index() != first))
      break;
    first = a.index();
    launch(self, static_cast<std::uint32_t>(ex.next++));
    if (!batchable)
      break;
  }
  if (ex.in_flight == 0)
    step(self); // only events were left
}

std::string describe(const action& a) {
  return std::visit(
      [](const auto& act) -> std::string {
        using A = std::decay_t<decltype(act)>;
        if constexpr (std::is_same_v<A, create_object>)
          return "create " + act.resource + " " + act.object.at_path({"metadata"})->get_string("name");
        else if constexpr (std::is_same_v<A, delete_object>)
          return "delete " + act.resource + " " + act.name;
        else if constexpr (std::is_same_v<A, adopt_object>)
          return "adopt " + act.resource + " " + act.name;
        else if constexpr (std::is_same_v<A, release_object>)
          return "release " + act.resource + " " + act.name;
        else if constexpr (std::is_same_v<A, patch_config_map>)
          return "patch configmap " + act.name;
        else if constexpr (std::is_same_v<A, delete_job>)
          return "delete the job";
        else
          return "event";
      },
      a);
}

} // namespace

std::shared_ptr<const std::map<std::string, std::string>> config_data(const json::value& config_map) {
  auto data = std::make_shared<std::map<std::string, std::string>>();
  if (const auto* d = config_map.find("data"); d && d->is_object())
    for (const auto& [k, v] : d->as_object())
      if (v.is_string())
        (*data)[k] = v.as_string();
  return data;
}

namespace {

// What a successful call changes in the actor's view.
void note_success(job_actor* self, const action& a, const json::value& answer) {
  auto& st = self->state;
  if (const auto* c = std::get_if<create_object>(&a)) {
    if (c->resource == "pods") {
      count_pod_created();
      if (auto p = k8s::from_json<k8s::pod>(answer))
        upsert(st.pods, std::make_shared<const k8s::pod>(std::move(*p)));
    } else if (c->resource == "services") {
      if (auto s = k8s::from_json<k8s::service>(answer))
        upsert(st.services, std::make_shared<const k8s::service>(std::move(*s)));
    } else if (c->resource == "configmaps") {
      st.mpi_config = config_data(answer);
    }
  } else if (const auto* d = std::get_if<delete_object>(&a)) {
    st.deleting.push_back(d->uid);
  } else if (std::holds_alternative<patch_config_map>(a)) {
    st.mpi_config = config_data(answer);
  }
}

job_status status_of(const k8s::custom_object& job) {
  const auto* s = job.document.find("status");
  return s ? status_from_json(*s) : job_status{};
}

// The status write that made the job Succeeded or Failed counts it, once.
void count_outcome(const execution& ex, const k8s::custom_object& after) {
  if (ex.was_finished)
    return;
  auto now = status_of(after);
  if (is_finished(now))
    count_job_finished(is_succeeded(now));
}

void on_done(job_actor* self, action_done& msg) {
  auto& st = self->state;
  if (!st.run || st.run->id != msg.run)
    return;
  auto& ex = *st.run;
  --ex.in_flight;
  auto& result = *msg.result;
  if (msg.index == verify_index) {
    const auto* meta = result ? result->find("metadata") : nullptr;
    bool same = meta && meta->get_string("uid") == st.job->metadata.uid && !meta->find("deletionTimestamp");
    if (!same && (result || result.err().code == 404)) {
      spdlog::debug("training: {} {}/{} is gone or being deleted: nothing created", st.job->kind, ns_of(self),
                    st.job->metadata.name);
      st.run.reset(); // the supervisor stops this actor when the jobs watch reports the delete
      return;
    }
    if (!result && ex.failure.empty())
      ex.failure = "re-reading the job failed: " + result.err().message;
    return step(self);
  }
  if (msg.index == status_index) {
    if (!result) {
      ex.failure = "status write failed: " + result.err().message;
    } else if (auto job = k8s::from_json<k8s::custom_object>(*result)) {
      if (job->kind.empty()) {
        job->kind = st.job->kind;
        job->api_version = st.job->api_version;
      }
      count_outcome(ex, *job);
      if (!older_than(job->metadata.resource_version, st.job->metadata.resource_version))
        st.job = std::make_shared<const k8s::custom_object>(std::move(*job));
    }
    return step(self);
  }
  const action& a = ex.actions[msg.index];
  if (!result) {
    bool gone = result.err().code == 404;
    if (gone && std::holds_alternative<delete_object>(a)) {
      // Already gone: what the delete wanted.
    } else if (ex.failure.empty()) {
      ex.failure = describe(a) + ": " + result.err().message;
    }
    return step(self);
  }
  if (const auto* adopt = std::get_if<adopt_object>(&a); adopt && msg.stage == 0) {
    const auto* meta = result->find("metadata");
    bool same = meta && meta->get_string("uid") == st.job->metadata.uid && !meta->find("deletionTimestamp");
    if (!same) {
      if (ex.failure.empty())
        ex.failure = "adopt " + adopt->name + ": the job was replaced or is being deleted";
      return step(self);
    }
    ++ex.in_flight;
    st.cfg->cli->patch(core_ref(self, adopt->resource, adopt->name), client::patch_type::strategic, adopt->patch, {},
                       reply_to(self, msg.index, 1));
    return;
  }
  note_success(self, a, *result);
  step(self);
}

// --- the pass ------------------------------------------------------------------------------

bool expected_gone(const job_state& st, const std::string& uid) {
  return std::find(st.deleting.begin(), st.deleting.end(), uid) != st.deleting.end();
}

void run_pass(job_actor* self) {
  auto& st = self->state;
  st.queued = false;
  if (st.run || !st.dirty)
    return;
  st.dirty = false;
  observed world;
  world.job = *st.job;
  world.now = std::chrono::system_clock::now();
  // Expectations whose object has vanished are fulfilled.
  std::vector<std::string> still;
  for (const auto& [_, p] : st.pods) {
    if (expected_gone(st, p->metadata.uid))
      still.push_back(p->metadata.uid);
    else
      world.pods.push_back(*p);
  }
  for (const auto& [_, s] : st.services) {
    if (expected_gone(st, s->metadata.uid))
      still.push_back(s->metadata.uid);
    else
      world.services.push_back(*s);
  }
  st.deleting = std::move(still);
  if (st.mpi_config)
    world.mpi_config = *st.mpi_config;
  auto result = reconcile(world, st.cfg->opts);
  if (!result.skipped.empty()) {
    spdlog::debug("training: {} {}/{} skipped: {}", st.job->kind, ns_of(self), st.job->metadata.name, result.skipped);
    arm_wake(self, std::nullopt);
    return;
  }
  arm_wake(self, result.wake_at);
  if (result.actions.empty() && !result.status)
    return;
  st.run = std::make_unique<execution>();
  st.run->id = ++st.runs;
  st.run->actions = std::move(result.actions);
  st.run->status = std::move(result.status);
  st.run->was_finished = st.run->status && is_finished(status_of(*st.job));
  bool creates = std::any_of(st.run->actions.begin(), st.run->actions.end(),
                             [](const action& a) { return std::holds_alternative<create_object>(a); });
  if (!creates)
    return step(self);
  ++st.run->in_flight;
  st.cfg->cli->get(job_ref(self), reply_to(self, verify_index));
}

void on_job(job_actor* self, const object_event<k8s::custom_object>& ev) {
  auto& st = self->state;
  if (ev.type == watch::event_type::deleted || !ev.object)
    return; // the supervisor stops this actor
  if (older_than(ev.object->metadata.resource_version, st.job->metadata.resource_version))
    return;
  st.job = ev.object;
  request_reconcile(self);
}

template <class T>
void on_owned(job_actor* self, std::map<std::string, std::shared_ptr<const T>>& m, const object_event<T>& ev) {
  if (!ev.object || ev.object->metadata.namespace_ != ns_of(self))
    return;
  if (ev.type == watch::event_type::deleted) {
    erase(m, *ev.object);
    auto& d = self->state.deleting;
    d.erase(std::remove(d.begin(), d.end(), ev.object->metadata.uid), d.end());
  } else {
    upsert(m, ev.object);
  }
  request_reconcile(self);
}

caf::behavior job_behavior(job_actor* self, std::shared_ptr<const job_actor_config> cfg,
                           std::shared_ptr<const k8s::custom_object> job, job_view view) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.job = std::move(job);
  for (auto& p : view.pods)
    upsert(st.pods, std::move(p));
  for (auto& s : view.services)
    upsert(st.services, std::move(s));
  st.mpi_config = std::move(view.mpi_config);
  request_reconcile(self);
  return {
      [self](object_event<k8s::custom_object>& ev) { on_job(self, ev); },
      [self](object_event<k8s::pod>& ev) { on_owned(self, self->state.pods, ev); },
      [self](object_event<k8s::service>& ev) { on_owned(self, self->state.services, ev); },
      [self](config_map_event& ev) {
        if (ev.name != self->state.job->metadata.name + "-config")
          return;
        self->state.mpi_config = std::move(ev.data);
        request_reconcile(self);
      },
      [self](reconcile_atom) { run_pass(self); },
      [self](atoms::retry_atom) { request_reconcile(self); },
      [self](wake_atom, std::uint32_t gen) {
        if (gen != self->state.wake_generation)
          return;
        self->state.wake_at.reset();
        request_reconcile(self);
      },
      [self](action_done& msg) { on_done(self, msg); },
  };
}

} // namespace

caf::actor spawn_training_job(caf::actor_system& sys, caf::event_based_actor* parent,
                              std::shared_ptr<const job_actor_config> cfg,
                              std::shared_ptr<const k8s::custom_object> job, job_view view) {
  if (parent)
    return parent->spawn<caf::linked>(job_behavior, std::move(cfg), std::move(job), std::move(view));
  return sys.spawn(job_behavior, std::move(cfg), std::move(job), std::move(view));
}

} // namespace kozmo::training
