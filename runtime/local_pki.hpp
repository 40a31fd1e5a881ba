// The credentials of an embedded API server (`kozmo local`, `kozmo apiserver`, a host's
// engine), as kind and k3s make theirs: a CA, the server's certificate for the loopback
// addresses, an admin client certificate (CN kozmo-admin, O system:masters) and a bearer token.
// With a data directory they are made once and kept in <dir>/pki (keys and token 0600), so a
// kubeconfig written before a restart keeps working; without one they are made at every start.
#pragma once

#include "k8s/error.hpp"
#include "k8s/serve/pki.hpp"

#include <string>

namespace kozmo::runtime {

struct local_credentials {
  serve::pem_identity ca;
  serve::pem_identity server;
  serve::pem_identity admin;
  std::string token; // 64 hex digits
};

// Loads <dir>/pki when it holds a complete, consistent set; otherwise makes one (and, with a
// `dir`, saves it there). "" = in memory only.
expected<local_credentials> local_credentials_in(const std::string& dir);

// A kubeconfig (YAML) for `url` with the CA and the admin certificate inline, and the token
// (for curl and Prometheus: `kubectl config view --raw -o jsonpath='{.users[0].user.token}'`);
// context and user named `name`, namespace default.
std::string local_kubeconfig(const std::string& url, const local_credentials& c, const std::string& name = "kozmo-local");

} // namespace kozmo::runtime
