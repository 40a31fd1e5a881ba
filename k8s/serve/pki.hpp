// Certificates made at start: a self-signed serving certificate (controller-runtime's and
// kube-apiserver's secure serving make one when none is given), and the small PKI `kozmo local`
// hands out as kind and k3s do: a CA, the API server's certificate and an admin client
// certificate, all signed by that CA. ECDSA P-256 keys, X.509 v3, SHA-256, valid from an hour
// ago. Pure OpenSSL, no Beast.
#pragma once

#include "k8s/error.hpp"

#include <string>
#include <vector>

namespace kozmo::serve {

struct pem_identity {
  std::string cert_pem;
  std::string key_pem;
};

enum class certificate_use { server, client, ca };

struct certificate_request {
  std::string common_name;
  std::vector<std::string> organizations; // O=; for a client certificate, its Kubernetes groups
  std::vector<std::string> dns_names;     // subjectAltName
  std::vector<std::string> ip_addresses;
  certificate_use use = certificate_use::server;
  long valid_days = 365;
};

// A certificate for `req`, signed by `issuer` (a certificate_use::ca identity), or by its own
// key when `issuer` is null.
expected<pem_identity> issue_certificate(const certificate_request& req, const pem_identity* issuer = nullptr);

// A self-signed serving certificate (`client`: for TLS client authentication instead).
expected<pem_identity> self_signed_identity(const std::string& common_name, const std::vector<std::string>& dns_names,
                                            const std::vector<std::string>& ip_addresses, bool client = false);

// Whether `cert_pem` is a certificate `ca_pem` signed that is valid now.
bool signed_by(const std::string& cert_pem, const std::string& ca_pem);

} // namespace kozmo::serve
