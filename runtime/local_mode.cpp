#include "runtime/local_mode.hpp"

#include "actors/binder/binder_actor.hpp"
#include "actors/kubelet/kubelet_actor.hpp"
#include "actors/watch/object_traits.hpp"
#include "actors/watch/watch_actor.hpp"
#include "k8s/apiserver/server.hpp"
#include "k8s/client/client.hpp"
#include "runtime/demo.hpp"
#include "runtime/logging.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>

namespace kozmo::runtime {
namespace {

// Blocks SIGINT/SIGTERM in every thread started from here on, so that `wait_for_signal`
// (sigwait on the main thread) is the one place that receives them.
sigset_t block_shutdown_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

int wait_for_signal(const sigset_t& set) {
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

status write_kubeconfig(const std::string& path, const std::string& url) {
  std::ofstream out(path);
  if (!out)
    return error::bad_request("--write-kubeconfig: cannot write " + path);
  out << "apiVersion: v1\n"
         "kind: Config\n"
         "clusters:\n"
         "- name: kozmo-local\n"
         "  cluster:\n"
         "    server: " << url << "\n"
         "contexts:\n"
         "- name: kozmo-local\n"
         "  context:\n"
         "    cluster: kozmo-local\n"
         "    user: kozmo-local\n"
         "    namespace: default\n"
         "current-context: kozmo-local\n"
         "users:\n"
         "- name: kozmo-local\n"
         "  user: {}\n";
  out.close();
  if (!out)
    return error::bad_request("--write-kubeconfig: cannot write " + path);
  return ok;
}

expected<kubelet::cluster_shape> load_shape(const std::string& file, int nodes, int gpus,
                                            const std::string& prefix) {
  if (file.empty())
    return kubelet::uniform_cluster(nodes, gpus, prefix);
  std::ifstream in(file);
  if (!in)
    return error::bad_request("--cluster: cannot read " + file);
  std::stringstream text;
  text << in.rdbuf();
  return kubelet::parse_cluster_yaml(text.str());
}

// The actors of one process: watches, simulated kubelets, the binder.
struct actor_set {
  caf::actor pods_watch;
  caf::actor nodes_watch;
  std::vector<caf::actor> all;

  void stop() {
    for (auto& a : all)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }
};

actor_set start_node_actors(caf::actor_system& sys, const std::shared_ptr<client::client>& cli,
                            const kubelet::cluster_shape& shape, bool with_binder) {
  actor_set set;
  watch::watch_config pods;
  pods.resource = {"", "v1", "pods", "", "", ""};
  set.pods_watch = watch::spawn_watch<k8s::pod>(sys, cli, pods);
  set.all.push_back(set.pods_watch);
  if (with_binder) {
    watch::watch_config nodes;
    nodes.resource = {"", "v1", "nodes", "", "", ""};
    set.nodes_watch = watch::spawn_watch<k8s::node>(sys, cli, nodes);
    set.all.push_back(set.nodes_watch);
    set.all.push_back(binder::spawn_binder(sys, cli, set.pods_watch, set.nodes_watch));
  }
  for (const auto& node : shape.nodes) {
    kubelet::kubelet_config cfg;
    cfg.node = node;
    set.all.push_back(kubelet::spawn_kubelet(sys, cli, set.pods_watch, cfg));
  }
  return set;
}

} // namespace

int run_local(const local_options& opts) {
  if (auto st = setup_logging(opts.log_level); !st) {
    std::cerr << "kozmo: " << st.err().message << "\n";
    return 2;
  }
  auto shape = load_shape(opts.cluster_file, opts.nodes, opts.gpus_per_node, "node");
  if (!shape) {
    std::cerr << "kozmo: " << shape.err().message << "\n";
    return 2;
  }
  auto signals = block_shutdown_signals();

  apiserver::server::options sopts;
  sopts.port = opts.port;
  sopts.data_dir = opts.data_dir;
  apiserver::server server(sopts);
  auto port = server.start();
  if (!port) {
    std::cerr << "kozmo: cannot start the API server: " << port.err().message << "\n";
    return 1;
  }
  std::string url = server.url();
  if (!opts.write_kubeconfig.empty()) {
    if (auto st = write_kubeconfig(opts.write_kubeconfig, url); !st) {
      std::cerr << "kozmo: " << st.err().message << "\n";
      return 2;
    }
  }
  std::cout << "kozmo local: API server at " << url << "\n";
  if (!opts.write_kubeconfig.empty())
    std::cout << "kozmo local: kubectl --kubeconfig " << opts.write_kubeconfig << " get nodes\n";
  else
    std::cout << "kozmo local: kubectl --server " << url << " get nodes\n";
  std::cout << "kozmo local: " << shape->nodes.size() << " simulated node(s); Ctrl-C stops\n" << std::flush;

  client::config ccfg;
  ccfg.server = url;
  ccfg.qps = 2000; // loopback to our own server: the limit only guards against runaway loops
  ccfg.burst = 4000;
  ccfg.user_agent = "kozmo-local/0.1";
  auto cli = std::make_shared<client::client>(ccfg);
  int code = 0;
  {
    caf::actor_system_config cfg;
    caf::actor_system sys{cfg};
    auto actors = start_node_actors(sys, cli, *shape, true);
    caf::actor demo;
    if (opts.demo)
      demo = spawn_demo(sys, cli, actors.pods_watch, actors.nodes_watch);
    int sig = wait_for_signal(signals);
    std::cout << "\nkozmo local: " << (sig == SIGINT ? "interrupted" : "terminated") << ", shutting down\n"
              << std::flush;
    if (demo)
      caf::anon_send_exit(demo, caf::exit_reason::user_shutdown);
    actors.stop();
  } // the actor system waits for its actors here
  cli.reset();
  server.stop();
  return code;
}

int run_kubelet(const kubelet_options& opts) {
  if (auto st = setup_logging(opts.log_level); !st) {
    std::cerr << "kozmo: " << st.err().message << "\n";
    return 2;
  }
  auto shape = load_shape(opts.cluster_file, opts.nodes, opts.gpus_per_node, opts.node_prefix);
  if (!shape) {
    std::cerr << "kozmo: " << shape.err().message << "\n";
    return 2;
  }
  std::string path = opts.kubeconfig.empty() ? client::default_kubeconfig_path() : opts.kubeconfig;
  auto ccfg = client::load_kubeconfig(path);
  if (!ccfg) {
    std::cerr << "kozmo: " << ccfg.err().message << "\n";
    return 2;
  }
  auto signals = block_shutdown_signals();
  auto cli = std::make_shared<client::client>(*ccfg);
  {
    caf::actor_system_config cfg;
    caf::actor_system sys{cfg};
    auto actors = start_node_actors(sys, cli, *shape, false);
    spdlog::info("kubelet simulating {} node(s) against {}", shape->nodes.size(), ccfg->server);
    wait_for_signal(signals);
    actors.stop();
  }
  cli.reset();
  return 0;
}

int run_apiserver(const apiserver_options& opts) {
  if (auto st = setup_logging(opts.log_level); !st) {
    std::cerr << "kozmo: " << st.err().message << "\n";
    return 2;
  }
  auto signals = block_shutdown_signals();
  apiserver::server::options sopts;
  sopts.port = opts.port;
  sopts.data_dir = opts.data_dir;
  apiserver::server server(sopts);
  auto port = server.start();
  if (!port) {
    std::cerr << "kozmo: cannot start the API server: " << port.err().message << "\n";
    return 1;
  }
  std::cout << "kozmo apiserver: serving at " << server.url() << "\n" << std::flush;
  wait_for_signal(signals);
  server.stop();
  return 0;
}

} // namespace kozmo::runtime
