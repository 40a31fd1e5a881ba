#include "actors/controller/supervisor_actor.hpp"

#include "actors/controller/event_recorder_actor.hpp"
#include "actors/controller/executor_actor.hpp"
#include "actors/controller/owned_index.hpp"
#include "actors/controller/primary.hpp"
#include "actors/controller/watch_into.hpp"
#include "messages/atoms.hpp"
#include "messages/watch_messages.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <map>
#include <unordered_map>

namespace kozmo::controller {
namespace {

using watch::event_type;

struct child_entry {
  caf::actor actor;
  std::shared_ptr<const k8s::custom_object> primary;
};

struct primary_watch {
  caf::actor actor;
  std::string kind;
  std::string api_version;
};

struct owned_watch {
  caf::actor actor;
  std::string resource;
  owned_index<k8s::custom_object> index;
};

// The objects of one referenced kind by namespace ("" for a cluster-scoped kind), then by name:
// a child's view is one namespace's map (rule 2), in name order.
struct referenced_watch {
  caf::actor actor;
  referenced_kind kind;
  std::unordered_map<std::string, std::map<std::string, std::shared_ptr<const k8s::custom_object>>> by_ns;

  bool visible_to(const std::string& object_ns, const k8s::custom_object& primary) const {
    return kind.cluster_scoped || object_ns == primary.metadata.namespace_;
  }
};

struct supervisor_state {
  static inline const char* name = "supervisor";

  supervisor_config cfg;
  child_tools tools;
  std::unordered_map<std::string, child_entry> children;                  // by primary uid
  std::unordered_map<std::string, std::vector<std::string>> uids_by_name; // "ns/name" → uids
  std::unordered_map<caf::actor_addr, std::string> actors;                // child actor → uid
  owned_index<k8s::pod> pods;
  owned_index<k8s::service> services;
  std::vector<primary_watch> primary_watches;
  std::vector<owned_watch> owned_watches;
  std::vector<referenced_watch> referenced_watches;
  listed_gate owned_listed; // children are spawned once it opens
};

using supervisor = caf::stateful_actor<supervisor_state>;

// The uids of the known primaries an object may belong to.
std::vector<std::string> targets(supervisor* self, const k8s::object_meta& m) {
  auto& st = self->state;
  std::vector<std::string> out;
  auto add = [&](const std::string& uid) {
    if (std::find(out.begin(), out.end(), uid) == out.end())
      out.push_back(uid);
  };
  for (const auto& r : route_keys(m, st.cfg.route_label)) {
    if (r.rfind("uid:", 0) == 0) {
      if (auto uid = r.substr(4); st.children.count(uid))
        add(uid);
    } else if (auto it = st.uids_by_name.find(r.substr(5)); it != st.uids_by_name.end()) {
      for (const auto& uid : it->second)
        add(uid);
    }
  }
  return out;
}

void spawn_child(supervisor* self, child_entry& entry) {
  auto& st = self->state;
  auto routes = primary_routes(entry.primary->metadata);
  owned_view view;
  view.pods = st.pods.select(routes);
  view.services = st.services.select(routes);
  for (const auto& w : st.owned_watches)
    for (auto& obj : w.index.select(routes))
      view.others.push_back({w.resource, event_type::added, std::move(obj)});
  for (const auto& w : st.referenced_watches) {
    auto ns = w.kind.cluster_scoped ? std::string() : entry.primary->metadata.namespace_;
    if (auto it = w.by_ns.find(ns); it != w.by_ns.end())
      for (const auto& [_, obj] : it->second)
        view.others.push_back({w.kind.ref.resource, event_type::added, obj});
  }
  entry.actor = st.cfg.spawn_child(self, st.tools, entry.primary, std::move(view));
  st.actors.emplace(entry.actor.address(), entry.primary->metadata.uid);
  spdlog::debug("{}: watching {} {}/{} (uid {})", st.cfg.name, entry.primary->kind, entry.primary->metadata.namespace_,
                entry.primary->metadata.name, entry.primary->metadata.uid);
}

void stop_child(supervisor* self, const std::string& uid) {
  auto& st = self->state;
  auto it = st.children.find(uid);
  if (it == st.children.end())
    return;
  const auto& primary = *it->second.primary;
  auto name = primary.metadata.namespace_ + "/" + primary.metadata.name;
  auto& uids = st.uids_by_name[name];
  uids.erase(std::remove(uids.begin(), uids.end(), uid), uids.end());
  if (uids.empty())
    st.uids_by_name.erase(name);
  if (it->second.actor)
    self->send_exit(it->second.actor, caf::exit_reason::user_shutdown);
  spdlog::debug("{}: {} {} deleted", st.cfg.name, primary.kind, name);
  st.children.erase(it);
}

bool in_scope(supervisor* self, const k8s::object_meta& m) {
  return self->state.cfg.ns.empty() || m.namespace_ == self->state.cfg.ns;
}

void on_primary(supervisor* self, const primary_watch& w, object_event<k8s::custom_object>& ev) {
  auto& st = self->state;
  auto obj = ev.object;
  if (!obj || !in_scope(self, obj->metadata))
    return;
  obj = with_kind(std::move(obj), w.kind, w.api_version); // the children's cores need them
  const auto& uid = obj->metadata.uid;
  if (ev.type == event_type::deleted)
    return stop_child(self, uid);
  auto it = st.children.find(uid);
  if (it == st.children.end()) {
    it = st.children.emplace(uid, child_entry{nullptr, obj}).first;
    st.uids_by_name[obj->metadata.namespace_ + "/" + obj->metadata.name].push_back(uid);
    if (st.owned_listed.listed())
      spawn_child(self, it->second);
    return;
  }
  it->second.primary = obj;
  if (it->second.actor)
    self->send(it->second.actor, object_event<k8s::custom_object>{ev.type, obj, nullptr});
  else if (st.owned_listed.listed())
    spawn_child(self, it->second);
}

// Sends the event to every primary the object belongs to now, and a DELETED to the ones it
// belonged to before and no longer does.
template <class T, class Send>
void route(supervisor* self, const std::shared_ptr<const T>& object, const std::shared_ptr<const T>& previous,
           event_type type, Send send) {
  auto& st = self->state;
  if (!st.owned_listed.listed())
    return; // children are spawned with the index's content
  auto now = targets(self, object->metadata);
  for (const auto& uid : now)
    if (auto& e = st.children[uid]; e.actor)
      send(e.actor, type);
  if (!previous)
    return;
  for (const auto& uid : targets(self, previous->metadata))
    if (std::find(now.begin(), now.end(), uid) == now.end())
      if (auto& e = st.children[uid]; e.actor)
        send(e.actor, event_type::deleted);
}

template <class T>
void on_owned(supervisor* self, owned_index<T>& index, object_event<T>& ev) {
  if (!ev.object || !in_scope(self, ev.object->metadata))
    return;
  index.apply(ev.type, ev.object);
  route(self, ev.object, ev.previous, ev.type, [self, &ev](const caf::actor& a, event_type type) {
    self->send(a, object_event<T>{type, ev.object, nullptr});
  });
}

void on_other(supervisor* self, owned_watch& w, object_event<k8s::custom_object>& ev) {
  if (!ev.object || !in_scope(self, ev.object->metadata))
    return;
  w.index.apply(ev.type, ev.object);
  route(self, ev.object, ev.previous, ev.type, [self, &w, &ev](const caf::actor& a, event_type type) {
    self->send(a, owned_event{w.resource, type, ev.object});
  });
}

// Rules 2 and 3: the index keeps what a child spawned later sees; a change goes to each running
// child that can see it, once the children may run.
void on_referenced(supervisor* self, referenced_watch& w, object_event<k8s::custom_object>& ev) {
  auto& st = self->state;
  if (!ev.object)
    return;
  auto obj = with_kind(ev.object, w.kind.kind, w.kind.api_version);
  auto ns = w.kind.cluster_scoped ? std::string() : obj->metadata.namespace_;
  auto& objects = w.by_ns[ns];
  if (ev.type == event_type::deleted)
    objects.erase(obj->metadata.name);
  else
    objects[obj->metadata.name] = obj;
  if (objects.empty())
    w.by_ns.erase(ns);
  if (!st.owned_listed.listed())
    return; // no child runs yet; each is spawned with the index's content
  for (const auto& [_, entry] : st.children)
    if (entry.actor && w.visible_to(ns, *entry.primary))
      self->send(entry.actor, owned_event{w.kind.ref.resource, ev.type, obj});
}

void spawn_waiting_children(supervisor* self) {
  auto& st = self->state;
  spdlog::debug("{}: owned objects listed; starting {} child actor(s)", st.cfg.name, st.children.size());
  for (auto& [_, entry] : st.children)
    if (!entry.actor)
      spawn_child(self, entry);
}

// A watch of the configured namespace; with `until_listed`, children wait until it is listed.
template <class T>
caf::actor start_watch(supervisor* self, client::resource_ref ref, std::string label_selector = {},
                       bool until_listed = true) {
  watch::watch_config wc;
  wc.resource = std::move(ref);
  wc.resource.ns = self->state.cfg.ns;
  wc.label_selector = std::move(label_selector);
  return watch_into<T>(self, self->state.cfg.cli, wc, until_listed ? &self->state.owned_listed : nullptr);
}

// A child that ended while its primary exists is spawned again at the primary's next event;
// any other exit (a watch, the executor, shutdown) ends the supervisor.
void on_exit(supervisor* self, caf::exit_msg& msg) {
  auto& st = self->state;
  auto it = st.actors.find(msg.source);
  if (it == st.actors.end())
    return self->quit(msg.reason);
  auto uid = it->second;
  st.actors.erase(it);
  if (auto c = st.children.find(uid); c != st.children.end() && c->second.actor.address() == msg.source) {
    spdlog::error("{}: the actor of {} {} ended: {}", st.cfg.name, c->second.primary->kind,
                  c->second.primary->metadata.name, to_string(msg.reason));
    c->second.actor = nullptr;
  }
}

caf::behavior supervisor_behavior(supervisor* self, supervisor_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.pods.route_label = st.services.route_label = st.cfg.route_label;
  self->set_exit_handler([self](caf::exit_msg& msg) { on_exit(self, msg); });
  if (!st.cfg.recorder) {
    st.cfg.recorder = spawn_event_recorder(self->system(), st.cfg.cli);
    self->link_to(st.cfg.recorder);
  }
  st.tools = {spawn_executor(self->system(), st.cfg.cli, st.cfg.recorder), st.cfg.recorder, st.cfg.time};
  self->link_to(st.tools.executor);
  st.owned_listed.on_open = [self] { spawn_waiting_children(self); };
  for (const auto& p : st.cfg.primaries)
    st.primary_watches.push_back({start_watch<k8s::custom_object>(self, p.ref, {}, false), p.kind, p.api_version});
  if (st.cfg.pods_watch)
    subscribe_to(self, st.cfg.pods_watch, &st.owned_listed);
  if (st.cfg.services)
    start_watch<k8s::service>(self, {"", "v1", "services", "", "", ""});
  for (const auto& o : st.cfg.owned) {
    owned_watch w{start_watch<k8s::custom_object>(self, o.ref, o.label_selector), o.ref.resource, {}};
    w.index.route_label = st.cfg.route_label;
    st.owned_watches.push_back(std::move(w));
  }
  for (const auto& r : st.cfg.referenced) {
    watch::watch_config wc;
    wc.resource = r.ref;
    wc.resource.ns = r.cluster_scoped ? std::string() : st.cfg.ns; // rule 1
    auto actor = watch_into<k8s::custom_object>(self, st.cfg.cli, std::move(wc), &st.owned_listed);
    st.referenced_watches.push_back({std::move(actor), r, {}});
  }
  return {
      [self](object_event<k8s::custom_object>& ev) {
        auto sender = caf::actor_cast<caf::actor_addr>(self->current_sender());
        for (auto& w : self->state.owned_watches)
          if (sender == w.actor.address())
            return on_other(self, w, ev);
        for (const auto& w : self->state.primary_watches)
          if (sender == w.actor.address())
            return on_primary(self, w, ev);
        for (auto& w : self->state.referenced_watches)
          if (sender == w.actor.address())
            return on_referenced(self, w, ev);
      },
      [self](object_event<k8s::pod>& ev) { on_owned(self, self->state.pods, ev); },
      [self](object_event<k8s::service>& ev) { on_owned(self, self->state.services, ev); },
      [self](atoms::stats_atom) -> std::uint64_t {
        std::uint64_t n = 0;
        for (const auto& [_, e] : self->state.children)
          n += e.actor ? 1 : 0;
        return n;
      },
  };
}

} // namespace

caf::actor spawn_supervisor(caf::actor_system& sys, supervisor_config cfg) {
  return sys.spawn(supervisor_behavior, std::move(cfg));
}

} // namespace kozmo::controller
