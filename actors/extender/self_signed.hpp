// A self-signed serving certificate, made at start when --secure-serving is on and no
// certificate is given (as controller-runtime's and kube-apiserver's secure serving do): an
// ECDSA P-256 key and an X.509 v3 certificate valid for a year from an hour ago, for the host
// names and IP addresses given (subjectAltName), signed with SHA-256. Pure OpenSSL, no Beast.
#pragma once

#include "k8s/error.hpp"

#include <string>
#include <vector>

namespace kozmo::extender {

struct pem_identity {
  std::string cert_pem;
  std::string key_pem;
};

// `client`: a certificate for TLS client authentication (extended key usage clientAuth) instead of
// a serving one (serverAuth).
expected<pem_identity> self_signed_identity(const std::string& common_name, const std::vector<std::string>& dns_names,
                                            const std::vector<std::string>& ip_addresses, bool client = false);

} // namespace kozmo::extender
