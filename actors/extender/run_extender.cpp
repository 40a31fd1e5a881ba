#include "actors/extender/run_extender.hpp"

#include "actors/extender/extender_actor.hpp"
#include "actors/extender/extender_server.hpp"
#include "actors/scheduler/config.hpp"
#include "actors/watch/watch_actor.hpp"
#include "k8s/client/client.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <charconv>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <pthread.h>
#include <sstream>

namespace kozmo::extender {
namespace {

expected<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return error{"cannot read " + path};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

expected<client::config> client_config(const std::string& kubeconfig) {
  if (!kubeconfig.empty()) return client::load_kubeconfig(kubeconfig);
  auto fallback = client::default_kubeconfig_path();
  if (std::getenv("KUBERNETES_SERVICE_HOST") && (fallback.empty() || !std::filesystem::exists(fallback)))
    return client::in_cluster_config();
  if (fallback.empty()) return error{"no kubeconfig: pass --kubeconfig or set KUBECONFIG"};
  return client::load_kubeconfig(fallback);
}

} // namespace

expected<std::pair<std::string, unsigned short>> parse_listen(std::string_view text) {
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return error{"listen address '" + std::string(text) + "' is not host:port"};
  auto host = std::string(text.substr(0, colon));
  auto port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535 || port_text.empty())
    return error{"listen address '" + std::string(text) + "' has no valid port"};
  return std::make_pair(host.empty() ? std::string("0.0.0.0") : host, static_cast<unsigned short>(port));
}

int run_extender(const extender_options& opts) {
  // Block the stop signals before any thread starts, so every thread inherits the mask and
  // only sigwait below sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto fail = [](const std::string& message) {
    spdlog::error("extender: {}", message);
    return 1;
  };
  if (opts.config_path.empty()) return fail("a HiveD configuration file is required (--config FILE)");
  auto yaml = read_file(opts.config_path);
  if (!yaml) return fail(yaml.err().message);
  auto cfg = scheduler::parse_config(*yaml);
  if (!cfg) return fail(opts.config_path + ": " + cfg.err().message);
  auto core = scheduler::scheduler_core::load(*yaml);
  if (!core) return fail(opts.config_path + ": " + core.err().message);

  auto listen = parse_listen(opts.listen.empty() ? cfg->web_server_address : opts.listen);
  if (!listen) return fail(listen.err().message);
  auto ccfg = client_config(opts.kubeconfig.empty() ? cfg->kube_config_file_path : opts.kubeconfig);
  if (!ccfg) return fail(ccfg.err().message);
  if (!cfg->kube_api_server_address.empty() && opts.kubeconfig.empty() && cfg->kube_config_file_path.empty())
    ccfg->server = cfg->kube_api_server_address;
  ccfg->user_agent = "kozmo-extender/0.1";
  ccfg->qps = opts.qps;
  ccfg->burst = opts.burst;
  auto cli = std::make_shared<client::client>(*ccfg);

  caf::actor_system_config sys_cfg;
  int rc = 0;
  {
    caf::actor_system sys{sys_cfg};
    watch::watch_config pods;
    pods.resource = {"", "v1", "pods", "", "", ""};
    watch::watch_config nodes;
    nodes.resource = {"", "v1", "nodes", "", "", ""};
    auto pods_watch = watch::spawn_watch<k8s::pod>(sys, cli, pods);
    auto nodes_watch = watch::spawn_watch<k8s::node>(sys, cli, nodes);
    auto logic = std::make_shared<extender_logic>(std::move(*core));
    auto actor = spawn_extender_actor(sys, cli, logic, pods_watch, nodes_watch);

    server_options sopts;
    sopts.address = listen->first;
    sopts.port = listen->second;
    extender_server server(make_actor_backend(actor), sopts);
    auto port = server.start();
    if (!port) {
      rc = fail(port.err().message);
    } else {
      spdlog::info("extender listening on {}:{} (config {})", sopts.address, *port, opts.config_path);
      if (opts.on_listening) opts.on_listening(*port);
      int sig = 0;
      sigwait(&stop_signals, &sig);
      spdlog::info("extender: signal {} received, stopping", sig);
    }
    server.stop();
    for (const auto& a : {actor, pods_watch, nodes_watch}) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  } // the actor system waits for its actors here
  cli.reset();
  return rc;
}

} // namespace kozmo::extender
