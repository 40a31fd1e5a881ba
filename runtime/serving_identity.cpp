#include "runtime/serving_identity.hpp"

#include "k8s/serve/pki.hpp"
#include "runtime/config_file.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <vector>

namespace kozmo::runtime {

expected<extender::tls_options> serving_identity(std::string cert_pem, std::string key_pem, const char* what) {
  extender::tls_options t;
  if (!cert_pem.empty()) {
    t.cert_pem = std::move(cert_pem);
    t.key_pem = std::move(key_pem);
    return t;
  }
  char host[256] = {};
  std::vector<std::string> names{"localhost", "kozmo-controller-metrics.kozmo-system.svc",
                                 "kozmo-controller-metrics.kozmo-system.svc.cluster.local"};
  if (gethostname(host, sizeof host - 1) == 0 && *host)
    names.insert(names.begin(), host);
  auto id = serve::self_signed_identity("kozmo-controller", names, {"127.0.0.1", "::1"});
  if (!id)
    return id.err();
  spdlog::info("http: serving {} with a self-signed certificate (for {})", what, names.front());
  t.cert_pem = std::move(id->cert_pem);
  t.key_pem = std::move(id->key_pem);
  return t;
}

expected<extender::tls_options> serving_identity_files(const std::string& cert_file, const std::string& key_file,
                                                       const char* what) {
  if (cert_file.empty())
    return serving_identity({}, {}, what);
  auto cert = read_file(cert_file);
  if (!cert)
    return error::bad_request("--tls-cert-file: " + cert.err().message);
  auto key = read_file(key_file);
  if (!key)
    return error::bad_request("--tls-private-key-file: " + key.err().message);
  return serving_identity(std::move(*cert), std::move(*key), what);
}

} // namespace kozmo::runtime
