// The engine's HTTP front: Kozmo's routes on the embedded server's port, and the metrics, probe
// and extender addresses (each its own server), all answering through one local_backend.
#include "runtime/engine_http.hpp"
#include "runtime/engine_impl.hpp"

#include "actors/extender/delegated_auth.hpp"
#include "actors/extender/extender_server.hpp"
#include "k8s/apiserver/fault_route.hpp"
#include "runtime/serving_identity.hpp"
#include "ui/ui_assets.hpp"

#include <spdlog/spdlog.h>

namespace kozmo {
namespace {

// The metrics address's certificate: the files given, else self-signed.
expected<extender::tls_options> metrics_identity(const engine_options& o) {
  return runtime::serving_identity_files(o.serving.tls_cert_file, o.serving.tls_key_file, "metrics");
}

} // namespace

void engine::impl::add_embedded_routes() {
  if (opts.api.fault_injection)
    server->add_route("/debug/faults", {[srv = server.get()](const std::string& method, const std::string&,
                                                              const std::string& body, auto reply) {
                                          reply(apiserver::fault_route(srv->faults(), method, body));
                                        }});
  apiserver::server::route kozmo_api;
  kozmo_api.handler = [h = http](const std::string& method, const std::string& path, const std::string& body,
                                 apiserver::server::route_reply_fn reply) {
    h->answer(method, path, body, std::move(reply));
  };
  kozmo_api.late = {503, json::dump(json::object{{"code", 503}, {"message", "the scheduler did not answer"}})};
  for (const char* prefix : {"/metrics", "/v1/inspect/"})
    server->add_route(prefix, kozmo_api);
  apiserver::server::route page;
  page.handler = [](const std::string& method, const std::string& path, const std::string&,
                    apiserver::server::route_reply_fn reply) {
    auto a = ui::serve(method, path);
    reply({a.status, std::string(a.body), std::string(a.content_type)});
  };
  page.public_reads = true;
  server->add_route("/ui/", std::move(page));
}

// /metrics and inspect on one address, the probes on another (not with the embedded server,
// whose own port carries them).
status engine::impl::serve_http() {
  auto serve = [&](const std::string& address, std::vector<extender::route_kind> routes,
                   std::unique_ptr<extender::extender_server>& out, const char* what,
                   std::optional<extender::tls_options> tls) -> status {
    if (address.empty())
      return ok;
    auto listen = extender::parse_listen(address);
    if (!listen)
      return error::bad_request(std::string(what) + ": " + listen.err().message);
    extender::server_options so;
    so.address = listen->first;
    so.port = listen->second;
    so.routes = std::move(routes);
    so.backend_timeout = std::chrono::seconds(10);
    if (tls) {
      so.tls = std::move(*tls);
      so.authorize = extender::delegated_access(cli);
    }
    out = std::make_unique<extender::extender_server>(http, so);
    if (auto port = out->start(); !port)
      return error::bad_request(std::string(what) + " " + address + ": " + port.err().message);
    return ok;
  };
  using rk = extender::route_kind;
  std::optional<extender::tls_options> metrics_tls;
  if (opts.serving.metrics_secure && !opts.serving.metrics_address.empty()) {
    auto tls = metrics_identity(opts);
    if (!tls)
      return tls.err();
    metrics_tls = std::move(*tls);
  }
  if (auto st = serve(opts.serving.metrics_address, {rk::metrics, rk::inspect, rk::ui}, metrics_server, "metrics address",
                     std::move(metrics_tls)); !st)
    return st;
  if (auto st = serve(opts.serving.probe_address, {rk::healthz, rk::readyz}, probe_server, "health probe address", {});
      !st)
    return st;
  if (!opts.extender.address.empty()) {
    std::optional<extender::tls_options> tls;
    if (!opts.extender.insecure) {
      auto id = runtime::serving_identity(opts.extender.cert_pem, opts.extender.key_pem, "the extender verbs");
      if (!id)
        return id.err();
      id->client_ca_pem = opts.extender.client_ca_pem;
      tls = std::move(*id);
    }
    http->set_extender(nullptr, error{opts.leader_election.enabled ? "this replica stands by (leader election): the "
                                                                     "leader answers kube-scheduler"
                                                                   : "the scheduler is starting",
                                      503, "ServiceUnavailable"});
    if (auto st = serve(opts.extender.address, {rk::filter, rk::preempt, rk::bind}, extender_server,
                        "scheduler.extender.bindAddress", std::move(tls));
        !st)
      return st;
    if (opts.extender.insecure)
      spdlog::warn("http: kube-scheduler's extender verbs on {} over plain HTTP, for anyone who can reach it "
                   "(scheduler.extender.insecure)",
                   opts.extender.address);
  }
  http->set_readiness([this]() -> std::string {
    std::lock_guard lock(lead_mu);
    if (!start_failure.empty())
      return "the controllers could not start: " + start_failure;
    if (!opts.leader_election.enabled && !leading)
      return "starting";
    if (leading && scheduler_ready && !scheduler_ready->load())
      return "the scheduler is reading the cluster's nodes and pods (placements are recovered from bind-info)";
    return {};
  });
  return ok;
}

void engine::impl::stop_http() {
  for (auto* srv : {&metrics_server, &probe_server, &extender_server})
    if (*srv)
      (*srv)->stop();
}

} // namespace kozmo
