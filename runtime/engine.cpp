#include "runtime/engine.hpp"

#include "actors/binder/binder_actor.hpp"
#include "actors/kubelet/kubelet_actor.hpp"
#include "actors/watch/object_traits.hpp"
#include "actors/watch/watch_actor.hpp"
#include "k8s/apiserver/server.hpp"
#include "k8s/client/client.hpp"
#include "runtime/demo.hpp"

#include <caf/all.hpp>
#include <cstdlib>
#include <filesystem>
#include <spdlog/spdlog.h>

namespace kozmo {

struct engine::impl {
  engine_options opts;
  std::unique_ptr<apiserver::server> server;
  std::shared_ptr<client::client> cli;
  std::unique_ptr<caf::actor_system_config> cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::vector<caf::actor> actors;
  bool started = false;

  status connect() {
    client::config ccfg;
    if (opts.embedded_apiserver) {
      apiserver::server::options sopts;
      sopts.port = opts.port;
      sopts.data_dir = opts.data_dir;
      server = std::make_unique<apiserver::server>(sopts);
      auto port = server->start();
      if (!port)
        return error{"cannot start the API server: " + port.err().message};
      ccfg.server = server->url();
      // Loopback to our own server: the limit only guards against runaway loops.
      ccfg.qps = 2000;
      ccfg.burst = 4000;
    } else if (!opts.server_url.empty()) {
      ccfg.server = opts.server_url;
    } else if (opts.kubeconfig.empty() && std::getenv("KUBERNETES_SERVICE_HOST") &&
               !std::filesystem::exists(client::default_kubeconfig_path())) {
      // Inside a pod with no kubeconfig: the service account, as client-go does.
      auto loaded = client::in_cluster_config();
      if (!loaded)
        return loaded.err();
      ccfg = *loaded;
    } else {
      auto path = opts.kubeconfig.empty() ? client::default_kubeconfig_path() : opts.kubeconfig;
      auto loaded = client::load_kubeconfig(path);
      if (!loaded)
        return loaded.err();
      ccfg = *loaded;
    }
    if (opts.client_qps > 0) {
      ccfg.qps = opts.client_qps;
      ccfg.burst = static_cast<int>(opts.client_qps * 2);
    }
    ccfg.user_agent = "kozmo/0.1";
    cli = std::make_shared<client::client>(ccfg);
    return ok;
  }

  void spawn_actors() {
    bool need_nodes_watch = opts.binder || opts.demo;
    if (opts.nodes.nodes.empty() && !need_nodes_watch)
      return;
    watch::watch_config pods;
    pods.resource = {"", "v1", "pods", "", "", ""};
    auto pods_watch = watch::spawn_watch<k8s::pod>(*sys, cli, pods);
    actors.push_back(pods_watch);
    caf::actor nodes_watch;
    if (need_nodes_watch) {
      watch::watch_config nodes;
      nodes.resource = {"", "v1", "nodes", "", "", ""};
      nodes_watch = watch::spawn_watch<k8s::node>(*sys, cli, nodes);
      actors.push_back(nodes_watch);
    }
    if (opts.binder)
      actors.push_back(binder::spawn_binder(*sys, cli, pods_watch, nodes_watch));
    for (const auto& node : opts.nodes.nodes) {
      kubelet::kubelet_config kc;
      kc.node = node;
      actors.push_back(kubelet::spawn_kubelet(*sys, cli, pods_watch, kc));
    }
    if (opts.demo)
      actors.push_back(runtime::spawn_demo(*sys, cli, pods_watch, nodes_watch));
  }
};

engine::engine(engine_options opts) : impl_(std::make_unique<impl>()) { impl_->opts = std::move(opts); }

engine::~engine() { stop(); }

status engine::start() {
  auto& d = *impl_;
  if (d.started)
    return ok;
  if (auto st = d.connect(); !st)
    return st;
  d.cfg = std::make_unique<caf::actor_system_config>();
  d.sys = std::make_unique<caf::actor_system>(*d.cfg);
  d.spawn_actors();
  d.started = true;
  return ok;
}

void engine::stop() {
  auto& d = *impl_;
  if (!d.started)
    return;
  d.started = false;
  for (auto& a : d.actors)
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  d.actors.clear();
  d.sys.reset(); // waits for every actor to finish
  d.cfg.reset();
  d.cli.reset(); // after the actors: they hold the client
  if (d.server)
    d.server->stop();
}

std::string engine::url() const {
  if (impl_->server)
    return impl_->server->url();
  return impl_->cli ? impl_->cli->cfg().server : std::string();
}

std::shared_ptr<client::client> engine::api() const { return impl_->cli; }

caf::actor_system& engine::system() { return *impl_->sys; }

} // namespace kozmo
