// The cache store: the output cache's entries (TaskCacheEntry objects, cache.hpp) read and
// written through the API server for the task actors, one operation at a time per key.
//
//   task ──cache_request (request: lookup | reserve | store | release)──▶ cache store
//   cache store ──GET entry, apply_cache_op (pure), POST/PUT with resourceVersion──▶ API server
//   cache store ──cache_reply──▶ task           (a 409 reads again and re-applies)
//   cache store ──cache_changed──▶ tasks that wait on the key (outputs stored, reservation let go)
//   taskcacheentries watch ──object_event──▶ cache store   (entries with outputs: hits answered
//                                                           without a request)
//
// The first request of a task carries its signature and inputs instead of a key: the store
// digests the inputs (`digest`) and derives the key. Operations on one key run one after
// another, so two identical tasks asking at once see each other's write; a second controller
// (another process) is kept apart by the resourceVersion of every write.
#pragma once

#include "actors/tasks/machinery.hpp"
#include "messages/local_message.hpp"

#include <caf/fwd.hpp>

#include <functional>
#include <memory>
#include <string>

namespace kozmo::client {
class client;
}
namespace kozmo::controller {
class clock;
}

namespace kozmo::tasks {

struct cache_request {
  std::string ns;
  cache_ask ask;
  std::chrono::milliseconds heartbeat{10000};
};
struct cache_reply {
  cache_answer answer; // `at` is the store's clock when it answered
};
struct cache_changed {
  std::string ns;
  std::string key;
};
KOZMO_LOCAL_MESSAGE(cache_request)
KOZMO_LOCAL_MESSAGE(cache_reply)
KOZMO_LOCAL_MESSAGE(cache_changed)

// An input's content digest from its URI. Returns an error message when it cannot be read.
using input_digester = std::function<expected<std::string>(const std::string& uri)>;

// The digest of the URI itself (the peer keys blob inputs by their location too).
expected<std::string> digest_by_uri(const std::string& uri);

// Whether digest_by_content reads the input (a file:// URI) rather than its URI.
bool reads_content(const std::string& uri);

// The default: the content of a file:// input (a file: SHA-256 of its bytes; a directory: of
// its files' relative paths and digests, sorted), so new data under the same path is another
// key; a missing file is an error (the task then runs uncached, with a Warning). Other schemes:
// their URI.
expected<std::string> digest_by_content(const std::string& uri);

struct cache_store_config {
  std::shared_ptr<client::client> cli;
  std::shared_ptr<const controller::clock> time; // null: the real clock
  // Runs on a detached worker of the store (it may read large files), never on the store
  // itself, for a task with an input that reads_content(); the others are digested by URI at once.
  input_digester digest = digest_by_content;
  int max_conflicts = 10; // re-reads after 409 before an operation gives up
};

caf::actor spawn_cache_store(caf::actor_system& sys, cache_store_config cfg);

} // namespace kozmo::tasks
