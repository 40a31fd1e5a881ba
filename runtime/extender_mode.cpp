// `kozmo extender`: kube-scheduler's extender as a standalone process. Loads HiveD's
// configuration, connects to the API server, starts the pods and nodes watches, the extender
// actor (which owns the GPU scheduler core) and the HTTP server, and runs until SIGTERM/SIGINT.
#include "runtime/local_mode.hpp"

#include "runtime/actor_setup.hpp"
#include "runtime/config_file.hpp"

#include "actors/extender/delegated_auth.hpp"
#include "actors/extender/extender_actor.hpp"
#include "actors/extender/http_api.hpp"
#include "actors/extender/extender_server.hpp"
#include "actors/scheduler/config.hpp"
#include "actors/watch/watch_actor.hpp"
#include "k8s/client/client.hpp"
#include "runtime/logging.hpp"
#include "runtime/serving_identity.hpp"
#include "runtime/signals.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <iostream>
#include <optional>

namespace kozmo::runtime {
namespace {

constexpr const char* default_listen = "127.0.0.1:9096";

int fail(const std::string& message) {
  spdlog::error("extender: {}", message);
  return 1;
}

} // namespace

int run_extender(const extender_cli_options& opts) {
  if (!start_logging(opts.log_level))
    return 2;
  shutdown_signals signals; // before any thread starts
  if (opts.config.empty())
    return fail("a HiveD configuration file is required (--config FILE)");
  auto yaml = read_file(opts.config);
  if (!yaml)
    return fail(yaml.err().message);
  auto cfg = scheduler::parse_config(*yaml);
  if (!cfg)
    return fail(opts.config + ": " + cfg.err().message);
  if (cfg->has_topology_from_labels) // it lists no nodes to derive the cells from
    return fail(opts.config + ": topologyFromLabels needs the cluster's nodes: serve the verbs from `kozmo controller` "
                "(scheduler.extender) instead, which derives the cells from the nodes' labels");
  auto core = scheduler::scheduler_core::load(*yaml);
  if (!core)
    return fail(opts.config + ": " + core.err().message);

  std::string address = !opts.listen.empty()                  ? opts.listen
                        : !cfg->web_server_address.empty() ? cfg->web_server_address
                                                           : std::string(default_listen);
  auto listen = extender::parse_listen(address);
  if (!listen)
    return fail(listen.err().message);
  // kube-scheduler's verbs bind pods: on an address other hosts reach, only callers that prove
  // who they are (mutual TLS, or a token the cluster allows), unless the operator opts out.
  if (opts.client_ca_file.empty() && !opts.insecure && !extender::is_loopback(listen->first))
    return fail("'" + address + "' (" + (opts.listen.empty() ? "the config's webServerAddress" : "--listen") +
                ") is reachable from other hosts, and the extender's verbs bind pods: give --client-ca-file "
                "(mutual TLS with the CA of the certificate kube-scheduler presents), listen on 127.0.0.1, or "
                "pass --insecure to serve plain HTTP to anyone who can reach it");
  std::optional<std::pair<std::string, unsigned short>> probe_listen;
  if (!opts.probe_address.empty()) {
    auto parsed = extender::parse_listen(opts.probe_address);
    if (!parsed)
      return fail("--health-probe-bind-address: " + parsed.err().message);
    probe_listen = *parsed;
  }
  std::optional<extender::tls_options> tls;
  if (!opts.client_ca_file.empty()) {
    auto id = serving_identity_files(opts.tls_cert_file, opts.tls_private_key_file, "the extender");
    if (!id)
      return fail(id.err().message);
    auto ca = read_file(opts.client_ca_file);
    if (!ca)
      return fail("--client-ca-file: " + ca.err().message);
    id->client_ca_pem = std::move(*ca);
    tls = std::move(*id);
  }
  // The flag wins, then HiveD's kubeConfigFilePath, then kubectl's search (in-cluster last).
  auto ccfg = client::discover_config(opts.kubeconfig.empty() ? cfg->kube_config_file_path : opts.kubeconfig);
  if (!ccfg)
    return fail(ccfg.err().message);
  if (!cfg->kube_api_server_address.empty() && opts.kubeconfig.empty() && cfg->kube_config_file_path.empty())
    ccfg->server = cfg->kube_api_server_address;
  ccfg->user_agent = "kozmo-extender/0.1";
  // Everything the extender writes (bindings first, then Events) goes through this limit.
  // kube-scheduler waits `httpTimeout` (5 s in deploy/scheduler) for a bind and binds as fast
  // as it schedules: at kube-scheduler's own client limit (50/s) a burst of a few hundred pods
  // left binds queued past that timeout.
  ccfg->qps = opts.kube_api_qps > 0 ? opts.kube_api_qps : 200;
  ccfg->burst = opts.kube_api_burst > 0 ? opts.kube_api_burst : 400;
  auto cli = std::make_shared<client::client>(*ccfg);

  caf::actor_system_config sys_cfg;
  if (auto workers = tune_scheduler(sys_cfg, 0, std::getenv("KOZMO_WORKERS")); !workers)
    return fail(workers.err().message);
  int rc = 0;
  {
    caf::actor_system sys{sys_cfg};
    watch::watch_config pods;
    pods.resource = {"", "v1", "pods", "", "", ""};
    watch::watch_config nodes;
    nodes.resource = {"", "v1", "nodes", "", "", ""};
    auto pods_watch = watch::spawn_watch<k8s::pod>(sys, cli, pods);
    auto nodes_watch = watch::spawn_watch<k8s::node>(sys, cli, nodes);
    scheduler::intake_options intake;
    intake.default_virtual_cluster = scheduler::default_virtual_cluster(*yaml);
    auto logic = std::make_shared<extender::extender_logic>(std::move(*core), intake);
    auto actor = extender::spawn_extender_actor(sys, cli, logic, pods_watch, nodes_watch);

    extender::server_options sopts;
    sopts.address = listen->first;
    sopts.port = listen->second;
    if (tls) {
      sopts.tls = std::move(*tls);
      sopts.authorize = extender::delegated_access(cli);
    }
    auto backend = extender::make_actor_backend(actor);
    extender::extender_server server(backend, sopts);
    std::unique_ptr<extender::extender_server> probes;
    auto port = server.start();
    if (port && probe_listen) {
      extender::server_options po;
      po.address = probe_listen->first;
      po.port = probe_listen->second;
      po.routes = {extender::route_kind::healthz, extender::route_kind::readyz};
      probes = std::make_unique<extender::extender_server>(backend, po);
      if (auto pp = probes->start(); !pp)
        port = error{"--health-probe-bind-address: " + pp.err().message};
      else
        std::cout << "kozmo extender: health probes on port " << *pp << "\n" << std::flush;
    }
    if (!port) {
      rc = fail(port.err().message);
    } else {
      spdlog::info("extender listening on {}:{} ({}; config {})", sopts.address, *port,
                   sopts.tls ? "TLS, client certificates or tokens" : "plain HTTP", opts.config);
      if (opts.insecure && !extender::is_loopback(sopts.address))
        spdlog::warn("extender: plain HTTP on {}: anyone who can reach it may filter, preempt and bind (--insecure)",
                     sopts.address);
      std::cout << "kozmo extender: listening on port " << *port << "\n" << std::flush;
      int sig = signals.wait();
      spdlog::info("extender: signal {} received, stopping", sig);
    }
    if (probes)
      probes->stop();
    server.stop();
    for (const auto& a : {actor, pods_watch, nodes_watch})
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  } // the actor system waits for its actors here
  cli.reset();
  return rc;
}

} // namespace kozmo::runtime
