// Embedding Kozmo in a host program: start the actor system with the parts the host chooses.
//
//   kozmo::engine_options o;
//   o.embedded_apiserver = true;        // or o.kubeconfig = "~/.kube/config"
//   o.nodes = kozmo::uniform_nodes(4, 8);
//   o.binder = true;
//   o.scheduler_config = hived_yaml;  // Kozmo's GPU scheduler for schedulerName: kozmo
//   kozmo::engine e(o);
//   if (auto st = e.start(); !st) { ... st.err().message ... }
//   ... e.url(), e.api() ...
//   e.stop();                           // also done by the destructor
//
// `kozmo local`, `kozmo kubelet` and `kozmo apiserver` are thin wrappers around it. The
// header keeps CAF, Beast and simdjson out: a host includes it without paying for them.
#pragma once

#include "actors/controller/leader_election.hpp"
#include "actors/kubelet/cluster_shape.hpp"
#include "actors/tasks/platform_config.hpp"
#include "k8s/error.hpp"

#include <caf/fwd.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace kozmo {

namespace client {
class client;
}

// Leader election on a coordination.k8s.io/v1 Lease (client-go's rules and defaults): the
// engine connects and serves its HTTP endpoints at once, and starts its controllers only while
// it leads. Losing the lease calls `lost`, which must stop the process's writes at once (the
// default logs and exits with status 1, as controller-runtime's managers do).
struct leader_election_options {
  bool enabled = false;
  std::string lease_namespace = "kozmo-system";
  std::string lease_name = "kozmo-controller";
  std::string identity;                 // "" = $POD_NAME or the host name, plus a random suffix
  controller::election_timing timing;   // leaseDuration, renewDeadline, retryPeriod
  std::function<void()> lost;
};

struct engine_options {
  // Where the Kubernetes API is: an embedded server, a kubeconfig, or a URL (plain HTTP).
  bool embedded_apiserver = false;
  std::uint16_t port = 0;      // embedded server: 0 = a free port
  std::string data_dir;        // embedded server: keep state across restarts
  std::int64_t event_ttl_seconds = 3600; // embedded server: Events expire after this; 0 = never
  // Embedded server: TLS and authentication as kind's and k3s's (runtime/local_pki.hpp): a CA
  // made at start (kept in data_dir/pki), a client certificate in kubeconfig(), the token in
  // bearer_token(); other callers get 401. false: plain HTTP that anyone reaching loopback may
  // use, for tests that talk raw HTTP to the server.
  bool embedded_secure = true;
  // Embedded server: POST /debug/faults switches on the server's fault injection (dropped
  // watches, 410, 429, 5xx, latency; runtime/fault_route.hpp), for the chaos harness. Off by
  // default; the route sits behind the server's authentication.
  bool fault_injection = false;
  std::string kubeconfig;      // used when not embedded ("" = $KUBECONFIG or ~/.kube/config)
  std::string server_url;      // used when not embedded and set: plain http://host:port

  // Which parts run.
  kubelet::cluster_shape nodes; // simulated kubelets, one actor per node (empty = none)
  // The kubelets' runtime for pods without a kozmo.io/runtime annotation: "sim" or "process"
  // (containers run as local processes; docs/process-runtime.md). A pod's annotation
  // `kozmo.io/runtime: process` is honoured only with runtime "process" or allow_process_runtime:
  // running a pod's command on the host is the operator's choice, never a pod's alone.
  std::string kubelet_runtime = "sim";
  bool allow_process_runtime = false;
  // Who the process runtime's containers run as when Kozmo runs as root: a user name, or
  // "UID:GID" ("" = nobody). Running as another user, they run as that user.
  std::string process_user;
  // Where the process runtime keeps volumes, termination messages and logs (<work_dir>/pods,
  // <work_dir>/logs/pods), and where the embedded server's pods/log reads them. "" = data_dir
  // when set, else a fresh directory under $TMPDIR removed at stop. Only with the embedded
  // server and simulated nodes.
  std::string work_dir;
  bool binder = false;          // the default-scheduler stand-in
  bool volume_binder = false;   // binds PersistentVolumeClaims to PersistentVolumes (actors/volumes)
  bool quota = false;           // keeps ResourceQuotas' status (actors/quota)
  bool demo = false;            // create and narrate the demo pod
  // Kozmo's GPU scheduler (direct mode) for pods with spec.schedulerName = scheduler_name:
  // HiveD's YAML configuration as text, or the path of a file holding it. Empty: not run.
  // With the embedded server, HiveD's GET /v1/inspect/... paths are served on its port.
  std::string scheduler_config;
  // With no scheduler_config: run the scheduler anyway, on a configuration derived from the
  // cluster's GPU nodes when the scheduler starts (runtime/hived_shape.hpp: shape_from_nodes).
  bool scheduler_from_nodes = false;
  std::string scheduler_name = "kozmo";
  // A field selector for the pods watch the actors share ("" = every pod). Only for hosts whose
  // parts follow just those pods: `kozmo controller --enable scheduler` (direct mode) sets
  // spec.schedulerName=<scheduler_name>, the only pods its scheduler looks at, so a cluster's
  // other pods are neither listed at start nor held in memory. The training and task
  // controllers, the binder, the kubelets and the quota controller need every pod.
  std::string pods_field_selector;
  // The pods watch holds only what the scheduler reads of a pod (metadata, node, scheduler,
  // priority, containers' resources, phase; watch::watch_config::counted_pods) and LISTs them
  // in protobuf. For `kozmo controller --enable scheduler`, whose scheduler is that watch's only
  // reader; a host that subscribes to pods_watch() then gets such pods.
  bool pods_scheduler_fields_only = false;
  // The scheduler (direct mode) counts the GPUs that pods of other schedulers hold on its nodes
  // as taken, so that it never gives a GPU the kubelet has already given (scheduler_core.hpp
  // note 8). With pods_field_selector set, those pods come from a watch of their own: the
  // bound pods whose spec.schedulerName is not scheduler_name and that have not finished.
  // False: not counted (GPU nodes that only this scheduler places pods on).
  bool count_other_pods = true;
  // The training-job controller (every kind of actors/training/job_model.cpp). With
  // the embedded server, the CRDs of deploy/crds (embedded at build time) are installed first.
  bool training = false;
  std::string mpi_kubectl_delivery_image; // "" = training::options' default
  // The most replicas one replica type of a training job may have: per kind ("PyTorchJob"),
  // else the default. With the embedded server the installed CRDs say the same (maximum).
  int training_max_replicas = 10000;
  std::map<std::string, int> training_max_replicas_by_kind;
  // The task controller (TaskExecution, ResourcePool: actors/tasks) with the task platform's
  // settings. With the embedded server, the CRDs of deploy/crds are installed first.
  bool tasks = false;
  tasks::platform_config task_platform;
  // Actor worker threads; 0 = $KOZMO_WORKERS when set, else one per CPU this process may use
  // (its affinity mask capped by a cgroup CPU quota: runtime/cpu_budget.hpp).
  int workers = 0;
  double client_qps = 0;        // 0 = the client's default (or a loopback-sized one when embedded)
  int client_burst = 0;         // 0 = twice client_qps
  int client_connections = 0;   // requests on the wire at once; 0 = the client's default (64)
  leader_election_options leader_election;
  // Kozmo's own HTTP endpoints when the API server is not embedded ("host:port"; "" = none):
  // /metrics and /v1/inspect/... on metrics_address; /healthz and /readyz on probe_address
  // (they reveal nothing). /readyz answers 200 once the controllers run or, with leader
  // election, while this replica stands by.
  std::string metrics_address;
  std::string probe_address;
  // The metrics address over TLS (the PEM files given, else a self-signed certificate made at
  // start), every caller's bearer token reviewed by the cluster (TokenReview) and its right to
  // the URL checked (SubjectAccessReview): 401 without a token the cluster accepts, 403 without
  // the right (actors/extender/delegated_auth.hpp).
  bool metrics_secure = false;
  std::string tls_cert_file;
  std::string tls_key_file;
  // kube-scheduler's extender verbs (POST /v1/extender/filter, preempt, bind) on this address
  // ("" = none). The scheduler then answers kube-scheduler instead of binding pods itself, and
  // inspect (on metrics_address) reads its cells. TLS with the PEM given (else self-signed);
  // callers with a client certificate extender_client_ca_pem signed pass (kube-scheduler's
  // extender tlsConfig), others need a token allowed the URL, as on the metrics address.
  // extender_insecure: plain HTTP that anyone may call (HiveD's way; an opt-in).
  std::string extender_address;
  std::string extender_cert_pem;
  std::string extender_key_pem;
  std::string extender_client_ca_pem;
  bool extender_insecure = false;
};

class engine {
public:
  explicit engine(engine_options opts);
  ~engine();
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  // Starts the server (if embedded), the actor system and the chosen actors.
  status start();
  // Stops the actors, then the server (which lets go of its data dir). Idempotent.
  void stop();

  // The API server's URL.
  std::string url() const;
  // Embedded secure server: a kubeconfig (YAML) that reaches it as its admin, and the bearer
  // token it also accepts ("" otherwise).
  std::string kubeconfig() const;
  std::string bearer_token() const;
  // The ports the HTTP endpoints listen on (0 when not served): for an address ending in :0.
  std::uint16_t metrics_port() const;
  std::uint16_t probe_port() const;
  std::uint16_t extender_port() const; // 0 without extender_address
  // The client the actors use (shared; thread-safe).
  std::shared_ptr<client::client> api() const;
  // The actor system (for hosts that spawn their own actors next to Kozmo's).
  caf::actor_system& system();
  // The scheduler actor (messages/scheduler_messages.hpp); invalid when not running.
  caf::actor scheduler() const;
  // The pods watch the actors share (actors/watch): a host that wants to follow pods
  // subscribes to it instead of opening a second watch and cache (it holds the pods of
  // engine_options::pods_field_selector). Invalid when not running.
  caf::actor pods_watch() const;

private:
  friend struct engine_internal; // runtime/engine_internal.hpp: what in-tree code reaches besides
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace kozmo
