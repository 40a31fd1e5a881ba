// The output cache (the peer's catalog), its pure core: what a cached task is keyed by, and the
// rules of the reservation that lets one of several identical serializable tasks compute while
// the others wait. Pure: no I/O (the input digests are computed by the caller).
//
//   spec.cache {enabled, version, serializable}
//
// Key: SHA-256 over the task's signature (its type; for container and pod tasks every
// container's image, command and args, in order; for training tasks the job's spec; and
// spec.cache.version) and its inputs (name and content digest, sorted by name, so the order they
// were written in does not matter). A changed image, command, argument or version, or an input
// with other content, is another key; the task's name, labels, retries and resources are not
// part of it (they do not change what is computed).
//
// Reservations, with the peer's datacatalog rules: an owner (one per task attempt) asks for the
// key's reservation; it gets it when there is none or the one there has expired, and extends
// it when it is its own; another owner's live reservation is returned, and the asker waits
// (WaitingForCache). A reservation expires heartbeat × 3 after it was last taken or extended;
// the holder extends it every heartbeat. Release is by owner only.
//
// Storage: one TaskCacheEntry object (kozmo.io/v1alpha1) per key in the task's namespace, named
// after the key, written through the API server with its resourceVersion (a conflict re-reads),
// so the cache survives a controller restart and `kubectl get taskcacheentries` shows it:
//
//   spec: {key, signature, outputs: {location, task, taskUID, storedAt},
//          reservation: {owner, expiresAt}}
//
// The operations (lookup, reserve, store, release) are pure transformations of the stored
// entry (`apply_cache_op`); the cache store actor reads, applies and writes them.
#pragma once

#include "actors/tasks/phase.hpp"
#include "actors/tasks/sha256.hpp"
#include "actors/tasks/task_spec.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace kozmo::tasks {


// The text the key is made from (for messages and tests): one line per part.
std::string cache_signature(const task_spec& spec);

// The cache key of a task whose inputs have these content digests (input name → digest).
std::string cache_key(const task_spec& spec, const std::map<std::string, std::string>& input_digests);
// The same from the signature text (what the cache store receives).
std::string cache_key(const std::string& signature, const std::map<std::string, std::string>& input_digests);

struct cache_reservation {
  std::string owner;
  time_point expires_at;
  friend bool operator==(const cache_reservation&, const cache_reservation&) = default;
};

// The peer's multiplier: a reservation outlives its last heartbeat by this many heartbeats.
inline constexpr int reservation_grace_multiplier = 3;

struct reserve_answer {
  bool held = false;             // the asker holds the reservation now (acquired or extended)
  cache_reservation reservation; // the reservation as it stands after the ask
  bool changed = false;          // it must be written (acquired, taken over or extended)
};

// `owner` asks at `now` for the reservation whose current state is `current`.
reserve_answer reserve(const std::optional<cache_reservation>& current, const std::string& owner, time_point now,
                       std::chrono::milliseconds heartbeat);

// Whether `owner` may release `current` (only its own; an expired one of another is left to
// whoever takes it over).
bool may_release(const std::optional<cache_reservation>& current, const std::string& owner);

// The owner id of a task: one per task (its attempts share it, so a retry keeps the
// reservation instead of waiting behind its own earlier attempt).
std::string reservation_owner(const std::string& task_uid);

// --- stored entries -------------------------------------------------------------------------

inline constexpr const char* cache_entry_kind = "TaskCacheEntry";
inline constexpr const char* cache_entry_resource = "taskcacheentries";

struct cache_outputs {
  std::string location; // where the outputs are: the computing task's spec.outputPrefix ("" none)
  std::string task;     // "namespace/name" of the task that computed them
  std::string task_uid;
  time_point stored_at;
  friend bool operator==(const cache_outputs&, const cache_outputs&) = default;
};

struct cache_entry {
  std::string key;
  std::string signature;
  std::optional<cache_outputs> outputs;         // nullopt: nothing stored yet
  std::optional<cache_reservation> reservation; // nullopt: nobody computes it now
  friend bool operator==(const cache_entry&, const cache_entry&) = default;
};

// The object name of a key's entry.
std::string cache_entry_name(const std::string& key);
// The entry as an object (apiVersion, kind, metadata.name/namespace, spec) and back; `from`
// reads what the API server returned (an entry whose spec cannot be read is an empty one).
json::value cache_entry_to_json(const cache_entry& e, const std::string& ns);
cache_entry cache_entry_from_json(const json::value& object);

enum class cache_op {
  lookup,  // read only
  reserve, // take or extend the reservation, unless outputs are stored (then: read only)
  store,   // store the outputs (overwriting), and drop the asker's reservation
  release, // drop the asker's reservation (its task failed or was deleted)
};
std::string_view to_string(cache_op op);

struct cache_op_args {
  cache_op op = cache_op::lookup;
  std::string key;
  std::string signature;
  std::string owner;
  time_point now;
  std::chrono::milliseconds heartbeat{10000};
  bool overwrite = false; // reserve: stored outputs do not count (the task recomputes)
  cache_outputs outputs;  // store
};

struct cache_change {
  std::optional<cache_entry> entry; // the entry after the op (nullopt: there is none)
  bool write = false;               // it must be written (created when there was none)
  bool notify = false;              // tasks waiting on the key should look again
};

// What `args.op` makes of the stored entry `current`. Level-based: applying it twice changes
// nothing more (a second reserve by the holder only extends the expiry).
cache_change apply_cache_op(const std::optional<cache_entry>& current, const cache_op_args& args);

// Whether `owner` holds a live reservation in `entry` at `now`.
bool holds_reservation(const std::optional<cache_entry>& entry, const std::string& owner, time_point now);

} // namespace kozmo::tasks
