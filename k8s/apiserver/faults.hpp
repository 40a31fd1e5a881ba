// Fault injection for tests, switchable at runtime: what a flaky network or an overloaded
// kube-apiserver does to clients (dropped watches, 410 on resume, 429 with Retry-After, 500s,
// slow responses). Thread-safe; the server consults it on every request and watch event.
#pragma once

#include "k8s/apiserver/http_types.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace kozmo::apiserver {

class fault_injector {
public:
  // Closes every open watch stream now, without a final event (as a dropped connection).
  void drop_watches_now();
  // Every watch stream (open or new) is closed after it has sent `events` more events; 0 = off.
  void drop_watches_after(std::size_t events);
  // Watches resuming from a resourceVersion get 200 + one ERROR event (410 Expired), then close.
  void expire_watch_resumes(bool on);
  // The next `count` requests whose target (path, then query as sent) starts with
  // `path_prefix` ("" = any) are answered with `status` instead of being served: 429
  // TooManyRequests (with Retry-After: retry_after_seconds) or 500 InternalError (or any other
  // code). A prefix with a query picks one LIST among others of the same path.
  void fail_next(std::size_t count, int status, std::string path_prefix = {}, int retry_after_seconds = 1);
  // Injected answers not given yet.
  std::size_t failures_left() const;
  // Every response (and the start of every watch) is delayed by this much.
  void set_latency(std::chrono::milliseconds latency);
  // Back to normal service.
  void clear();

  // ---- used by the server ----
  // The injected answer for a request to `target` (path and query), if one is due (consumes it).
  std::optional<http_response> take_failure(std::string_view target);
  std::chrono::milliseconds latency() const;
  // (threshold, generation): the generation changes whenever drop_watches_after is called, so
  // a stream restarts its count.
  std::pair<std::size_t, std::uint64_t> drop_after() const;
  bool expire_resumes() const;
  // The server's hook for drop_watches_now().
  void set_drop_hook(std::function<void()> hook);

private:
  mutable std::mutex mu_;
  std::size_t fail_count_ = 0;
  int fail_status_ = 0;
  int retry_after_ = 1;
  std::string fail_prefix_;
  std::chrono::milliseconds latency_{0};
  std::size_t drop_after_ = 0;
  std::uint64_t drop_generation_ = 0;
  bool expire_resumes_ = false;
  std::function<void()> drop_hook_;
};

} // namespace kozmo::apiserver
