// Resource pools: tokens that bound how many tasks use a shared, limited thing at once (a
// license server, an external cluster, a share of the GPUs). The peer's resource manager, as a
// pure book that one actor owns, so that a pool is never over quota: every allocation and
// release is decided here, one at a time. Pure: no CAF, no I/O, no clock (callers pass `since`).
//
// Rules:
//  1. A token is held by one task (its uid). Allocating a token already held is granted again
//     (idempotent); releasing a token not held does nothing.
//  2. A pool grants while it holds fewer than `quota` tokens and, when the pool sets them,
//     fewer than `per_namespace` tokens of the task's namespace and fewer than `per_project`
//     of its project. Otherwise the request waits.
//  3. Waiting requests are served first-come first-served (by `since`, then by arrival), on
//     every release and every pool change; a request blocked only by its own namespace or
//     project limit does not hold up the others behind it.
//  4. A request for a pool that does not exist waits too, with an answer that says so, and is
//     served when the pool appears.
//  5. Tokens restored after a restart (`restore`) are held whatever the quota says: they were
//     granted before, and the pool's status shows them. A quota lowered below what is held
//     grants nothing until enough are released; nothing is revoked.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kozmo::tasks {

struct pool_limits {
  int quota = 1;
  std::optional<int> per_namespace;
  std::optional<int> per_project;
};

struct pool_request {
  std::string token;   // the task's uid
  std::string ns;
  std::string project;
  std::string task;    // "ns/name", for messages and the pool's status
  std::int64_t since_ms = 0; // when the task first asked
};

enum class allocation { granted, exhausted, no_pool };

struct allocation_answer {
  allocation what = allocation::granted;
  std::string message; // for the task's status when it waits
};

struct pool_usage {
  int quota = 0;
  int in_use = 0;
  int waiting = 0;
  bool exists = false;
};

class pool_book {
public:
  // Creates or updates a pool. Returns the requests granted because of it (rule 3/4).
  std::vector<pool_request> set_pool(const std::string& pool, pool_limits limits);
  // The pool is gone: its holders keep their tokens until they release them; new requests wait.
  void remove_pool(const std::string& pool);

  allocation_answer allocate(const std::string& pool, const pool_request& request);
  // Releases `token` (held or waiting). Returns the requests granted because of it.
  std::vector<pool_request> release(const std::string& pool, const std::string& token);
  // A token held before a restart (rule 5).
  void restore(const std::string& pool, const pool_request& request);

  pool_usage usage(const std::string& pool) const;
  bool holds(const std::string& pool, const std::string& token) const;
  // Pools that exist or have holders or waiters.
  std::vector<std::string> pools() const;
  // The tasks holding tokens, "ns/name", sorted (the pool's status).
  std::vector<std::string> holders(const std::string& pool) const;

private:
  struct pool_state {
    std::optional<pool_limits> limits; // nullopt: the pool object does not exist
    std::map<std::string, pool_request> held; // by token
    std::vector<pool_request> waiting;        // in serving order
    std::uint64_t arrivals = 0;
  };
  bool fits(const pool_state& p, const pool_request& r) const;
  std::string why_not(const std::string& pool, const pool_state& p, const pool_request& r) const;
  std::vector<pool_request> serve(pool_state& p);

  std::map<std::string, pool_state> pools_;
};

} // namespace kozmo::tasks
