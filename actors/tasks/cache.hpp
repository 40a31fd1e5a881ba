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
#pragma once

#include "actors/tasks/phase.hpp"
#include "actors/tasks/task_spec.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace kozmo::tasks {

// SHA-256 of `text`, as 64 lower-case hex digits.
std::string sha256_hex(const std::string& text);

// The text the key is made from (for messages and tests): one line per part.
std::string cache_signature(const task_spec& spec);

// The cache key of a task whose inputs have these content digests (input name → digest).
std::string cache_key(const task_spec& spec, const std::map<std::string, std::string>& input_digests);

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

// The owner id of a task's attempt: one per (task uid, attempt).
std::string reservation_owner(const std::string& task_uid, int attempt);

} // namespace kozmo::tasks
