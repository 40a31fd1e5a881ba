// The certificate a Kozmo HTTP server presents: the PEM given, or a self-signed one made at
// start for this host, loopback and deploy/'s metrics Service (as controller-runtime's and
// kube-apiserver's secure serving do without files).
#pragma once

#include "actors/extender/extender_server.hpp"
#include "k8s/error.hpp"

#include <string>

namespace kozmo::runtime {

// `what` names the server in the log line that says a certificate was made.
expected<extender::tls_options> serving_identity(std::string cert_pem, std::string key_pem, const char* what);

// The same from files (the flags' names in errors): --tls-cert-file and --tls-private-key-file.
// Both empty: self-signed.
expected<extender::tls_options> serving_identity_files(const std::string& cert_file, const std::string& key_file,
                                                       const char* what);

} // namespace kozmo::runtime
