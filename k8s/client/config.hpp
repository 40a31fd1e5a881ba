// How to reach and authenticate to a Kubernetes API server.
//
// A `config` is plain data, filled from a kubeconfig file, from the service-account files a
// pod sees, or by hand (tests, `kozmo local`). It is read once when a `client` is built.
#pragma once

#include "k8s/error.hpp"

#include <chrono>
#include <string>
#include <string_view>

namespace kozmo::client {

struct config {
  // "https://host:port" or "http://host:port" (port defaults to 443 / 80). An optional path
  // prefix is kept ("https://proxy/k8s" sends "/k8s/api/v1/...").
  std::string server;
  // Bearer token; empty for none.
  std::string token;
  // PEM text of the CA bundle that signs the server certificate; empty = system roots.
  std::string ca_pem;
  // PEM text of a client certificate (chain) and its private key, for mutual TLS.
  std::string client_cert_pem;
  std::string client_key_pem;
  bool insecure_skip_tls_verify = false;
  // Name to send as SNI and to check the server certificate against, instead of the host
  // part of `server` (kubeconfig `tls-server-name`).
  std::string tls_server_name;
  // Client-side rate limit of non-watch requests (token bucket, like client-go). qps <= 0
  // disables it.
  double qps = 50;
  int burst = 100;
  std::string user_agent = "kozmo/0.1";
  std::string default_namespace = "default";
  // Per attempt: connecting, sending and receiving the whole response. Watches use it only
  // for connecting.
  std::chrono::milliseconds request_timeout{30000};
  // Retries after the first attempt (0 = never retry).
  int max_retries = 5;

  // Additions beyond the original contract (all optional):
  // Exponential back-off between retries: base, doubled per retry, capped (jitter added).
  std::chrono::milliseconds retry_backoff_base{100};
  std::chrono::milliseconds retry_backoff_cap{5000};
  // When set, the bearer token is read from this file and re-read once a minute, so rotated
  // service-account tokens keep working; `token` is then only the initial value.
  std::string token_file;
  // Non-watch requests on the wire at once, hence keep-alive connections open at once
  // (0 = unlimited). Further requests wait, in order, for one to finish: a burst of thousands
  // of async requests then reuses warm connections instead of opening (and, past the idle
  // pool, closing) one TCP connection per request. Watches do not count.
  int max_connections = 64;
};

// Loads `context` (or the current-context when empty) from the kubeconfig at `path`.
// Relative file references resolve against the kubeconfig's directory. Errors read like
// `kubeconfig /x: context "foo" not found`.
expected<config> load_kubeconfig(const std::string& path, const std::string& context = "");

// The kubeconfig to use: the first existing file named by $KUBECONFIG (a ':'-separated list;
// files are not merged), else $HOME/.kube/config. Empty when neither variable gives a path.
std::string default_kubeconfig_path();

// The cluster to talk to, found as kubectl and client-go find it: `explicit_path` when given,
// else the file default_kubeconfig_path() names, else (inside a pod, when that file does not
// exist) the service account. The one place every sub-command chooses its cluster.
expected<config> discover_config(const std::string& explicit_path = "");

// Configuration from inside a pod: KUBERNETES_SERVICE_HOST/PORT and the mounted service
// account token, CA and namespace.
expected<config> in_cluster_config(
    const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// Decodes standard base64 (padding optional, whitespace ignored); an error when the text is
// not base64.
expected<std::string> base64_decode(std::string_view text);

} // namespace kozmo::client
