// The object store of the embedded API server: every object of every served resource, a
// cluster-wide resourceVersion, the watch history, and the object lifecycle rules that do not
// depend on the request (metadata, finalizers, graceful pod deletion, garbage collection,
// namespace termination, CRD registration).
//
// Rules the store keeps (the numbers mirror kube-apiserver + etcd + the garbage collector):
//  1. Every write bumps one cluster-wide resourceVersion (a decimal string) and is recorded in a
//     bounded watch history; a watch can resume from any resourceVersion still in the history.
//  2. An update carrying a non-empty metadata.resourceVersion that is not the stored one fails
//     with 409 Conflict. Updates that change nothing are not written (no new resourceVersion).
//  3. Deleting an object with finalizers (or a bound pod with a grace period, or a namespace)
//     only marks it (deletionTimestamp); it goes away when its finalizers are gone and its grace
//     period is zero.
//  4. Garbage collection runs synchronously inside the write that triggers it, so a client sees
//     the owner's deletion and its dependents' deletions in one consistent order.
//  5. Watch callbacks run with the store's lock held, in commit order: they must only queue
//     the event (e.g. post it to a connection's strand) and never call back into the store.
//  6. Events expire `event_ttl` after their last write, as kube-apiserver's --event-ttl (1 h by
//     default): they are deleted (watchers see DELETED) by the first write after that moment.
//     Without it a long-running server kept every Event ever posted (~4 KiB each in memory: a
//     thousand training jobs left 24,000 behind).
//
// Objects are immutable once stored (shared_ptr<const json::value>): a list or a watch event
// shares them with the store without copying. Stored objects carry no kind/apiVersion; the
// HTTP layer stamps them on the way out.
//
// Thread-safety: every public member function may be called from any thread.
#pragma once

#include "k8s/apiserver/resource_types.hpp"
#include "k8s/error.hpp"
#include "k8s/json/value.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kozmo::apiserver {

using object_ptr = std::shared_ptr<const json::value>;

// `bookmark` is only ever delivered to a watcher that asked for the end-of-initial-events mark.
enum class event_type { added, modified, deleted, bookmark };

// One committed change, as watchers and the watch history see it.
struct change_event {
  event_type type = event_type::added;
  std::uint64_t rv = 0;
  std::string resource;  // resource key, "group/plural"
  std::string ns;        // "" for cluster-scoped objects
  object_ptr object;     // the state after the change (the final state for a deletion)
  object_ptr previous;   // the state before the change (null for an addition)
};

using object_predicate = std::function<bool(const json::value&)>;

// Which changes a watcher wants. An object moving into the selection is reported as ADDED and
// one moving out as DELETED, as the kube-apiserver watch cache does.
struct watch_filter {
  std::string resource;      // resource key
  std::string ns;            // "" = every namespace
  object_predicate matches;  // label/field selectors; empty = everything
};

using watch_callback = std::function<void(const change_event&)>;

struct list_page {
  std::vector<object_ptr> items;
  std::uint64_t rv = 0;          // the store's resourceVersion when the page was read
  std::string next_key;          // storage key the next page starts at; "" on the last page
  std::int64_t remaining = 0;    // matching objects after this page
};

struct delete_options {
  std::optional<std::int64_t> grace_period_seconds;
  std::string propagation;       // "Orphan", "Background", "Foreground"; "" = Background
  std::string precondition_uid;  // non-empty: must equal metadata.uid
  std::string precondition_rv;   // non-empty: must equal metadata.resourceVersion
};

struct delete_outcome {
  object_ptr object;  // the object as deletion left it (its final state when removed)
  bool removed = false;
};

// Computes the new state of an object from its current one (patches, status updates, PUT).
using mutate_fn = std::function<expected<json::value>(const json::value& current)>;

class store {
public:
  struct options {
    std::string data_dir;              // "" = memory only
    std::size_t watch_history = 10000; // events kept for resuming watches
    std::chrono::seconds event_ttl{3600}; // Events live this long after their last write; 0 = for ever
  };

  // Opens the store, loading `data_dir` if it holds a previous state. Creates the namespaces
  // default, kube-system, kube-public and kube-node-lease when missing.
  static expected<std::unique_ptr<store>> open(options opts);
  ~store();
  store(const store&) = delete;
  store& operator=(const store&) = delete;

  // ---- served resources -------------------------------------------------------------------
  resource_ptr resolve(std::string_view group, std::string_view version, std::string_view plural) const;
  resource_ptr resolve_kind(std::string_view group, std::string_view kind) const;
  std::vector<resource_ptr> resources() const;
  std::vector<std::pair<std::string, std::vector<std::string>>> groups() const;
  // Bumped whenever the set of served resources changes (a CRD added or removed).
  std::uint64_t resources_generation() const;

  // ---- reads ------------------------------------------------------------------------------
  std::uint64_t current_rv() const;
  // Watches may resume from any resourceVersion >= this one; older ones get 410 Expired.
  std::uint64_t compacted_rv() const;

  expected<object_ptr> get(const resource_type& rt, const std::string& ns, const std::string& name) const;
  // Objects in storage-key order ("ns/name", or "name" when cluster-scoped), starting at
  // `start_key` (inclusive); `limit` 0 = all.
  list_page list(const resource_type& rt, const std::string& ns, const object_predicate& filter,
                 std::size_t limit = 0, const std::string& start_key = {}) const;

  // ---- writes -----------------------------------------------------------------------------
  // Stores a new object: namespace must exist and not be terminating; name or generateName;
  // uid, creationTimestamp, generation and resourceVersion are set here.
  // `dry_run`: every check is made and the would-be object returned, but nothing is stored
  // (the same holds for update()).
  expected<object_ptr> create(const resource_type& rt, const std::string& ns, json::value obj, bool dry_run = false);
  // Replaces an object with what `fn` computes from the current one. Identity metadata (uid,
  // creationTimestamp, deletion marks) is kept from the stored object.
  expected<object_ptr> update(const resource_type& rt, const std::string& ns, const std::string& name,
                              const mutate_fn& fn, bool dry_run = false);
  expected<delete_outcome> remove(const resource_type& rt, const std::string& ns, const std::string& name,
                                  const delete_options& opts);

  // ---- watch ------------------------------------------------------------------------------
  using watch_id = std::uint64_t;
  // Registers a watcher. `from_rv` empty: first an ADDED event per matching object, then live
  // events. Otherwise every change after `from_rv` (replayed from history, then live); 410 when
  // `from_rv` is older than the history. A future `from_rv` waits for the store to reach it.
  // `mark_initial_events_end`: after the initial ADDED events, a `bookmark` event at the
  // current resourceVersion (sendInitialEvents=true streaming lists).
  expected<watch_id> watch(watch_filter filter, std::optional<std::uint64_t> from_rv, watch_callback cb,
                           bool mark_initial_events_end = false);
  void unwatch(watch_id id);

private:
  struct impl;
  explicit store(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

// Helpers shared by the store and the HTTP handlers.
std::string now_rfc3339();
std::string format_rfc3339(std::int64_t unix_seconds);
// Seconds since the epoch for "2006-01-02T15:04:05Z" (fractional seconds and offsets
// accepted); nullopt if unparsable.
std::optional<std::int64_t> parse_rfc3339(std::string_view s);
std::int64_t unix_now();

} // namespace kozmo::apiserver
