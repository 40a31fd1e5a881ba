// Private to the store's translation units (store.cpp, store_lifecycle.cpp).
#pragma once

#include <functional>

#include "k8s/apiserver/store.hpp"
#include "k8s/apiserver/store_journal.hpp"

#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <unordered_map>

namespace kozmo::apiserver {

struct store::impl {
  struct object_ref {
    std::string resource;  // resource key
    std::string key;       // storage key
  };
  struct watcher {
    watch_filter filter;
    std::uint64_t min_rv = 0;  // events at or below this were already delivered (or predate it)
    watch_callback cb;
  };

  mutable std::mutex mu;
  options opts;
  resource_registry registry;
  std::uint64_t resources_gen = 1;
  std::uint64_t rv = 0;
  std::uint64_t compacted = 0;
  // resource key -> storage key -> object
  std::map<std::string, std::map<std::string, object_ptr>, std::less<>> data;
  std::unordered_map<std::string, object_ref> by_uid;
  // owner uid -> uids of the objects whose ownerReferences name it
  std::unordered_map<std::string, std::set<std::string>> dependents;
  std::deque<change_event> history;
  std::map<watch_id, watcher> watchers;
  watch_id next_watch = 1;
  std::unique_ptr<journal> log;
  std::mt19937_64 rng{std::random_device{}()};

  // Garbage-collection work found by commits, drained by settle().
  std::vector<std::string> removed_uids;   // objects gone since the last settle
  std::set<std::string> foreground_owners; // uids deleting in foreground
  std::set<std::string> terminating_namespaces;
  // Events by expiry, oldest first (rule 6); an entry whose rv is not the stored one is stale.
  struct expiry {
    std::chrono::steady_clock::time_point at;
    std::string resource;
    std::string key;
    std::uint64_t rv = 0;
  };
  std::deque<expiry> event_expiry;

  // ---- helpers (mu held) ----
  static std::string storage_key(const resource_type& rt, const std::string& ns, const std::string& name) {
    return rt.namespaced ? ns + "/" + name : name;
  }
  object_ptr find(const std::string& resource, const std::string& key) const;
  object_ptr find_uid(const std::string& uid) const;
  resource_ptr type_of(const std::string& resource) const { return registry.find_by_key(resource); }

  object_ptr commit_put(const resource_type& rt, const std::string& key, json::value obj, object_ptr prev);
  object_ptr commit_delete(const resource_type& rt, const std::string& key, json::value final_state,
                           object_ptr prev);
  void record(change_event ev);
  // Hands `ev` to `w` if it falls in its selection (ADDED/DELETED when it moves in or out).
  static void deliver(const watcher& w, const change_event& ev);
  void index(const json::value& obj, const object_ref& ref);
  void unindex(const json::value& obj);

  std::string random_suffix(std::size_t n);
  std::string new_uid();
  std::string allocate_cluster_ip();

  expected<object_ptr> create_locked(const resource_type& rt, const std::string& ns, json::value obj,
                                     bool dry_run = false);
  expected<object_ptr> update_locked(const resource_type& rt, const std::string& key, json::value next,
                                     const object_ptr& cur, bool dry_run = false);
  expected<ok_t> register_crd_checked(json::value& crd, bool dry_run);
  expected<delete_outcome> delete_locked(const resource_type& rt, const std::string& key,
                                         const delete_options& opts);
  // Deletes for good (unregistering a CRD's resource and dropping its instances).
  object_ptr remove_now(const resource_type& rt, const std::string& key, json::value final_state,
                        const object_ptr& cur);
  // Runs garbage collection and namespace termination until nothing more changes.
  void settle();
  // Deletes the Events whose time is up (rule 6).
  void expire_events();
  void note_event_write(const resource_type& rt, const std::string& key);
  void orphan_dependents(const std::string& owner_uid);
  // Calls fn(dependent uid, its type, its key, the object) for every stored dependent of
  // `owner_uid`, over a snapshot of the index (fn may delete or update dependents).
  void for_each_dependent(const std::string& owner_uid,
                          const std::function<void(const std::string&, const resource_type&, const std::string&,
                                                   const object_ptr&)>& fn);
  void drop_custom_resources(const resource_type& crd_type);
  expected<ok_t> register_crd(json::value& crd);
  void default_stored_objects(const resource_type& rt);
  void rebuild_after_load();
  void persist_put(const std::string& resource, const std::string& key, const json::value& obj);
  void persist_delete(const std::string& resource, const std::string& key);
};

// Small metadata accessors on stored objects.
inline const json::value* meta_of(const json::value& obj) { return obj.find("metadata"); }
inline std::string meta_string(const json::value& obj, std::string_view field) {
  const auto* m = meta_of(obj);
  return m ? m->get_string(field) : std::string();
}
bool has_finalizer(const json::value& obj, std::string_view name);
std::vector<std::string> owner_uids(const json::value& obj);

} // namespace kozmo::apiserver
