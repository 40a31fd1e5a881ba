#include "runtime/local_mode.hpp"

#include "k8s/serve/limits.hpp"
#include "runtime/config_file.hpp"
#include "runtime/engine_internal.hpp"
#include "runtime/environment.hpp"
#include "runtime/hived_shape.hpp"
#include "runtime/logging.hpp"
#include "runtime/signals.hpp"

#include <spdlog/spdlog.h>

#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

namespace kozmo::runtime {
namespace {

// The embedded server's kubeconfig, private to its owner (it holds the admin's key).
status write_kubeconfig(const std::string& path, const std::string& text) {
  {
    std::ofstream out(path, std::ios::trunc);
    out << text;
    if (!out)
      return error::bad_request("--write-kubeconfig: cannot write " + path);
  }
  ::chmod(path.c_str(), 0600);
  return ok;
}

// The simulated nodes, and the GPU scheduler's HiveD configuration: the file itself when
// --cluster names a HiveD config, otherwise one derived from the shape (hived_shape.hpp).
struct local_cluster {
  kubelet::cluster_shape shape;
  std::string hived_config;
  bool derived = false;
  bool from_labels = false; // hived_config is empty: the scheduler follows the nodes' labels
};

expected<local_cluster> load_cluster(const std::string& file, int nodes, int gpus, const std::string& prefix) {
  local_cluster out;
  if (file.empty()) {
    out.shape = kubelet::uniform_cluster(nodes, gpus, prefix);
  } else {
    std::ifstream in(file);
    if (!in)
      return error::bad_request("--cluster: cannot read " + file);
    std::stringstream text;
    text << in.rdbuf();
    if (is_hived_config(text.str())) {
      auto shape = shape_from_hived_config(text.str());
      if (!shape)
        return shape.err();
      out.shape = std::move(*shape);
      out.hived_config = text.str();
      return out;
    }
    auto shape = kubelet::parse_cluster_yaml(text.str());
    if (!shape)
      return shape.err();
    out.shape = std::move(*shape);
  }
  out.derived = true;
  // Nodes labelled with a default topology level (zone, rack, clique): no configuration is
  // given, so the scheduler derives the cells from the nodes' labels and follows them
  // (`kubectl label node` re-derives). Otherwise the shape's configuration, fixed.
  out.from_labels = carries_topology_labels(out.shape, scheduler::default_levels());
  if (!out.from_labels)
    out.hived_config = hived_config_from_shape(out.shape);
  return out;
}

expected<kubelet::cluster_shape> load_shape(const std::string& file, int nodes, int gpus,
                                            const std::string& prefix) {
  auto cluster = load_cluster(file, nodes, gpus, prefix);
  if (!cluster)
    return cluster.err();
  return std::move(cluster->shape);
}

engine_options embedded_server(std::uint16_t port, const std::string& data_dir, std::int64_t event_ttl_seconds) {
  engine_options eo;
  eo.api.embedded = true;
  eo.api.port = port;
  eo.api.data_dir = data_dir;
  eo.api.event_ttl_seconds = event_ttl_seconds;
  return eo;
}

// The life of every engine-backed sub-command: start, say what runs (a non-zero answer from
// `started` is the exit code), wait for SIGINT/SIGTERM, stop. A failed start prints why and
// exits with `start_failure`.
// The options with what the environment says ($KOZMO_WORKERS, $POD_NAMESPACE); an error is
// printed, as a failed start's would be.
bool from_environment(engine_options& eo) {
  if (auto st = apply_environment(eo); !st) {
    std::cerr << "kozmo: " << st.err().message << "\n";
    return false;
  }
  return true;
}

int run_engine(engine& e, const shutdown_signals& signals, int start_failure, const std::function<int()>& started,
               const std::function<void(int)>& stopping = {}) {
  if (auto st = e.start(); !st) {
    std::cerr << "kozmo: " << st.err().message << "\n";
    return start_failure;
  }
  if (int rc = started(); rc != 0)
    return rc;
  int sig = signals.wait();
  if (stopping)
    stopping(sig);
  e.stop();
  return 0;
}

} // namespace

int run_local(const local_options& opts) {
  if (!start_logging(opts.log_level))
    return 2;
  // A shell's default soft limit (1024) is what a flood of connections exhausts first.
  serve::raise_open_file_limit();
  auto cluster = load_cluster(opts.cluster_file, opts.nodes, opts.gpus_per_node, "node");
  if (!cluster) {
    std::cerr << "kozmo: " << cluster.err().message << "\n";
    return 2;
  }
  auto config = load_config_file(opts.config_file);
  if (!config) {
    std::cerr << "kozmo: " << config.err().message << "\n";
    return 2;
  }
  const auto* shape = &cluster->shape;
  shutdown_signals signals;
  auto eo = embedded_server(opts.port, opts.data_dir, opts.event_ttl_seconds);
  eo.parts.nodes = simulated_nodes(*shape);
  eo.parts.kubelet_runtime = opts.runtime;
  eo.parts.allow_process_runtime = opts.allow_process_runtime;
  eo.parts.process_user = opts.process_user;
  eo.api.fault_injection = opts.fault_injection;
  eo.parts.binder = true;
  eo.parts.volume_binder = true;
  eo.parts.quota = true;
  eo.parts.scheduler_config = cluster->hived_config;
  eo.parts.scheduler_from_nodes = cluster->from_labels;
  eo.parts.demo = opts.demo;
  eo.parts.training = true; // every training job kind; their CRDs are installed at start
  eo.parts.tasks = true;    // TaskExecution, ResourcePool
  eo.parts.count_other_pods = config->scheduler.count_other_pods;
  eo.parts.task_platform = config->tasks_section;
  eo.parts.training_max_replicas = config->training.default_max_replicas;
  eo.parts.training_max_replicas_by_kind = config->training.max_replicas;
  if (!from_environment(eo))
    return 1;
  engine e(eo);
  auto announce = [&]() -> int {
    std::string url = e.url();
    if (!opts.write_kubeconfig.empty()) {
      if (auto st = write_kubeconfig(opts.write_kubeconfig, e.kubeconfig()); !st) {
        std::cerr << "kozmo: " << st.err().message << "\n";
        return 2;
      }
    }
    std::cout << "kozmo local: API server at " << url << "\n";
    if (!opts.write_kubeconfig.empty())
      std::cout << "kozmo local: kubectl --kubeconfig " << opts.write_kubeconfig << " get nodes\n";
    else
      std::cout << "kozmo local: TLS, and callers must authenticate: --write-kubeconfig PATH writes the "
                   "credentials kubectl needs\n";
    int gpus = 0;
    for (const auto& n : shape->nodes)
      gpus += n.gpus;
    std::cout << "kozmo local: GPU scheduler for schedulerName: " << eo.parts.scheduler_name << " ("
              << (cluster->from_labels ? "cells derived from the nodes' topology labels, following them"
                  : cluster->derived   ? "configuration derived from the cluster shape"
                                   : "HiveD configuration " + opts.cluster_file)
              << "), inspect at " << url << "/v1/inspect/clusterstatus\n";
    const std::string token = e.bearer_token();
    std::cout << "kozmo local: cell map at " << url << "/ui/" << (token.empty() ? "" : "#token=" + token)
              << (token.empty() ? "" : " (the address carries the admin token; or run `kubectl proxy` and open "
                                       "http://127.0.0.1:8001/ui/)")
              << "\n";
    std::cout << "kozmo local: " << shape->nodes.size() << " simulated node(s), " << gpus << " GPU(s)"
              << (opts.runtime == "process" ? ", pods run as local processes (--runtime process)" : "")
              << "; Ctrl-C stops\n"
              << std::flush;
    return 0;
  };
  return run_engine(e, signals, 1, announce, [](int sig) {
    std::cout << "\nkozmo local: " << (sig == SIGINT ? "interrupted" : "terminated") << ", shutting down\n"
              << std::flush;
  });
}

int run_kubelet(const kubelet_options& opts) {
  if (!start_logging(opts.log_level))
    return 2;
  auto shape = load_shape(opts.cluster_file, opts.nodes, opts.gpus_per_node, opts.node_prefix);
  if (!shape) {
    std::cerr << "kozmo: " << shape.err().message << "\n";
    return 2;
  }
  shutdown_signals signals;
  engine_options eo;
  eo.api.kubeconfig = opts.kubeconfig;
  eo.parts.nodes = simulated_nodes(*shape);
  eo.parts.training = opts.training;
  eo.parts.mpi_kubectl_delivery_image = opts.mpi_kubectl_delivery_image;
  eo.performance.client_qps = opts.kube_api_qps;
  eo.performance.client_burst = opts.kube_api_burst;
  if (!from_environment(eo))
    return 2;
  engine e(eo);
  return run_engine(e, signals, 2, [&] {
    spdlog::info("kubelet simulating {} node(s) against {}", shape->nodes.size(), e.url());
    return 0;
  });
}

int run_apiserver(const apiserver_options& opts) {
  if (!start_logging(opts.log_level))
    return 2;
  serve::raise_open_file_limit();
  shutdown_signals signals;
  auto eo = embedded_server(opts.port, opts.data_dir, opts.event_ttl_seconds);
  if (!from_environment(eo))
    return 1;
  engine e(eo);
  return run_engine(e, signals, 1, [&] {
    if (!opts.write_kubeconfig.empty())
      if (auto st = write_kubeconfig(opts.write_kubeconfig, e.kubeconfig()); !st) {
        std::cerr << "kozmo: " << st.err().message << "\n";
        return 2;
      }
    std::cout << "kozmo apiserver: serving at " << e.url() << "\n" << std::flush;
    return 0;
  });
}

} // namespace kozmo::runtime
