// What a host chooses when it starts Kozmo: where the Kubernetes API is, which parts run, how
// fast, what Kozmo serves over HTTP, kube-scheduler's extender, and leader election. Every field
// has a default; a host sets the few it needs:
//
//   kozmo::engine_options o;
//   o.api.kubeconfig = "/home/me/.kube/config";    // or o.api.embedded = true
//   o.parts.scheduler_from_nodes = true;           // Kozmo's GPU scheduler for schedulerName: kozmo
//
// Kozmo reads no environment variable of its own: `kozmo` (the CLI) reads $KOZMO_WORKERS,
// $POD_NAMESPACE and $POD_NAME and passes them in here. Two defaults are found as client-go finds
// them: api.kubeconfig "" ($KUBECONFIG, ~/.kube/config, or the service account inside a pod) and
// leader_election.identity "" ($POD_NAME, else the host name); set them to leave the
// environment out.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kozmo {

// Where the Kubernetes API is: an embedded server, a kubeconfig, or a URL (plain HTTP).
struct api_options {
  bool embedded = false;
  std::uint16_t port = 0;      // embedded server: 0 = a free port
  std::string data_dir;        // embedded server: keep state across restarts
  std::int64_t event_ttl_seconds = 3600; // embedded server: Events expire after this; 0 = never
  // Embedded server: TLS and authentication as kind's and k3s's: a CA made at start (kept in
  // data_dir/pki), a client certificate in engine::kubeconfig(), the token in
  // engine::bearer_token(); other callers get 401. false: plain HTTP that anyone reaching
  // loopback may use, for tests that talk raw HTTP to the server.
  bool secure = true;
  // Embedded server: POST /debug/faults switches on the server's fault injection (dropped
  // watches, 410, 429, 5xx, latency), for the chaos harness. Off by default; the route sits
  // behind the server's authentication.
  bool fault_injection = false;
  // Not embedded: the kubeconfig file to read ("" = $KUBECONFIG, else ~/.kube/config, else the
  // service account when Kozmo runs in a pod), or, when set, server_url: plain http://host:port.
  std::string kubeconfig;
  std::string server_url;
};

// A simulated node: Kozmo runs a kubelet for it that registers the Node and runs its pods.
struct simulated_node {
  std::string name;
  int gpus = 8;
  std::string gpu_type = "sim-gpu"; // label kozmo.io/gpu-type
  std::string cpu = "64";
  std::string memory = "512Gi";
  std::string ephemeral_storage = "1Ti";
  std::string pods = "110";
  std::map<std::string, std::string> labels;
};

// `count` nodes named <prefix>-0 .. <prefix>-(count-1), each with `gpus` GPUs.
std::vector<simulated_node> uniform_nodes(int count, int gpus, const std::string& prefix = "node");

// Which parts run, and how each is configured.
struct parts_options {
  std::vector<simulated_node> nodes; // simulated kubelets, one actor per node (empty = none)
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
  // when set, else a fresh directory under the system's temporary directory removed at stop.
  // Only with the embedded server and simulated nodes.
  std::string work_dir;
  bool binder = false;          // the default-scheduler stand-in
  bool volume_binder = false;   // binds PersistentVolumeClaims to PersistentVolumes
  bool quota = false;           // keeps ResourceQuotas' status
  bool demo = false;            // create and narrate the demo pod
  // Kozmo's GPU scheduler (direct mode) for pods with spec.schedulerName = scheduler_name:
  // HiveD's YAML configuration as text, or the path of a file holding it. Empty: not run.
  // With the embedded server, HiveD's GET /v1/inspect/... paths are served on its port.
  std::string scheduler_config;
  // With no scheduler_config: run the scheduler anyway, on a configuration derived from the
  // cluster's GPU nodes when the scheduler starts.
  bool scheduler_from_nodes = false;
  std::string scheduler_name = "kozmo";
  // A field selector for the pods watch the parts share ("" = every pod). Only for hosts whose
  // parts follow just those pods: `kozmo controller --enable scheduler` (direct mode) sets
  // spec.schedulerName=<scheduler_name>, the only pods its scheduler looks at. The training and
  // task controllers, the binder, the kubelets and the quota controller need every pod.
  std::string pods_field_selector;
  // The pods watch holds only what the scheduler reads of a pod and LISTs them in protobuf. For
  // `kozmo controller --enable scheduler`, whose scheduler is that watch's only reader.
  bool pods_scheduler_fields_only = false;
  // The scheduler (direct mode) counts the GPUs that pods of other schedulers hold on its nodes
  // as taken, so that it never gives a GPU the kubelet has already given. With
  // pods_field_selector set, those pods come from a watch of their own. False: not counted (GPU
  // nodes that only this scheduler places pods on).
  bool count_other_pods = true;
  // The training-job controller (PyTorchJob and the other Kubeflow kinds). With the embedded
  // server, Kozmo's CRDs are installed first.
  bool training = false;
  std::string mpi_kubectl_delivery_image; // "" = the controller's default
  // The most replicas one replica type of a training job may have: per kind ("PyTorchJob"),
  // else the default. With the embedded server the installed CRDs say the same (maximum).
  int training_max_replicas = 10000;
  std::map<std::string, int> training_max_replicas_by_kind;
  // The task controller (TaskExecution, ResourcePool). With the embedded server, Kozmo's CRDs
  // are installed first. Its settings: the `tasks:` section of Kozmo's configuration file, as
  // YAML or JSON text ("" = the defaults; docs/tasks.md "Task platform configuration"); a bad one makes
  // start() fail with a message naming the key.
  bool tasks = false;
  std::string task_platform;
  // The namespace of the PodTemplates tasks may name ("" = the task's own namespace only); the
  // CLI passes $POD_NAMESPACE.
  std::string task_template_namespace;
};

// How much of the machine and of the API server Kozmo uses.
struct performance_options {
  int workers = 0;              // actor worker threads; 0 = one per CPU this process may use
  double client_qps = 0;        // 0 = the client's default (or a loopback-sized one when embedded)
  int client_burst = 0;         // 0 = twice client_qps
  int client_connections = 0;   // requests on the wire at once; 0 = the client's default (64)
};

// Kozmo's own HTTP endpoints when the API server is not embedded ("host:port"; "" = none):
// /metrics and /v1/inspect/... on metrics_address; /healthz and /readyz on probe_address (they
// reveal nothing). /readyz answers 200 once the controllers run or, with leader election, while
// this replica stands by.
struct serving_options {
  std::string metrics_address;
  std::string probe_address;
  // The metrics address over TLS (the PEM files given, else a self-signed certificate made at
  // start), every caller's bearer token reviewed by the cluster (TokenReview) and its right to
  // the URL checked (SubjectAccessReview): 401 without a token the cluster accepts, 403 without
  // the right.
  bool metrics_secure = false;
  std::string tls_cert_file;
  std::string tls_key_file;
};

// kube-scheduler's extender verbs (POST /v1/extender/filter, preempt, bind) on `address`
// ("" = none). The scheduler then answers kube-scheduler instead of binding pods itself, and
// inspect (on the metrics address) reads its cells. TLS with the PEM given (else self-signed);
// callers with a client certificate client_ca_pem signed pass (kube-scheduler's extender
// tlsConfig), others need a token allowed the URL, as on the metrics address. insecure: plain
// HTTP that anyone may call (HiveD's way; an opt-in).
struct extender_options {
  std::string address;
  std::string cert_pem;
  std::string key_pem;
  std::string client_ca_pem;
  bool insecure = false;
};

// Leader election on a coordination.k8s.io/v1 Lease (client-go's rules and defaults): the
// engine connects and serves its HTTP endpoints at once, and starts its controllers only while
// it leads. Losing the lease calls `lost`, on one of Kozmo's threads: the host must stop this
// process's writes at once (`kozmo controller` logs and exits, as controller-runtime's managers
// do). Kozmo itself never exits the process, so `lost` is required: start() refuses leader
// election without it.
struct leader_election_options {
  bool enabled = false;
  std::string lease_namespace = "kozmo-system";
  std::string lease_name = "kozmo-controller";
  std::string identity; // who this replica is, unique among the candidates ("" = $POD_NAME or the host name, plus a random suffix)
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
  std::function<void()> lost;
};

struct engine_options {
  api_options api;
  parts_options parts;
  performance_options performance;
  serving_options serving;
  extender_options extender;
  leader_election_options leader_election;
};

} // namespace kozmo
