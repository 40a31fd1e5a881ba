// The embedded Kubernetes-compatible API server: plain HTTP/1.1 on loopback (Boost.Beast,
// hidden behind a pimpl), serving what `kubectl` 1.32 with its default validation needs
// (discovery, OpenAPI v3, CRUD, patch, watch, Table, protobuf bodies) over the object store.
//
//   kozmo::apiserver::server srv({.port = 0, .data_dir = "/var/lib/kozmo"});
//   auto port = srv.start();                       // expected<uint16_t>: the bound port
//   // kubectl --server srv.url() get pods
//   srv.apply_object(crd_json);                    // in-process create-or-update (e.g. CRDs at start)
//   srv.faults().fail_next(2, 429);                // fault injection for tests
//   srv.stop();
//
// Threading: the server runs its own io_context threads; every public member is thread-safe.
// A server is started once; stop() (also run by the destructor) closes every connection.
#pragma once

#include "k8s/apiserver/faults.hpp"
#include "k8s/apiserver/http_types.hpp"
#include "k8s/error.hpp"
#include "k8s/json/value.hpp"
#include "k8s/serve/limits.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace kozmo::apiserver {

class store;

class server {
public:
  // TLS and who may call, as kind's and k3s's API servers have it: without it the server speaks
  // plain HTTP to anyone (in-process tests, a host that puts its own front before it).
  //  - TLS with this certificate; client certificates the client CA signed authenticate, so
  //    does the bearer token;
  //  - everything else is 401 Unauthorized but GET /healthz, /livez, /readyz and /version;
  //  - the Host header must name the loopback address served (127.0.0.1, localhost, [::1],
  //    with the port or without): a page of another origin reached by DNS rebinding is refused;
  //  - a write's Content-Type must be JSON, YAML or protobuf (a browser's no-cors POST sends
  //    none or text/plain, without a preflight).
  struct security {
    std::string cert_pem;      // the serving certificate (chain)
    std::string key_pem;       // its key
    std::string client_ca_pem; // CA of the client certificates that authenticate
    std::string token;         // a bearer token that authenticates ("" = none)
  };

  struct options {
    std::string address = "127.0.0.1";
    std::uint16_t port = 0;                        // 0 = any free port
    std::string data_dir;                          // "" = state in memory only
    std::string pod_logs_dir;                      // pods/log reads here (pod_log_layout.hpp); "" = no logs
    std::size_t watch_history = 10000;             // events a watch can resume across
    std::chrono::seconds event_ttl{3600};          // Events expire this long after their last write; 0 = never
    std::size_t max_body_bytes = 3 * 1024 * 1024;  // larger bodies get 413
    std::chrono::seconds bookmark_interval{60};    // BOOKMARK cadence on watches that ask
    unsigned threads = 2;                          // io threads
    serve::limits limits;                          // connections, timeouts, head size (kube-apiserver's)
    std::optional<security> secure;                // TLS and authentication; nullopt = plain HTTP
  };

  server();
  explicit server(options opts);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  // Opens the store (loading data_dir) and listens. Returns the bound port.
  expected<std::uint16_t> start();
  // Closes the listener and every connection (open watches end without a final event).
  void stop();

  std::string url() const;  // "http://127.0.0.1:PORT", "https://..." when secure
  std::uint16_t port() const;
  // Connections held now (serve::limits::max_connections bounds them).
  std::size_t open_connections() const;
  fault_injector& faults();

  // ---- in-process API (kozmo local, tests) -------------------------------------------------
  // Creates the object, or merges it into the existing one (server-side apply semantics, as
  // PATCH application/apply-patch+yaml), going through the same validation as HTTP clients.
  // `obj` must carry apiVersion, kind and metadata.name (and metadata.namespace when
  // namespaced; "default" if absent). Returns the stored object (with kind/apiVersion).
  // Typical use: register CRDs before controllers start. Requires start().
  expected<json::value> apply_object(const json::value& obj);
  // Serves one non-watch request in process, exactly as over HTTP (no faults, no latency).
  http_response handle(const http_request& req);
  // The object store (valid after a successful start(), until destruction).
  store& object_store();

  // ---- extra routes (e.g. the GPU scheduler's /v1/inspect/ in kozmo local) ------------------
  struct route_reply {
    int status = 200;
    std::string body;
    std::string content_type = "application/json";
  };
  // How a handler answers: once, now or later, from any thread (an actor's, a timer's). Calls
  // after the first, after the route's deadline, after the client went away or after stop() are
  // ignored.
  using route_reply_fn = std::function<void(route_reply)>;
  // (method, path without the query, body, reply). Runs on a server io thread, so it must not
  // block: it hands the request on (to an actor, say) and returns; the answer goes to `reply`.
  using route_handler = std::function<void(const std::string& method, const std::string& path,
                                           const std::string& body, route_reply_fn reply)>;
  struct route {
    route_handler handler;
    // No reply by then: the client gets `late` instead (the connection holds no thread while it
    // waits, only a timer).
    std::chrono::milliseconds deadline{10000};
    route_reply late{503, R"({"code":503,"message":"the handler did not answer in time"})"};
    // GET and HEAD are served without a credential (the Host check still applies): for files
    // that hold no data, such as the cell map page, which a browser opens without a token.
    bool public_reads = false;
  };
  // Requests whose path starts with `prefix` go to the route instead of the Kubernetes API.
  // Thread-safe, callable before or after start(); the same prefix again replaces the route, an
  // empty handler removes it.
  void add_route(std::string prefix, route r);

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace kozmo::apiserver
