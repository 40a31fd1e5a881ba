#include "actors/volumes/volume_binder_actor.hpp"

#include "actors/controller/executor_actor.hpp"
#include "actors/controller/object_view.hpp"
#include "actors/controller/watch_into.hpp"
#include "actors/volumes/claim_binding.hpp"
#include "k8s/model/codec.hpp"
#include "messages/watch_messages.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <system_error>

namespace kozmo::volumes {
namespace {

using object_ptr = std::shared_ptr<const k8s::custom_object>;
using controller::plan;
using controller::plan_outcome;
using pass_atom = caf::atom_constant<caf::atom("vbpass")>;

// A claim is provisioned for only this long after the binder first found no volume for it: a
// volume made by hand just before it (one kubectl apply, volume first) may reach the binder's
// other watch a moment later, and should win, as it does under kube-controller-manager, whose
// provisioners are slower still.
constexpr auto provision_grace = std::chrono::milliseconds(500);

const client::resource_ref claims_ref{"", "v1", "persistentvolumeclaims", "", "", ""};
const client::resource_ref volumes_ref{"", "v1", "persistentvolumes", "", "", ""};
const client::resource_ref classes_ref{"storage.k8s.io", "v1", "storageclasses", "", "", ""};
const k8s::event_source source{"persistentvolume-controller", ""};

struct binder_state {
  static inline const char* name = "volume_binder";
  caf::actor executor;
  std::map<std::string, object_ptr> claims;  // by namespace/name
  std::map<std::string, object_ptr> volumes; // by name
  std::map<std::string, object_ptr> classes; // StorageClasses, by name
  std::string volumes_dir;                   // where provisioned volumes' directories go
  std::map<std::string, std::string> told;   // claim key → the wait it was told about
  // claim key → when this binder first saw it wanting a provisioned volume (see provision_grace)
  std::map<std::string, std::chrono::steady_clock::time_point> wants_volume;
  int plans_out = 0;
  bool queued = false;
};

using binder_actor = caf::stateful_actor<binder_state>;

std::string claim_key(const k8s::object_meta& m) { return m.namespace_ + "/" + m.name; }

// The three kinds share one event handler: a StorageClass is the cluster-scoped one with a
// top-level provisioner.
bool is_class(const k8s::custom_object& o) {
  return o.kind == "StorageClass" || (o.metadata.namespace_.empty() && o.document.find("provisioner"));
}

std::map<std::string, object_ptr>& collection_of(binder_state& st, const k8s::custom_object& o) {
  if (is_class(o))
    return st.classes;
  return o.metadata.namespace_.empty() ? st.volumes : st.claims;
}

void request_pass(binder_actor* self) {
  if (self->state.queued)
    return;
  self->state.queued = true;
  self->send(self, pass_atom::value);
}

// A newer copy of an object, from a watch event or a write's answer. A write's answer may be no
// claim, volume or class at all (a DELETE's Status, an Event): kept, it became a nameless
// "volume" whose status patch failed, and the pass after the failure tried again, without end.
void take(binder_actor* self, object_ptr o) {
  auto& st = self->state;
  if (o->metadata.name.empty() || (!o->kind.empty() && o->kind != "PersistentVolumeClaim" &&
                                   o->kind != "PersistentVolume" && o->kind != "StorageClass"))
    return;
  auto& into = collection_of(st, *o);
  auto key = o->metadata.namespace_.empty() ? o->metadata.name : claim_key(o->metadata);
  auto it = into.find(key);
  if (it != into.end() && it->second->metadata.uid == o->metadata.uid &&
      controller::older_than(o->metadata.resource_version, it->second->metadata.resource_version))
    return;
  into[key] = std::move(o);
}

client::resource_ref ref_of(const client::resource_ref& collection, const std::string& ns, const std::string& name,
                            std::string sub = {}) {
  auto r = collection;
  r.ns = ns;
  r.name = name;
  r.subresource = std::move(sub);
  return r;
}

controller::patch_step patch(client::resource_ref ref, json::value body, const std::string& resource_version = {}) {
  if (!resource_version.empty())
    body["metadata"]["resourceVersion"] = resource_version;
  return controller::patch_step{std::move(ref), client::patch_type::merge, std::move(body)};
}

// The four writes that bind claim `c` to volume `v`, as the PV controller makes them: the
// volume's claimRef first (guarded by its resourceVersion, so two binders never take one
// volume), then its phase, then the claim's volumeName, then the claim's phase and capacity.
plan bind_plan(const k8s::custom_object& c, const k8s::custom_object& v) {
  plan p;
  json::value ref = json::object{{"kind", "PersistentVolumeClaim"},
                                 {"namespace", c.metadata.namespace_},
                                 {"name", c.metadata.name},
                                 {"uid", c.metadata.uid},
                                 {"apiVersion", "v1"},
                                 {"resourceVersion", c.metadata.resource_version}};
  json::value vpatch = json::object{};
  vpatch["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] = "yes";
  vpatch["spec"]["claimRef"] = std::move(ref);
  p.steps.push_back(patch(ref_of(volumes_ref, "", v.metadata.name), std::move(vpatch), v.metadata.resource_version));
  json::value vstatus = json::object{};
  vstatus["status"]["phase"] = "Bound";
  auto vs = patch(ref_of(volumes_ref, "", v.metadata.name, "status"), std::move(vstatus));
  vs.chain_resource_version = true;
  p.steps.push_back(std::move(vs));

  json::value cpatch = json::object{};
  cpatch["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] = "yes";
  cpatch["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] = "yes";
  cpatch["spec"]["volumeName"] = v.metadata.name;
  p.steps.push_back(patch(ref_of(claims_ref, c.metadata.namespace_, c.metadata.name), std::move(cpatch),
                          c.metadata.resource_version));
  json::value cstatus = json::object{};
  json::value& s = cstatus["status"];
  s["phase"] = "Bound";
  const json::value* modes = v.document.at_path({"spec", "accessModes"});
  s["accessModes"] = modes ? *modes : json::value(json::array{});
  const json::value* cap = v.document.at_path({"spec", "capacity"});
  s["capacity"] = cap ? *cap : json::value(json::object{});
  auto cs = patch(ref_of(claims_ref, c.metadata.namespace_, c.metadata.name, "status"), std::move(cstatus));
  cs.chain_resource_version = true;
  p.steps.push_back(std::move(cs));
  return p;
}

k8s::object_reference about(const k8s::custom_object& o, const char* kind) {
  return {kind, o.metadata.namespace_, o.metadata.name, o.metadata.uid, "v1", o.metadata.resource_version, ""};
}

void send_plan(binder_actor* self, plan p) {
  if (p.steps.empty())
    return;
  ++self->state.plans_out;
  self->request(self->state.executor, caf::infinite, controller::run_plan{std::move(p)})
      .then([self](plan_outcome& out) {
        auto& st = self->state;
        --st.plans_out;
        for (auto& a : out.answers)
          if (a)
            if (auto o = k8s::custom_object_from(std::move(*a)))
              take(self, std::make_shared<const k8s::custom_object>(std::move(*o)));
        if (out.what == plan_outcome::result::failed) {
          spdlog::debug("volumes: {} (the next event decides again)", out.failure);
          if (out.reread)
            if (auto o = k8s::custom_object_from(std::move(*out.reread)))
              take(self, std::make_shared<const k8s::custom_object>(std::move(*o)));
        }
        if (st.plans_out == 0)
          request_pass(self);
      });
}

void run_pass(binder_actor* self) {
  auto& st = self->state;
  st.queued = false;
  if (st.plans_out > 0)
    return; // the last outcome asks for another pass
  std::vector<claim> claims;
  std::vector<volume> volumes;
  provisioning prov;
  prov.volumes_dir = st.volumes_dir;
  for (const auto& [_, c] : st.claims)
    claims.push_back(claim_from(c->document));
  for (const auto& [_, v] : st.volumes)
    volumes.push_back(volume_from(v->document));
  for (const auto& [_, sc] : st.classes)
    prov.classes.push_back(class_from(sc->document));
  auto r = plan_pass(claims, volumes, prov);

  const auto now = std::chrono::steady_clock::now();
  bool wait_more = false;
  for (auto& made : r.provisions) {
    auto [seen, fresh] = st.wants_volume.try_emplace(made.claim_key, now);
    if (now - seen->second < provision_grace) {
      wait_more = true;
      continue;
    }
    // The directory first: a volume is never there before its directory (0777 like the
    // local-path provisioner's: the pods' processes may run as another user).
    std::error_code ec;
    std::filesystem::create_directories(made.directory, ec);
    if (!ec)
      std::filesystem::permissions(made.directory, std::filesystem::perms::all, ec);
    const auto& c = *st.claims.at(made.claim_key);
    plan p;
    if (ec) {
      p.steps.push_back(controller::event_step{{about(c, "PersistentVolumeClaim"), source, "Warning",
                                                "ProvisioningFailed",
                                                "cannot create " + made.directory + ": " + ec.message()}});
      send_plan(self, std::move(p));
      continue;
    }
    spdlog::info("volumes: provisioning pv={} claim={} dir={}", made.volume, made.claim_key, made.directory);
    p.steps.push_back(controller::create_step{volumes_ref, std::move(made.object)});
    p.steps.push_back(controller::event_step{{about(c, "PersistentVolumeClaim"), source, "Normal",
                                              "ProvisioningSucceeded",
                                              "Successfully provisioned volume " + made.volume + " using " +
                                                  local_path_provisioner}});
    send_plan(self, std::move(p));
  }

  for (const auto& b : r.binds) {
    const auto& c = *st.claims.at(b.claim_key);
    const auto& v = *st.volumes.at(b.volume);
    auto p = bind_plan(c, v);
    p.steps.push_back(controller::event_step{{about(c, "PersistentVolumeClaim"), source, "Normal", "Bound",
                                              "bound to volume " + v.metadata.name}});
    st.told.erase(b.claim_key);
    st.wants_volume.erase(b.claim_key);
    send_plan(self, std::move(p));
  }
  if (wait_more)
    self->delayed_send(self, provision_grace, pass_atom::value);
  plan phases;
  for (const auto& ch : r.volume_phases) {
    json::value body = json::object{};
    body["status"]["phase"] = ch.phase;
    if (!ch.message.empty())
      body["status"]["message"] = ch.message;
    phases.steps.push_back(patch(ref_of(volumes_ref, "", ch.key, "status"), std::move(body)));
  }
  for (const auto& ch : r.claim_phases) {
    const auto& c = *st.claims.at(ch.key);
    json::value body = json::object{};
    body["status"]["phase"] = ch.phase;
    phases.steps.push_back(patch(ref_of(claims_ref, c.metadata.namespace_, c.metadata.name, "status"), std::move(body)));
    phases.steps.push_back(controller::event_step{{about(c, "PersistentVolumeClaim"), source, "Warning", "ClaimLost",
                                                   ch.message}});
  }
  for (const auto& name : r.delete_volumes)
    phases.steps.push_back(controller::delete_step{ref_of(volumes_ref, "", name), st.volumes.at(name)->metadata.uid, ""});
  for (const auto& w : r.waits) {
    auto& told = st.told[w.claim_key];
    if (told == w.message)
      continue; // said once; a change in what it waits for is said again
    told = w.message;
    const auto& c = *st.claims.at(w.claim_key);
    phases.steps.push_back(controller::event_step{{about(c, "PersistentVolumeClaim"), source,
                                                   w.reason == "FailedBinding" ? "Normal" : "Warning", w.reason,
                                                   w.message}});
  }
  send_plan(self, std::move(phases));
}

void on_event(binder_actor* self, const object_event<k8s::custom_object>& ev) {
  if (!ev.object)
    return;
  auto& st = self->state;
  const auto& m = ev.object->metadata;
  if (ev.type == watch::event_type::deleted) {
    if (is_class(*ev.object)) {
      st.classes.erase(m.name);
    } else if (m.namespace_.empty()) {
      st.volumes.erase(m.name);
      // A provisioned volume's directory goes with it (its reclaim policy said Delete, or a
      // user deleted it).
      if (auto dir = directory_of_deleted(volume_from(ev.object->document), st.volumes_dir)) {
        std::error_code ec;
        std::filesystem::remove_all(*dir, ec);
        spdlog::info("volumes: removed pv={} dir={}{}", m.name, *dir, ec ? " error=" + ec.message() : "");
      }
    } else {
      st.claims.erase(claim_key(m));
      st.told.erase(claim_key(m));
      st.wants_volume.erase(claim_key(m));
    }
  } else {
    take(self, ev.object);
  }
  request_pass(self);
}

caf::behavior binder(binder_actor* self, std::shared_ptr<client::client> cli, caf::actor recorder,
                     std::string volumes_dir) {
  auto& st = self->state;
  st.volumes_dir = std::move(volumes_dir);
  st.executor = controller::spawn_executor(self->system(), cli, recorder);
  self->link_to(st.executor);
  for (const auto& ref : {claims_ref, volumes_ref, classes_ref}) {
    watch::watch_config wc;
    wc.resource = ref;
    controller::watch_into<k8s::custom_object>(self, cli, wc);
  }
  return {
      [self](object_event<k8s::custom_object>& ev) { on_event(self, ev); },
      [self](pass_atom) { run_pass(self); },
  };
}

} // namespace

caf::actor spawn_volume_binder(caf::actor_system& sys, std::shared_ptr<client::client> cli, caf::actor recorder,
                               std::string volumes_dir) {
  return sys.spawn(binder, std::move(cli), std::move(recorder), std::move(volumes_dir));
}

} // namespace kozmo::volumes
