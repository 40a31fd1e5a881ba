// Helpers the in-process benches share: an in-process `kozmo local`, waiting for a condition,
// the allocator's heap, and creating many objects at once through the client.
#pragma once

#include "k8s/client/client.hpp"
#include "runtime/engine_internal.hpp"

#include <malloc.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

namespace kozmo::bench {

// An in-process `kozmo local`: the embedded server, the first-fit binder, `nodes` simulated nodes
// of 8 GPUs that take 1,000 pods each, a client allowed 50,000 requests/s, Events that never
// expire; with `tasks`, the task controller.
inline engine_options local_cluster(int nodes, bool tasks) {
  engine_options o;
  o.api.embedded = true;
  o.parts.nodes = kozmo::uniform_nodes(nodes, 8, "node");
  for (auto& n : o.parts.nodes)
    n.pods = "1000";
  o.parts.binder = true;
  o.parts.tasks = tasks;
  o.performance.client_qps = 50000;
  o.api.event_ttl_seconds = 0;
  return o;
}

// A client of its own on `e`'s API server, as a user's (kubectl, a workflow engine) is: what it
// sends does not wait in the controllers' connection pool, where a burst of creates in the
// normal lane would go before every write of the task controller (client::background_view).
// It authenticates as the controllers' client does (the embedded server is TLS with a token).
inline std::shared_ptr<client::client> user_client(const engine& e) {
  client::config cfg = engine_internal::api(e)->cfg();
  cfg.qps = 50000;
  cfg.burst = 100000;
  return std::make_shared<client::client>(cfg);
}

// Polls `done` every 20 ms for up to `limit`; the seconds it took, or -1.
template <class Done>
double seconds_until(Done done, std::chrono::seconds limit) {
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < start + limit) {
    if (done())
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

// The allocator's bytes in use, in MiB (malloc_trim first, so that freed memory is not counted).
inline double heap_mib() {
  malloc_trim(0);
  return static_cast<double>(mallinfo2().uordblks) / 1048576.0;
}

// Sends every create at once (the client pipelines them) and waits for every answer; returns
// how many failed.
inline std::size_t create_all(client::client& cli, const client::resource_ref& where,
                              const std::vector<json::value>& bodies) {
  std::mutex mu;
  std::condition_variable cv;
  std::size_t answered = 0, failed = 0;
  for (const auto& b : bodies)
    cli.create(where, b, [&](expected<json::value> r) {
      std::lock_guard lock(mu);
      ++answered;
      failed += r ? 0 : 1;
      cv.notify_all();
    });
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return answered == bodies.size(); });
  return failed;
}

} // namespace kozmo::bench
