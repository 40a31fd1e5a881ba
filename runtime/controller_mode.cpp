// `kozmo controller`: the engine against a real cluster, with the parts --enable names, its HTTP
// endpoints on their own addresses and, with --leader-elect, one leading replica. Every
// configuration error is reported, naming the field, before anything is written.
#include "runtime/local_mode.hpp"

#include "k8s/model/selector.hpp"
#include "runtime/config_file.hpp"
#include "runtime/engine.hpp"
#include "runtime/logging.hpp"
#include "runtime/signals.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <iostream>

namespace kozmo::runtime {

int run_controller(const controller_options& opts) {
  if (!start_logging(opts.log_level))
    return 2;
  auto config = load_config_file(opts.config_file);
  if (!config) {
    std::cerr << "kozmo controller: " << config.err().message << "\n";
    return 2;
  }
  if (!opts.scheduler && !opts.training && !opts.tasks) {
    std::cerr << "kozmo controller: --enable names no part (scheduler, training, tasks)\n";
    return 2;
  }
  shutdown_signals signals;
  engine_options eo;
  eo.kubeconfig = opts.kubeconfig;
  eo.client_qps = config->client.qps;
  eo.client_burst = config->client.burst;
  // kube-scheduler's client multiplexes its binds over HTTP/2 (up to 250 streams on one
  // connection); Kozmo's speaks HTTP/1.1, one request per connection. At 64 the binds of a
  // burst waited for connections (README, "Head-to-head").
  eo.client_connections = config->client.connections > 0 ? config->client.connections : 128;
  if (opts.scheduler) {
    eo.scheduler_config = config->scheduler.config_text;
    eo.scheduler_from_nodes = config->scheduler.config_text.empty();
    eo.scheduler_name = config->scheduler.scheduler_name;
    eo.count_other_pods = config->scheduler.count_other_pods;
    const auto& ext = config->scheduler.extender;
    eo.extender_address = ext.bind_address;
    eo.extender_cert_pem = ext.cert_pem;
    eo.extender_key_pem = ext.key_pem;
    eo.extender_client_ca_pem = ext.client_ca_pem;
    eo.extender_insecure = ext.insecure;
  }
  eo.training = opts.training;
  eo.training_max_replicas = config->training.default_max_replicas;
  eo.training_max_replicas_by_kind = config->training.max_replicas;
  eo.tasks = opts.tasks;
  // The scheduler alone, binding itself, looks only at its own pods (spec.schedulerName is
  // immutable, so none enters or leaves the selection): a cluster's other pods are not listed.
  // Its scheduler is then the pods watch's only reader, which keeps what the scheduler reads.
  if (opts.scheduler && !opts.training && !opts.tasks && eo.extender_address.empty()) {
    eo.pods_field_selector = "spec.schedulerName=" + k8s::escape_field_value(eo.scheduler_name);
    eo.pods_scheduler_fields_only = true;
  }
  eo.task_platform = std::move(config->tasks);
  eo.metrics_address = opts.metrics_bind_address == "0" ? "" : opts.metrics_bind_address;
  eo.probe_address = opts.health_probe_bind_address == "0" ? "" : opts.health_probe_bind_address;
  eo.metrics_secure = opts.metrics_secure;
  eo.tls_cert_file = opts.tls_cert_file;
  eo.tls_key_file = opts.tls_private_key_file;
  auto& le = eo.leader_election;
  le.enabled = opts.leader_elect;
  le.timing = config->leader_election.timing;
  le.lease_name = config->leader_election.resource_name;
  le.lease_namespace = config->leader_election.resource_namespace;
  if (le.lease_namespace.empty()) {
    const char* ns = std::getenv("POD_NAMESPACE");
    le.lease_namespace = ns && *ns ? ns : "kozmo-system";
  }
  engine e(eo);
  if (auto st = e.start(); !st) {
    std::cerr << "kozmo controller: " << st.err().message << "\n";
    return 1;
  }
  std::string parts = std::string(opts.scheduler ? " scheduler" : "") + (opts.training ? " training" : "") +
                      (opts.tasks ? " tasks" : "");
  spdlog::info("controller: API server {}; parts:{}; metrics on port {}{}, probes on port {}{}{}", e.url(), parts,
               e.metrics_port(), opts.metrics_secure ? " (TLS, TokenReview + SubjectAccessReview)" : "",
               e.probe_port(),
               eo.extender_address.empty()
                   ? std::string()
                   : "; kube-scheduler's extender verbs on port " + std::to_string(e.extender_port()) +
                         (eo.extender_insecure ? " (plain HTTP)" : " (TLS, client certificates)"),
               opts.leader_elect ? "; leader election on " + le.lease_namespace + "/" + le.lease_name : "");
  std::cout << "kozmo controller: running (" << (opts.leader_elect ? "leader election" : "no leader election")
            << ")\n"
            << std::flush;
  int sig = signals.wait();
  spdlog::info("controller: signal {} received, stopping", sig);
  e.stop();
  return 0;
}

} // namespace kozmo::runtime
