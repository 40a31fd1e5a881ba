// `kozmo extender`: kube-scheduler's extender as a standalone process. Loads HiveD's
// configuration, connects to the API server, starts the pods and nodes watches, the extender
// actor (which owns the GPU scheduler core) and the HTTP server, and runs until SIGTERM/SIGINT.
#include "runtime/local_mode.hpp"

#include "runtime/actor_setup.hpp"
#include "runtime/config_file.hpp"

#include "actors/extender/extender_actor.hpp"
#include "actors/extender/extender_server.hpp"
#include "actors/scheduler/config.hpp"
#include "actors/watch/watch_actor.hpp"
#include "k8s/client/client.hpp"
#include "runtime/logging.hpp"
#include "runtime/signals.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <iostream>

namespace kozmo::runtime {
namespace {

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
  auto core = scheduler::scheduler_core::load(*yaml);
  if (!core)
    return fail(opts.config + ": " + core.err().message);

  auto listen = extender::parse_listen(opts.listen.empty() ? cfg->web_server_address : opts.listen);
  if (!listen)
    return fail(listen.err().message);
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
  if (auto workers = tune_scheduler(sys_cfg); !workers)
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
    extender::extender_server server(extender::make_actor_backend(actor), sopts);
    auto port = server.start();
    if (!port) {
      rc = fail(port.err().message);
    } else {
      spdlog::info("extender listening on {}:{} (config {})", sopts.address, *port, opts.config);
      std::cout << "kozmo extender: listening on port " << *port << "\n" << std::flush;
      int sig = signals.wait();
      spdlog::info("extender: signal {} received, stopping", sig);
    }
    server.stop();
    for (const auto& a : {actor, pods_watch, nodes_watch})
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  } // the actor system waits for its actors here
  cli.reset();
  return rc;
}

} // namespace kozmo::runtime
