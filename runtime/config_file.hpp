// Kozmo's configuration file: one YAML document for every part (`kozmo local --config FILE`,
// `kozmo controller --config FILE`). Sections:
//   tasks:          the task platform (actors/tasks/platform_config.hpp; docs/tasks.md "Task
//                   platform configuration" lists every key with its default)
//   scheduler:      config (HiveD's configuration inline, as a map) or configFile (its path);
//                   schedulerName (default kozmo). Neither: derived from the GPU nodes.
//                   countOtherPods (default true): GPUs that other schedulers' pods hold
//                   on a node are not given to ours.
//                   extender: serve kube-scheduler's extender verbs instead of scheduling
//                   directly (bindAddress; certFile, keyFile, clientCAFile; insecure)
//   client:         qps, burst: the API client's rate limit; connections: its requests on the
//                   wire at once
//   leaderElection: leaseDuration, renewDeadline, retryPeriod (Go durations), resourceName,
//                   resourceNamespace (component-base's LeaderElectionConfiguration names)
//   training:       maxReplicas: the most replicas one replica type of a job may have, a number
//                   for every kind or a map by kind ({PyTorchJob: 20000, default: 10000});
//                   default 10000, at most 100000
// An unknown section, an unknown key or a bad value is an error that names it, reported
// before anything starts.
#pragma once

#include "actors/controller/leader_election.hpp"
#include "actors/tasks/platform_config.hpp"
#include "k8s/error.hpp"

#include <cstdint>
#include <map>
#include <string>

namespace kozmo::runtime {

// scheduler.extender: the scheduler answers kube-scheduler's extender verbs (filter, preempt,
// bind) on bind_address over TLS, for callers with a client certificate the client CA signed
// (kube-scheduler's extender tlsConfig) or a token allowed the URL; `insecure: true` serves plain
// HTTP to anyone instead (HiveD's way). The PEM files are read when the file is parsed.
struct extender_section {
  std::string bind_address; // "" = no extender: the scheduler binds pods directly
  std::string cert_pem;     // "" = a self-signed certificate made at start
  std::string key_pem;
  std::string client_ca_pem;
  bool insecure = false;
};

struct scheduler_section {
  std::string config_text;   // HiveD YAML, from `config` (inline) or read from `configFile`
  std::string scheduler_name = "kozmo";
  bool count_other_pods = true; // countOtherPods: GPUs other schedulers' pods hold are taken
  extender_section extender;
};

struct client_section {
  double qps = 0;  // 0 = the default of the command
  int burst = 0;   // 0 = twice qps
  int connections = 0; // requests on the wire at once; 0 = the default of the command
};

struct leader_election_section {
  controller::election_timing timing; // client-go's defaults: 15 s, 10 s, 2 s
  std::string resource_name = "kozmo-controller";
  std::string resource_namespace; // "" = $POD_NAMESPACE, else kozmo-system
};

struct training_section {
  int default_max_replicas = 10000;
  std::map<std::string, int> max_replicas; // by kind, overriding the default
};

struct kozmo_config {
  tasks::platform_config tasks;
  std::string tasks_section; // the same section as JSON text, for engine_options::parts.task_platform
  training_section training;
  scheduler_section scheduler;
  client_section client;
  leader_election_section leader_election;
};

// The file's text parsed ("" gives the defaults). Errors start with `where` (the file name).
// `base_dir` resolves a relative scheduler.configFile.
expected<kozmo_config> parse_config(const std::string& text, const std::string& where,
                                    const std::string& base_dir = "");
// The file read and parsed; "" (no file) gives the defaults.
expected<kozmo_config> load_config_file(const std::string& path);

// A file's whole text; the error says "cannot read PATH".
expected<std::string> read_file(const std::string& path);

} // namespace kozmo::runtime
