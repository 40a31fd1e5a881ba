// Deletion and what follows it: finalizers, graceful pod deletion, the garbage collector
// (background, foreground, orphan) and namespace termination. Kubernetes runs the last two as
// controllers; here they run synchronously inside the write that triggers them (store.hpp,
// rule 4), which keeps them deterministic for tests.
#include "k8s/apiserver/store_impl.hpp"
#include "k8s/apiserver/json_util.hpp"

#include <algorithm>
#include <cstdlib>

namespace kozmo::apiserver {
namespace {

constexpr std::string_view foreground_finalizer = "foregroundDeletion";

bool is_pod(const resource_type& rt) { return rt.builtin && rt.kind == "Pod"; }
bool is_namespace(const resource_type& rt) { return rt.builtin && rt.kind == "Namespace"; }
bool is_crd(const resource_type& rt) { return rt.builtin && rt.kind == "CustomResourceDefinition"; }

std::size_t finalizer_count(const json::value& obj) {
  const auto* m = meta_of(obj);
  const auto* f = m ? m->find("finalizers") : nullptr;
  return f && f->is_array() ? f->as_array().size() : 0;
}

void remove_finalizer(json::value& obj, std::string_view name) {
  auto* f = obj.at_path({"metadata", "finalizers"});
  if (!f || !f->is_array())
    return;
  auto& arr = f->as_array();
  arr.erase(std::remove_if(arr.begin(), arr.end(),
                           [&](const json::value& v) { return v.is_string() && v.as_string() == name; }),
            arr.end());
  if (arr.empty())
    member_object(obj, "metadata").as_object().erase("finalizers");
}

// Grace period of a pod deletion, as the pod registry decides it: the request's, else the
// pod's terminationGracePeriodSeconds, else 30; zero for pods never scheduled or already done.
std::int64_t pod_grace(const json::value& pod, const delete_options& opts) {
  const json::value* spec = pod.find("spec");
  std::int64_t grace = spec ? spec->get_int("terminationGracePeriodSeconds", 30) : 30;
  if (opts.grace_period_seconds)
    grace = *opts.grace_period_seconds;
  if (grace < 0)
    grace = 1;
  if (!spec || spec->get_string("nodeName").empty())
    return 0;
  const json::value* st = pod.find("status");
  std::string phase = st ? st->get_string("phase") : std::string();
  if (phase == "Succeeded" || phase == "Failed")
    return 0;
  return grace;
}

} // namespace

expected<delete_outcome> store::remove(const resource_type& rt, const std::string& ns, const std::string& name,
                                       const delete_options& opts) {
  std::lock_guard lock(impl_->mu);
  auto out = impl_->delete_locked(rt, impl::storage_key(rt, ns, name), opts);
  impl_->settle();
  return out;
}

expected<delete_outcome> store::impl::delete_locked(const resource_type& rt, const std::string& key,
                                                    const delete_options& opts) {
  auto cur = find(rt.key(), key);
  if (!cur) {
    std::string name = key.substr(key.find('/') == std::string::npos ? 0 : key.find('/') + 1);
    return error::not_found(rt.plural + (rt.group.empty() ? "" : "." + rt.group) + " \"" + name + "\" not found");
  }
  const json::value& meta = *meta_of(*cur);
  std::string uid = meta.get_string("uid");
  if (!opts.precondition_uid.empty() && opts.precondition_uid != uid)
    return error::conflict("Precondition failed: UID in precondition: " + opts.precondition_uid +
                           ", UID in object meta: " + uid);
  if (!opts.precondition_rv.empty() && opts.precondition_rv != meta.get_string("resourceVersion"))
    return error::conflict("Precondition failed: ResourceVersion in precondition: " + opts.precondition_rv +
                           ", ResourceVersion in object meta: " + meta.get_string("resourceVersion"));

  if (opts.propagation == "Orphan")
    orphan_dependents(uid);

  json::value next = *cur;
  json::object& m = member_object(next, "metadata").as_object();
  bool changed = false;
  if (opts.propagation == "Foreground" && !has_finalizer(*cur, foreground_finalizer)) {
    json::value& f = m["finalizers"];
    if (!f.is_array())
      f = json::array{};
    f.as_array().push_back(std::string(foreground_finalizer));
    changed = true;
  }
  if (has_finalizer(next, foreground_finalizer))
    foreground_owners.insert(uid);

  if (is_namespace(rt)) {
    // Namespaces always terminate through their contents first (the namespace controller).
    if (!m.find("deletionTimestamp")) {
      m.set("deletionTimestamp", now_rfc3339());
      m.set("deletionGracePeriodSeconds", 0);
      member_object(next, "status").as_object().set("phase", "Terminating");
      changed = true;
    }
    terminating_namespaces.insert(uid);
    if (!changed)
      return delete_outcome{cur, false};
    return delete_outcome{commit_put(rt, key, std::move(next), cur), false};
  }

  std::int64_t grace = is_pod(rt) ? pod_grace(*cur, opts) : 0;
  if (m.find("deletionTimestamp")) {
    // Already going away: a shorter grace period may be requested (kubectl --grace-period=0).
    const auto* g = m.find("deletionGracePeriodSeconds");
    std::int64_t old_grace = g && g->is_int() ? g->as_int() : 0;
    if (is_pod(rt) && grace < old_grace) {
      m.set("deletionGracePeriodSeconds", grace);
      m.set("deletionTimestamp", format_rfc3339(unix_now() + grace));
      old_grace = grace;
      changed = true;
    }
    if (!changed)
      return delete_outcome{cur, false};
    if (finalizer_count(next) == 0 && old_grace == 0)
      return delete_outcome{remove_now(rt, key, std::move(next), cur), true};
    return delete_outcome{commit_put(rt, key, std::move(next), cur), false};
  }

  if (finalizer_count(next) == 0 && grace == 0) {
    if (is_pod(rt)) {
      m.set("deletionTimestamp", now_rfc3339());
      m.set("deletionGracePeriodSeconds", 0);
    }
    return delete_outcome{remove_now(rt, key, std::move(next), cur), true};
  }
  m.set("deletionTimestamp", format_rfc3339(unix_now() + grace));
  m.set("deletionGracePeriodSeconds", grace);
  return delete_outcome{commit_put(rt, key, std::move(next), cur), false};
}

object_ptr store::impl::remove_now(const resource_type& rt, const std::string& key, json::value final_state,
                                   const object_ptr& cur) {
  if (is_crd(rt)) {
    // The CRD's instances go with it (kube-apiextensions' customresourcecleanup finalizer).
    if (auto crt = registry.remove_crd(meta_string(*cur, "name"))) {
      drop_custom_resources(*crt);
      ++resources_gen;
    }
  }
  return commit_delete(rt, key, std::move(final_state), cur);
}

void store::impl::for_each_dependent(
    const std::string& owner_uid,
    const std::function<void(const std::string&, const resource_type&, const std::string&, const object_ptr&)>& fn) {
  auto it = dependents.find(owner_uid);
  if (it == dependents.end())
    return;
  std::set<std::string> deps = it->second;
  for (const auto& dep_uid : deps) {
    auto ref_it = by_uid.find(dep_uid);
    if (ref_it == by_uid.end())
      continue;
    object_ref ref = ref_it->second;
    auto dep = find(ref.resource, ref.key);
    auto dep_type = type_of(ref.resource);
    if (dep && dep_type)
      fn(dep_uid, *dep_type, ref.key, dep);
  }
}

void store::impl::orphan_dependents(const std::string& owner_uid) {
  for_each_dependent(owner_uid, [&](const std::string&, const resource_type& type, const std::string& key,
                                    const object_ptr& dep) {
    json::value next = *dep;
    auto* refs = next.at_path({"metadata", "ownerReferences"});
    if (!refs || !refs->is_array())
      return;
    auto& arr = refs->as_array();
    arr.erase(std::remove_if(arr.begin(), arr.end(),
                             [&](const json::value& r) { return r.get_string("uid") == owner_uid; }),
              arr.end());
    if (arr.empty())
      member_object(next, "metadata").as_object().erase("ownerReferences");
    commit_put(type, key, std::move(next), dep);
  });
}

void store::impl::drop_custom_resources(const resource_type& crd_type) {
  auto r = data.find(crd_type.key());
  if (r == data.end())
    return;
  auto objects = r->second;  // copy: commit_delete erases from the map
  for (const auto& [key, obj] : objects)
    commit_delete(crd_type, key, *obj, obj);
  data.erase(crd_type.key());
}

void store::impl::note_event_write(const resource_type& rt, const std::string& key) {
  if (rt.plural != "events" || opts.event_ttl.count() <= 0)
    return;
  event_expiry.push_back({std::chrono::steady_clock::now() + opts.event_ttl, rt.key(), key, rv});
}

void store::impl::expire_events() {
  const auto now = std::chrono::steady_clock::now();
  while (!event_expiry.empty() && event_expiry.front().at <= now) {
    expiry e = std::move(event_expiry.front());
    event_expiry.pop_front();
    auto obj = find(e.resource, e.key);
    // Written again since (a newer entry stands for it), or already gone.
    if (!obj || meta_string(*obj, "resourceVersion") != std::to_string(e.rv))
      continue;
    if (auto rt = type_of(e.resource))
      remove_now(*rt, e.key, *obj, obj);
  }
}

void store::impl::settle() {
  expire_events();
  // Each pass performs the garbage collector's and namespace controller's pending work; a
  // pass that changes nothing ends the loop. Every action either deletes or marks an object
  // that was not marked before, so the loop terminates.
  for (int pass = 0; pass < 10000; ++pass) {
    bool progress = false;

    // Background: dependents whose every owner is gone are deleted.
    while (!removed_uids.empty()) {
      std::string gone = removed_uids.back();
      removed_uids.pop_back();
      for_each_dependent(gone, [&](const std::string&, const resource_type& type, const std::string& key,
                                   const object_ptr& dep) {
        if (meta_of(*dep)->find("deletionTimestamp"))
          return;
        auto owners = owner_uids(*dep);
        bool orphaned = std::all_of(owners.begin(), owners.end(), [&](const std::string& o) { return !by_uid.count(o); });
        if (!orphaned)
          return;
        (void)delete_locked(type, key, delete_options{});
        progress = true;
      });
    }

    // Foreground: an owner waits for its blocking dependents, deleting them first.
    for (auto it = foreground_owners.begin(); it != foreground_owners.end();) {
      std::string owner_uid = *it;
      auto owner = find_uid(owner_uid);
      if (!owner || !has_finalizer(*owner, foreground_finalizer)) {
        it = foreground_owners.erase(it);
        continue;
      }
      bool blocked = false;
      for_each_dependent(owner_uid, [&](const std::string& dep_uid, const resource_type& type,
                                        const std::string& key, const object_ptr& dep) {
        if (!meta_of(*dep)->find("deletionTimestamp")) {
          delete_options o;
          // Grandchildren go first too when the dependent has dependents of its own.
          o.propagation = dependents.count(dep_uid) ? "Foreground" : "Background";
          (void)delete_locked(type, key, o);
          progress = true;
        }
        auto still = find_uid(dep_uid);
        if (!still)
          return;
        if (const auto* refs = still->at_path({"metadata", "ownerReferences"}); refs && refs->is_array())
          for (const auto& r : refs->as_array())
            if (r.get_string("uid") == owner_uid && r.get_bool("blockOwnerDeletion"))
              blocked = true;
      });
      if (blocked) {
        ++it;
        continue;
      }
      it = foreground_owners.erase(it);
      object_ref ref = by_uid.at(owner_uid);  // present: find_uid found the owner above
      auto owner_type = type_of(ref.resource);
      json::value next = *owner;
      remove_finalizer(next, foreground_finalizer);
      (void)update_locked(*owner_type, ref.key, std::move(next), owner);
      progress = true;
    }

    // Namespace termination: delete the contents, then the namespace once it is empty.
    for (auto it = terminating_namespaces.begin(); it != terminating_namespaces.end();) {
      auto ns_obj = find_uid(*it);
      if (!ns_obj) {
        it = terminating_namespaces.erase(it);
        continue;
      }
      std::string ns = meta_string(*ns_obj, "name");
      std::string prefix = ns + "/";
      bool empty = true;
      for (auto& [resource, objects] : data) {
        auto type = type_of(resource);
        if (!type || !type->namespaced)
          continue;
        std::vector<std::pair<std::string, object_ptr>> inside;
        for (auto o = objects.lower_bound(prefix); o != objects.end() && o->first.compare(0, prefix.size(), prefix) == 0; ++o)
          inside.emplace_back(o->first, o->second);
        for (const auto& [key, obj] : inside) {
          if (!meta_of(*obj)->find("deletionTimestamp")) {
            (void)delete_locked(*type, key, delete_options{});
            progress = true;
          }
          if (find(resource, key))
            empty = false;
        }
      }
      if (!empty || finalizer_count(*ns_obj) > 0) {
        ++it;
        continue;
      }
      it = terminating_namespaces.erase(it);
      json::value final_state = *ns_obj;
      if (auto* spec = final_state.find("spec"); spec && spec->is_object())
        spec->as_object().erase("finalizers");
      auto ns_type = registry.find_by_key("/namespaces");
      commit_delete(*ns_type, ns, std::move(final_state), ns_obj);
      progress = true;
    }

    if (!progress && removed_uids.empty())
      return;
  }
}

void store::impl::rebuild_after_load() {
  for (const auto& [resource, objects] : data)
    for (const auto& [key, obj] : objects) {
      if (auto rt = type_of(resource); rt && rt->plural == "events" && opts.event_ttl.count() > 0) {
        // A reloaded Event gets a full TTL from now (how long it lived before is not kept).
        auto v = meta_string(*obj, "resourceVersion");
        event_expiry.push_back({std::chrono::steady_clock::now() + opts.event_ttl, resource, key,
                                static_cast<std::uint64_t>(std::strtoull(v.c_str(), nullptr, 10))});
      }
      const auto* m = meta_of(*obj);
      if (!m || !m->find("deletionTimestamp"))
        continue;
      if (has_finalizer(*obj, foreground_finalizer))
        foreground_owners.insert(m->get_string("uid"));
      if (resource == "/namespaces")
        terminating_namespaces.insert(m->get_string("uid"));
    }
}

} // namespace kozmo::apiserver
