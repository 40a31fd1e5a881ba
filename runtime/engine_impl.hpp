// The engine's state and the steps of its lifecycle (internal; not installed). The steps live
// in the files of their concern:
//   runtime/engine.cpp            the parts (watches, controllers, kubelets), start and stop
//   runtime/engine_api.cpp        where the Kubernetes API is: the embedded server or a kubeconfig
//   runtime/engine_http.cpp       the HTTP front: Kozmo's routes on the embedded server and the
//                                 metrics, probe and extender servers
//   runtime/engine_scheduler.cpp  the GPU scheduler (direct mode) or kube-scheduler's extender
//   runtime/engine_crds.cpp       Kozmo's CRDs on the embedded server
#pragma once

#include "runtime/engine_internal.hpp"

#include "actors/controller/leader_election.hpp"
#include "actors/tasks/platform_config.hpp"

#include "actors/extender/extender_server.hpp"
#include "k8s/apiserver/server.hpp"
#include "runtime/local_pki.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kozmo {

namespace client {
class client;
}

class local_backend; // runtime/engine_http.hpp

// Kozmo's CRDs (embedded at build time) applied to the embedded server, the training kinds'
// replicas capped as `opts` says (runtime/engine_crds.cpp).
status install_crds(apiserver::server& srv, const engine_options& opts);
// The built-in ClusterTrainingRuntimes (deploy/runtimes, embedded), each created only when none
// of its name exists (runtime/engine_crds.cpp). After install_crds.
status install_training_runtimes(apiserver::server& srv);
// The StorageClass `standard` (default, provisioner kozmo.io/local-path) unless one of that name
// exists (runtime/engine_crds.cpp). With the volume binder on the embedded server.
status install_default_storage_class(apiserver::server& srv);

struct engine::impl {
  engine_options opts;
  std::unique_ptr<apiserver::server> server;
  std::optional<runtime::local_credentials> credentials; // the embedded secure server's
  std::optional<std::pair<unsigned, unsigned>> process_identity; // the process runtime's uid, gid
  std::shared_ptr<client::client> cli;
  std::unique_ptr<caf::actor_system_config> cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::vector<caf::actor> actors;
  caf::actor scheduler;
  caf::actor pods_watch;
  caf::actor nodes_watch;
  caf::actor other_pods_watch; // the scheduler's view of other schedulers' pods (count_other_pods)
  caf::actor recorder; // every actor's Events go through it
  caf::actor elector;  // with leader election
  std::shared_ptr<local_backend> http;
  std::unique_ptr<extender::extender_server> metrics_server, probe_server, extender_server;
  bool started = false;
  // Leader election: the controllers start when the elector says so, on its thread.
  mutable std::mutex lead_mu;
  bool leading = false;
  std::string start_failure; // why the controllers could not start after winning the lease
  std::shared_ptr<std::atomic<bool>> scheduler_ready; // set while the direct-mode scheduler runs

  // The process runtime's work directory (engine_options::work_dir).
  std::string work_dir;
  bool remove_work_dir = false;
  tasks::platform_config task_platform; // parts.task_platform, parsed at start

  controller::election_timing election_timing() const {
    const auto& le = opts.leader_election;
    return {le.lease_duration, le.renew_deadline, le.retry_period};
  }

  // ---- the API (runtime/engine_api.cpp) ----
  // The process runtime's work directory: the one given, data_dir, or a fresh one removed at stop.
  status make_work_dir();
  // The embedded server started (or the kubeconfig or URL read) and the shared client made.
  status connect();

  // ---- the HTTP front (runtime/engine_http.cpp) ----
  // Kozmo's routes (/metrics, /v1/inspect/, /debug/faults) on the embedded server.
  void add_embedded_routes();
  // /metrics and inspect on one address, the probes on another (not with the embedded server,
  // whose own port carries them).
  status serve_http();
  void stop_http();

  // ---- the parts (runtime/engine.cpp) ----
  // Won the lease: start the controllers (once; not after stop()).
  void on_leading();
  bool run_scheduler() const { return !opts.parts.scheduler_config.empty() || opts.parts.scheduler_from_nodes; }
  bool need_nodes_watch() const { return opts.parts.binder || opts.parts.demo || run_scheduler(); }
  // The shared pods and nodes watches (read-only). With leader election they start at once, so
  // that a standby's caches are warm when it takes over: no LIST of every pod then.
  void start_watches();
  status spawn_actors();

  // ---- the scheduler (runtime/engine_scheduler.cpp) ----
  // The HiveD configuration of the extender: the one given, or one derived from the cluster's
  // GPU nodes now (the extender does not follow nodes that join later).
  expected<std::string> scheduler_yaml();
  // kube-scheduler's extender: the extender actor owns the scheduler core and answers the verbs
  // the extender address receives. Its configuration is the one given or derived now (nodes
  // that join later need a restart here; direct mode follows them).
  status spawn_extender();
  status spawn_scheduler(const caf::actor& pods_watch, const caf::actor& nodes_watch);
};

} // namespace kozmo
