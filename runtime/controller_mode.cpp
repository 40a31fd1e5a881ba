// `kozmo controller`: the engine against a real cluster, with the parts --enable names, its HTTP
// endpoints on their own addresses and, with --leader-elect, one leading replica. Every
// configuration error is reported, naming the field, before anything is written.
#include "runtime/local_mode.hpp"

#include "k8s/model/selector.hpp"
#include "runtime/config_file.hpp"
#include "runtime/engine_internal.hpp"
#include "runtime/environment.hpp"
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
  eo.api.kubeconfig = opts.kubeconfig;
  eo.performance.client_qps = config->client.qps;
  eo.performance.client_burst = config->client.burst;
  // kube-scheduler's client multiplexes its binds over HTTP/2 (up to 250 streams on one
  // connection); Kozmo's speaks HTTP/1.1, one request per connection. At 64 the binds of a
  // burst waited for connections (bench/controller_head_to_head.sh; docs/benchmarks.md, "kozmo
  // controller against kube-scheduler", and its git history).
  eo.performance.client_connections = config->client.connections > 0 ? config->client.connections : 128;
  if (opts.scheduler) {
    eo.parts.scheduler_config = config->scheduler.config_text;
    eo.parts.scheduler_from_nodes = config->scheduler.config_text.empty();
    eo.parts.scheduler_name = config->scheduler.scheduler_name;
    eo.parts.count_other_pods = config->scheduler.count_other_pods;
    const auto& ext = config->scheduler.extender;
    eo.extender.address = ext.bind_address;
    eo.extender.cert_pem = ext.cert_pem;
    eo.extender.key_pem = ext.key_pem;
    eo.extender.client_ca_pem = ext.client_ca_pem;
    eo.extender.insecure = ext.insecure;
  }
  eo.parts.training = opts.training;
  eo.parts.training_max_replicas = config->training.default_max_replicas;
  eo.parts.training_max_replicas_by_kind = config->training.max_replicas;
  eo.parts.tasks = opts.tasks;
  // The scheduler alone, binding itself, looks only at its own pods (spec.schedulerName is
  // immutable, so none enters or leaves the selection): a cluster's other pods are not listed.
  // Its scheduler is then the pods watch's only reader, which keeps what the scheduler reads.
  if (opts.scheduler && !opts.training && !opts.tasks && eo.extender.address.empty()) {
    eo.parts.pods_field_selector = "spec.schedulerName=" + k8s::escape_field_value(eo.parts.scheduler_name);
    eo.parts.pods_scheduler_fields_only = true;
  }
  eo.parts.task_platform = config->tasks_section;
  eo.serving.metrics_address = opts.metrics_bind_address == "0" ? "" : opts.metrics_bind_address;
  eo.serving.probe_address = opts.health_probe_bind_address == "0" ? "" : opts.health_probe_bind_address;
  eo.serving.metrics_secure = opts.metrics_secure;
  eo.serving.tls_cert_file = opts.tls_cert_file;
  eo.serving.tls_key_file = opts.tls_private_key_file;
  auto& le = eo.leader_election;
  le.enabled = opts.leader_elect;
  le.lease_duration = config->leader_election.timing.lease_duration;
  le.renew_deadline = config->leader_election.timing.renew_deadline;
  le.retry_period = config->leader_election.timing.retry_period;
  le.lease_name = config->leader_election.resource_name;
  le.lease_namespace = config->leader_election.resource_namespace;
  if (le.lease_namespace.empty())
    le.lease_namespace = pod_namespace().empty() ? "kozmo-system" : pod_namespace();
  // As controller-runtime's managers do: a replica that lost the lease exits at once, so that
  // no write of its follows (the library only reports the loss).
  le.lost = [] {
    spdlog::critical("kozmo: leader election lost; exiting so that no write follows");
    spdlog::shutdown();
    std::_Exit(1);
  };
  if (auto st = apply_environment(eo); !st) {
    std::cerr << "kozmo controller: " << st.err().message << "\n";
    return 1;
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
               eo.extender.address.empty()
                   ? std::string()
                   : "; kube-scheduler's extender verbs on port " + std::to_string(e.extender_port()) +
                         (eo.extender.insecure ? " (plain HTTP)" : " (TLS, client certificates)"),
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
