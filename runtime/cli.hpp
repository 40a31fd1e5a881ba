// Command-line parsing for the `kozmo` binary's sub-commands. Pure: no I/O, unit-tested.
#pragma once

#include "k8s/error.hpp"
#include "runtime/status_cli.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kozmo::runtime {

struct local_options {
  std::uint16_t port = 0;          // 0 = pick a free port
  int nodes = 2;
  int gpus_per_node = 8;
  std::string cluster_file;        // overrides nodes/gpus_per_node
  std::string data_dir;            // state survives restarts when set
  std::int64_t event_ttl_seconds = 3600; // Events expire after this; 0 = never
  std::string write_kubeconfig;    // path of a kubeconfig pointing kubectl at the server
  bool demo = false;               // create a demo pod and narrate its life
  std::string config_file;         // Kozmo's configuration (YAML; the `tasks:` section)
  std::string runtime = "sim";     // pods' runtime: "sim" (simulated) or "process" (local processes)
  bool allow_process_runtime = false; // sim by default; a pod's kozmo.io/runtime: process opts in
  std::string process_user;        // who process containers run as when Kozmo is root ("" = nobody)
  bool fault_injection = false;    // POST /debug/faults (tests/chaos)
  std::string log_level = "info";
};

struct kubelet_options {
  std::string kubeconfig;
  int nodes = 1;
  int gpus_per_node = 8;
  std::string cluster_file;
  std::string node_prefix = "kozmo-sim";
  std::string log_level = "info";
  bool training = false;           // also run the training-job controller against that server
  std::string mpi_kubectl_delivery_image; // the MPI launcher's init container; "" = the default
  int kube_api_qps = 0;            // client rate limit; 0 = the client's default (50, burst 100)
  int kube_api_burst = 0;          // 0 = twice the qps
};

struct apiserver_options {
  std::uint16_t port = 0;
  std::string data_dir;
  std::string write_kubeconfig;    // the kubeconfig (TLS, admin credentials) for kubectl
  std::int64_t event_ttl_seconds = 3600;
  std::string log_level = "info";
};

// kube-scheduler's extender as its own process (HiveD's deployment shape).
struct extender_cli_options {
  std::string config;              // HiveD configuration YAML (required)
  std::string kubeconfig;          // "" = config's kubeConfigFilePath, in-cluster, $KUBECONFIG
  std::string listen;              // "host:port"; "" = config's webServerAddress, else 127.0.0.1:9096
  // Mutual TLS: the CA of the client certificate kube-scheduler presents (its extender
  // tlsConfig); callers without one need a token the cluster accepts and allows the URL.
  std::string client_ca_file;
  std::string tls_cert_file;       // with client_ca_file: the serving certificate ("" = self-signed)
  std::string tls_private_key_file;
  bool insecure = false;           // plain HTTP on an address other hosts reach: an explicit opt-in
  std::string probe_address;       // /healthz and /readyz alone on this address ("" = none)
  std::string log_level = "info";
  int kube_api_qps = 0;            // client rate limit; 0 = extender_options' default
  int kube_api_burst = 0;
};

// The standalone controller against a real cluster (flags named as kubebuilder's).
struct controller_options {
  std::string kubeconfig;          // "" = $KUBECONFIG, ~/.kube/config, in-cluster
  std::string config_file;         // Kozmo's configuration (YAML; runtime/config_file.hpp)
  bool scheduler = true;           // --enable (default: all three)
  bool training = true;
  bool tasks = true;
  bool leader_elect = false;
  std::string metrics_bind_address = "127.0.0.1:8080";
  std::string health_probe_bind_address = ":8081";
  bool metrics_secure = false;     // TLS + TokenReview/SubjectAccessReview on the metrics address
  std::string tls_cert_file;       // "" = self-signed at start
  std::string tls_private_key_file;
  std::string log_level = "info";
};

// Prints Kozmo's CRDs (what `kozmo local` installs), for `kubectl create -f -`.
struct crds_options {
  std::string pod_schema;          // an OpenAPI v2 document: give templates their full schema
  std::vector<std::string> kinds;  // only these kinds ("PyTorchJob"); empty = all
};

// `kozmo copilot download|upload`: a task's data in and out, run by the copilot containers
// of its pod (actors/tasks/copilot.hpp) or by hand.
struct copilot_options {
  bool upload = false;                               // download | upload
  std::string input_path = "/var/kozmo/inputs";
  std::vector<std::pair<std::string, std::string>> inputs; // --input NAME=URI, repeatable
  std::int64_t max_dataset_size = 0;                 // bytes, the inputs' total; 0 = no cap
  std::string output_path = "/var/kozmo/outputs";
  std::string output_prefix;                         // upload: required
  std::int64_t timeout_seconds = 3600;               // upload: how long to wait for the task's container
  std::string termination_log;                       // "": /dev/termination-log when it exists
  std::string s3_endpoint;                           // "": AWS (https://s3.<region>.amazonaws.com)
  std::string s3_region = "us-east-1";
  bool s3_virtual_hosted = false;                    // bucket.endpoint/key instead of endpoint/bucket/key
  std::string s3_access_key_id;                      // "": $AWS_ACCESS_KEY_ID
  std::string s3_secret_access_key;                  // "": $AWS_SECRET_ACCESS_KEY
  std::int64_t s3_part_size = 64LL * 1024 * 1024;   // ranged GETs and multipart parts
  int s3_list_page = 1000;                           // keys per ListObjectsV2 page
  std::string log_level = "info";
};

struct command {
  enum class kind { local, kubelet, apiserver, extender, controller, crds, copilot, status, version, help } what = kind::help;
  local_options local;
  kubelet_options kubelet;
  apiserver_options apiserver;
  extender_cli_options extender;
  controller_options controller;
  crds_options crds;
  copilot_options copilot;
  status_options status;
};

// Parses argv (without the program name). Errors say which flag is wrong and why.
expected<command> parse_command_line(const std::vector<std::string>& args);

// The text `kozmo help` prints.
std::string usage();

} // namespace kozmo::runtime
