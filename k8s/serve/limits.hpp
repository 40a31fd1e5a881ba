// What every HTTP server of Kozmo's holds to — the embedded API server and the extender's
// server (kube-scheduler's verbs, inspect, /metrics, /healthz) — so that a flood of
// connections, a slow client or an exhausted file table never stops it from serving.
// No Beast here: a host or an options struct includes it freely.
//
// The defaults are kube-apiserver's (k8s.io/apiserver secure serving): a request head must
// arrive within 32 s of its first byte, a keep-alive connection may sit idle 90 s between
// requests, a head may hold 1 MiB; the body, like kube-apiserver's request timeout, gets 60 s.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace kozmo::serve {

struct limits {
  // Connections held at once; one more is accepted and closed at once (the backlog does not fill
  // up, the process keeps file descriptors for its own work). 0: connection_budget() decides.
  std::size_t max_connections = 0;
  // From the last response (or the accept) to the first byte of the next request.
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(90)};
  // From the first byte of a request to the end of its head: a slowloris cannot hold a slot.
  std::chrono::milliseconds header_timeout{std::chrono::seconds(32)};
  // From the end of the head to the end of the body.
  std::chrono::milliseconds body_timeout{std::chrono::seconds(60)};
  // To write one response (a watch or a followed log streams without this bound; it has its own).
  std::chrono::milliseconds write_timeout{std::chrono::seconds(60)};
  // The request line and headers together.
  std::size_t max_header_bytes = 1024 * 1024;
};

// The connections a server may hold when `requested` is 0: three quarters of the process's
// open-file soft limit (the rest is for its files, its own client connections and watches),
// at least 32 and at most 16384. A non-zero `requested` is returned as it is.
std::size_t connection_budget(std::size_t requested);

// Raises this process's soft open-file limit to its hard limit (kind and k3s ship with a high
// one; a shell's default soft limit of 1024 is what a flood exhausts first). Returns the soft
// limit in force afterwards.
std::uint64_t raise_open_file_limit();

} // namespace kozmo::serve
