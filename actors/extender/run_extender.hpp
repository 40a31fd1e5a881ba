// `kozmo extender`: kube-scheduler's extender as a standalone process. Loads HiveD's
// configuration, connects to the API server, starts the pods and nodes watches, the extender
// actor (which owns the GPU scheduler core) and the HTTP server, and runs until SIGTERM/SIGINT.
#pragma once

#include "k8s/error.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace kozmo::extender {

struct extender_options {
  std::string config_path; // HiveD configuration YAML (required)
  // Kubeconfig; empty: the configuration's kubeConfigFilePath, else in-cluster when running in
  // a pod, else $KUBECONFIG / ~/.kube/config.
  std::string kubeconfig;
  // "host:port" (port 0: a free one); empty: the configuration's webServerAddress (":30096" means
  // every interface).
  std::string listen;
  // The client's rate limit (requests per second, and the burst above it) for everything the
  // extender writes: bindings first, then events. kube-scheduler waits `httpTimeout` (5 s in
  // deploy/scheduler) for a bind, and binds as fast as it schedules: with kube-scheduler's own
  // client limit (50/s) a burst of a few hundred pods left binds queued past that timeout.
  double qps = 200;
  int burst = 400;
  // Called once the server listens, with the bound port (tests read it; main may print it).
  std::function<void(unsigned short)> on_listening;
};

// "127.0.0.1:30096", ":30096", "0.0.0.0:0" -> (address, port); an empty host means 0.0.0.0.
expected<std::pair<std::string, unsigned short>> parse_listen(std::string_view text);

// Blocks until SIGTERM or SIGINT (both are blocked in the calling thread and in the threads it
// starts, then awaited). Returns the process exit code: 0 after a clean stop, 1 when start-up
// fails (the reason is logged).
int run_extender(const extender_options& opts);

} // namespace kozmo::extender
