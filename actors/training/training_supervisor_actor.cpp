#include "actors/training/training_supervisor_actor.hpp"

#include "actors/training/pod_builder.hpp"
#include "actors/watch/watch_actor.hpp"
#include "k8s/model/codec.hpp"
#include "messages/atoms.hpp"
#include "messages/watch_messages.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <unordered_map>

namespace kozmo::training {
namespace {

using watch::event_type;

// Where an object may belong: "uid:<controller uid>" and "name:<ns>/<job-name label>".
std::vector<std::string> route_keys(const k8s::object_meta& m) {
  std::vector<std::string> out;
  if (const auto* ref = m.controller_ref())
    out.push_back("uid:" + ref->uid);
  if (auto it = m.labels.find(label::job_name); it != m.labels.end())
    out.push_back("name:" + m.namespace_ + "/" + it->second);
  return out;
}

// The supervisor's view of the objects jobs may own: shared pointers from the watch caches,
// indexed by route key, so a job actor spawned late (or after a restart) gets what exists.
template <class T>
struct routed_cache {
  std::unordered_map<std::string, std::shared_ptr<const T>> items; // "ns/name"
  std::unordered_map<std::string, std::vector<std::string>> by_route;

  static std::string key(const T& o) { return o.metadata.namespace_ + "/" + o.metadata.name; }

  void remove(const std::string& k) {
    auto it = items.find(k);
    if (it == items.end())
      return;
    for (const auto& r : route_keys(it->second->metadata)) {
      auto& v = by_route[r];
      v.erase(std::remove(v.begin(), v.end(), k), v.end());
      if (v.empty())
        by_route.erase(r);
    }
    items.erase(it);
  }
  void apply(event_type type, const std::shared_ptr<const T>& obj) {
    auto k = key(*obj);
    remove(k);
    if (type == event_type::deleted)
      return;
    auto routes = route_keys(obj->metadata);
    if (routes.empty())
      return; // nothing of a training job
    for (const auto& r : routes)
      by_route[r].push_back(k);
    items.emplace(k, obj);
  }
  std::vector<std::shared_ptr<const T>> select(const std::vector<std::string>& routes) const {
    std::vector<std::shared_ptr<const T>> out;
    for (const auto& r : routes) {
      auto it = by_route.find(r);
      if (it == by_route.end())
        continue;
      for (const auto& k : it->second) {
        auto obj = items.at(k);
        if (std::find(out.begin(), out.end(), obj) == out.end())
          out.push_back(std::move(obj));
      }
    }
    return out;
  }
};

struct job_entry {
  caf::actor actor;
  std::shared_ptr<const k8s::custom_object> job;
};

struct job_watch {
  caf::actor actor;
  std::string kind;
  std::string api_version;
};

struct supervisor_state {
  static inline const char* name = "training_supervisor";

  std::shared_ptr<const job_actor_config> job_cfg;
  std::string ns;
  std::unordered_map<std::string, job_entry> jobs;                       // by uid
  std::unordered_map<std::string, std::vector<std::string>> uids_by_name; // "ns/name" → uids
  std::unordered_map<caf::actor_addr, std::string> children;             // job actor → uid
  routed_cache<k8s::pod> pods;
  routed_cache<k8s::service> services;
  routed_cache<k8s::custom_object> config_maps;
  std::vector<job_watch> job_watches;
  caf::actor config_maps_watch;
  int unsynced = 3; // pods, services, config maps
};

using supervisor = caf::stateful_actor<supervisor_state>;

std::vector<std::string> job_routes(const k8s::custom_object& job) {
  return {"uid:" + job.metadata.uid, "name:" + job.metadata.namespace_ + "/" + job.metadata.name};
}

// The uids of the known jobs an object may belong to.
std::vector<std::string> targets(supervisor* self, const k8s::object_meta& m) {
  auto& st = self->state;
  std::vector<std::string> out;
  for (const auto& r : route_keys(m)) {
    if (r.rfind("uid:", 0) == 0) {
      auto uid = r.substr(4);
      if (st.jobs.count(uid) && std::find(out.begin(), out.end(), uid) == out.end())
        out.push_back(uid);
    } else if (auto it = st.uids_by_name.find(r.substr(5)); it != st.uids_by_name.end()) {
      for (const auto& uid : it->second)
        if (std::find(out.begin(), out.end(), uid) == out.end())
          out.push_back(uid);
    }
  }
  return out;
}

void spawn_job(supervisor* self, job_entry& entry) {
  auto& st = self->state;
  auto routes = job_routes(*entry.job);
  job_view view;
  view.pods = st.pods.select(routes);
  view.services = st.services.select(routes);
  for (const auto& cm : st.config_maps.select(routes))
    if (cm->metadata.name == entry.job->metadata.name + "-config")
      view.mpi_config = config_data(cm->document);
  entry.actor = spawn_training_job(self->system(), self, st.job_cfg, entry.job, std::move(view));
  st.children.emplace(entry.actor.address(), entry.job->metadata.uid);
  spdlog::debug("training: watching {} {}/{} (uid {})", entry.job->kind, entry.job->metadata.namespace_,
                entry.job->metadata.name, entry.job->metadata.uid);
}

void stop_job(supervisor* self, const std::string& uid) {
  auto& st = self->state;
  auto it = st.jobs.find(uid);
  if (it == st.jobs.end())
    return;
  const auto& job = *it->second.job;
  auto name = job.metadata.namespace_ + "/" + job.metadata.name;
  auto& uids = st.uids_by_name[name];
  uids.erase(std::remove(uids.begin(), uids.end(), uid), uids.end());
  if (uids.empty())
    st.uids_by_name.erase(name);
  if (it->second.actor)
    self->send_exit(it->second.actor, caf::exit_reason::user_shutdown);
  spdlog::debug("training: {} {} deleted", job.kind, name);
  st.jobs.erase(it);
}

void on_job(supervisor* self, const job_watch& w, object_event<k8s::custom_object>& ev) {
  auto& st = self->state;
  auto obj = ev.object;
  if (!obj || (!st.ns.empty() && obj->metadata.namespace_ != st.ns))
    return;
  if (obj->kind.empty() || obj->api_version.empty()) {
    // LIST items may come without kind and apiVersion: the core needs them.
    auto copy = std::make_shared<k8s::custom_object>(*obj);
    copy->kind = w.kind;
    copy->api_version = w.api_version;
    obj = std::move(copy);
  }
  const auto& uid = obj->metadata.uid;
  if (ev.type == event_type::deleted) {
    stop_job(self, uid);
    return;
  }
  auto it = st.jobs.find(uid);
  if (it == st.jobs.end()) {
    it = st.jobs.emplace(uid, job_entry{nullptr, obj}).first;
    st.uids_by_name[obj->metadata.namespace_ + "/" + obj->metadata.name].push_back(uid);
    if (st.unsynced == 0)
      spawn_job(self, it->second);
    return;
  }
  it->second.job = obj;
  if (it->second.actor)
    self->send(it->second.actor, object_event<k8s::custom_object>{ev.type, obj, nullptr});
  else if (st.unsynced == 0)
    spawn_job(self, it->second);
}

// Sends the event to every job the object belongs to now, and a DELETED to the jobs it
// belonged to before and no longer does.
template <class T, class Send>
void route(supervisor* self, const object_event<T>& ev, Send send) {
  auto& st = self->state;
  if (st.unsynced > 0)
    return; // job actors are spawned with the cache's content
  auto now = targets(self, ev.object->metadata);
  for (const auto& uid : now)
    if (auto& e = st.jobs[uid]; e.actor)
      send(e.actor, ev.type, ev.object);
  if (!ev.previous)
    return;
  for (const auto& uid : targets(self, ev.previous->metadata))
    if (std::find(now.begin(), now.end(), uid) == now.end())
      if (auto& e = st.jobs[uid]; e.actor)
        send(e.actor, event_type::deleted, ev.object);
}

template <class T>
void on_owned(supervisor* self, routed_cache<T>& cache, object_event<T>& ev) {
  if (!ev.object || (!self->state.ns.empty() && ev.object->metadata.namespace_ != self->state.ns))
    return;
  cache.apply(ev.type, ev.object);
  route(self, ev, [self](const caf::actor& a, event_type type, const std::shared_ptr<const T>& obj) {
    self->send(a, object_event<T>{type, obj, nullptr});
  });
}

void on_config_map(supervisor* self, object_event<k8s::custom_object>& ev) {
  if (!ev.object || (!self->state.ns.empty() && ev.object->metadata.namespace_ != self->state.ns))
    return;
  self->state.config_maps.apply(ev.type, ev.object);
  route(self, ev, [self](const caf::actor& a, event_type type, const std::shared_ptr<const k8s::custom_object>& obj) {
    config_map_event msg{obj->metadata.name, nullptr};
    if (type != event_type::deleted)
      msg.data = config_data(obj->document);
    self->send(a, std::move(msg));
  });
}

void synced_one(supervisor* self) {
  auto& st = self->state;
  if (--st.unsynced > 0)
    return;
  spdlog::debug("training: pods, services and config maps listed; starting {} job actor(s)", st.jobs.size());
  for (auto& [_, entry] : st.jobs)
    if (!entry.actor)
      spawn_job(self, entry);
}

template <class T>
caf::actor start_watch(supervisor* self, client::resource_ref ref, std::string label_selector = {}) {
  watch::watch_config wc;
  wc.resource = std::move(ref);
  wc.label_selector = std::move(label_selector);
  auto w = watch::spawn_watch<T>(self->system(), self->state.job_cfg->cli, wc);
  self->link_to(w);
  self->send(w, atoms::subscribe_atom::value, watch::index_kind::all, std::string(), caf::actor_cast<caf::actor>(self));
  return w;
}

void await_sync(supervisor* self, const caf::actor& w) {
  self->request(w, caf::infinite, atoms::synced_atom::value).then([self](caf::ok_atom) { synced_one(self); });
}

caf::behavior supervisor_behavior(supervisor* self, caf::actor pods_watch, supervisor_config cfg) {
  auto& st = self->state;
  st.job_cfg = std::make_shared<const job_actor_config>(std::move(cfg.job));
  st.ns = cfg.ns;
  self->set_exit_handler([self](caf::exit_msg& msg) {
    auto& s = self->state;
    if (auto it = s.children.find(msg.source); it != s.children.end()) {
      auto uid = it->second;
      s.children.erase(it);
      if (auto j = s.jobs.find(uid); j != s.jobs.end() && j->second.actor.address() == msg.source) {
        // Crashed while its job exists: the job's next event spawns a fresh one.
        spdlog::error("training: the actor of {} {} ended: {}", j->second.job->kind, j->second.job->metadata.name,
                      to_string(msg.reason));
        j->second.actor = nullptr;
      }
      return;
    }
    self->quit(msg.reason);
  });
  // Job kinds, as the CRDs in deploy/crds serve them.
  const std::pair<const char*, const char*> kinds[] = {
      {"PyTorchJob", "kubeflow.org/v1"}, {"TFJob", "kubeflow.org/v1"}, {"MPIJob", "kubeflow.org/v1"},
      {"Caffe2Job", "kubeflow.org/v1alpha1"}};
  for (const auto& [kind, api_version] : kinds) {
    auto r = resource_of_kind(kind);
    auto w = start_watch<k8s::custom_object>(self, {r.group, r.version, r.resource, st.ns, "", ""});
    st.job_watches.push_back({w, kind, api_version});
  }
  auto services = start_watch<k8s::service>(self, {"", "v1", "services", st.ns, "", ""});
  st.config_maps_watch =
      start_watch<k8s::custom_object>(self, {"", "v1", "configmaps", st.ns, "", ""}, label::job_name);
  self->send(pods_watch, atoms::subscribe_atom::value, watch::index_kind::all, std::string(),
             caf::actor_cast<caf::actor>(self));
  await_sync(self, pods_watch);
  await_sync(self, services);
  await_sync(self, st.config_maps_watch);
  return {
      [self](object_event<k8s::custom_object>& ev) {
        auto sender = caf::actor_cast<caf::actor_addr>(self->current_sender());
        if (sender == self->state.config_maps_watch.address())
          return on_config_map(self, ev);
        for (const auto& w : self->state.job_watches)
          if (sender == w.actor.address())
            return on_job(self, w, ev);
      },
      [self](object_event<k8s::pod>& ev) { on_owned(self, self->state.pods, ev); },
      [self](object_event<k8s::service>& ev) { on_owned(self, self->state.services, ev); },
      [self](atoms::stats_atom) -> std::uint64_t {
        std::uint64_t n = 0;
        for (const auto& [_, e] : self->state.jobs)
          n += e.actor ? 1 : 0;
        return n;
      },
  };
}

} // namespace

caf::actor spawn_training_supervisor(caf::actor_system& sys, caf::actor pods_watch, supervisor_config cfg) {
  return sys.spawn(supervisor_behavior, std::move(pods_watch), std::move(cfg));
}

} // namespace kozmo::training
