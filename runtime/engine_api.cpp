// Where the engine's Kubernetes API is: the embedded server it starts (with its credentials,
// the process runtime's work directory and Kozmo's routes), a kubeconfig, or a URL; and the
// client every actor shares.
#include "runtime/engine_http.hpp"
#include "runtime/engine_impl.hpp"

#include "k8s/apiserver/pod_log_layout.hpp"
#include "k8s/client/client.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unistd.h>

namespace kozmo {

status engine::impl::make_work_dir() {
  if (!opts.api.embedded || opts.parts.nodes.empty())
    return ok;
  work_dir = !opts.parts.work_dir.empty() ? opts.parts.work_dir : opts.api.data_dir;
  if (work_dir.empty()) {
    std::error_code tmp_ec;
    std::filesystem::path tmp = std::filesystem::temp_directory_path(tmp_ec);
    std::string pattern = (tmp_ec ? std::filesystem::path("/tmp") : tmp).string() + "/kozmo-local.XXXXXX";
    if (!::mkdtemp(pattern.data()))
      return error{"cannot create a work directory " + pattern + ": " + std::strerror(errno)};
    work_dir = pattern;
    remove_work_dir = true;
  }
  std::error_code ec;
  std::filesystem::create_directories(pod_logs::pod_logs_root(work_dir), ec);
  if (ec)
    return error{"cannot create " + pod_logs::pod_logs_root(work_dir) + ": " + ec.message()};
  return ok;
}

status engine::impl::connect() {
  client::config ccfg;
  http = std::make_shared<local_backend>();
  if (opts.api.embedded) {
    if (auto st = make_work_dir(); !st)
      return st;
    apiserver::server::options sopts;
    if (opts.api.secure) {
      auto made = runtime::local_credentials_in(opts.api.data_dir);
      if (!made)
        return error{"cannot make the API server's certificates: " + made.err().message};
      credentials = std::move(*made);
      sopts.secure = apiserver::server::security{credentials->server.cert_pem, credentials->server.key_pem,
                                                 credentials->ca.cert_pem, credentials->token};
      ccfg.ca_pem = credentials->ca.cert_pem;
      ccfg.client_cert_pem = credentials->admin.cert_pem;
      ccfg.client_key_pem = credentials->admin.key_pem;
    }
    sopts.port = opts.api.port;
    sopts.data_dir = opts.api.data_dir;
    if (!work_dir.empty())
      sopts.pod_logs_dir = pod_logs::pod_logs_root(work_dir);
    sopts.event_ttl = std::chrono::seconds(opts.api.event_ttl_seconds);
    server = std::make_unique<apiserver::server>(sopts);
    auto port = server->start();
    if (!port)
      return error{"cannot start the API server: " + port.err().message};
    ccfg.server = server->url();
    add_embedded_routes();
    // Loopback to our own server: the limit only guards against runaway loops.
    ccfg.qps = 2000;
    ccfg.burst = 4000;
  } else if (!opts.api.server_url.empty()) {
    ccfg.server = opts.api.server_url;
  } else {
    auto loaded = client::discover_config(opts.api.kubeconfig);
    if (!loaded)
      return loaded.err();
    ccfg = *loaded;
  }
  if (opts.performance.client_qps > 0) {
    ccfg.qps = opts.performance.client_qps;
    ccfg.burst = opts.performance.client_burst > 0 ? opts.performance.client_burst : static_cast<int>(opts.performance.client_qps * 2);
  }
  if (opts.performance.client_connections > 0)
    ccfg.max_connections = opts.performance.client_connections;
  ccfg.user_agent = "kozmo/0.1";
  cli = std::make_shared<client::client>(ccfg);
  return ok;
}

} // namespace kozmo
