#include "runtime/local_pki.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace kozmo::runtime {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return in ? s.str() : std::string();
}

status write_private(const fs::path& p, const std::string& text) {
  {
    std::ofstream out(p, std::ios::trunc);
    out << text;
    if (!out)
      return error{"cannot write " + p.string()};
  }
  ::chmod(p.c_str(), 0600);
  return ok;
}

std::string base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

expected<local_credentials> make_credentials() {
  local_credentials c;
  serve::certificate_request ca{"kozmo-local-ca", {}, {}, {}, serve::certificate_use::ca, 3650};
  auto made_ca = serve::issue_certificate(ca);
  if (!made_ca)
    return made_ca.err();
  c.ca = std::move(*made_ca);
  serve::certificate_request server{"kozmo-apiserver", {}, {"localhost"}, {"127.0.0.1", "::1"},
                                    serve::certificate_use::server, 3650};
  auto made_server = serve::issue_certificate(server, &c.ca);
  if (!made_server)
    return made_server.err();
  c.server = std::move(*made_server);
  serve::certificate_request admin{"kozmo-admin", {"system:masters"}, {}, {}, serve::certificate_use::client, 3650};
  auto made_admin = serve::issue_certificate(admin, &c.ca);
  if (!made_admin)
    return made_admin.err();
  c.admin = std::move(*made_admin);
  unsigned char raw[32];
  if (RAND_bytes(raw, sizeof raw) != 1)
    return error{"cannot draw a random token"};
  static const char* hex = "0123456789abcdef";
  for (unsigned char b : raw) {
    c.token.push_back(hex[b >> 4]);
    c.token.push_back(hex[b & 15]);
  }
  return c;
}

} // namespace

expected<local_credentials> local_credentials_in(const std::string& dir) {
  fs::path pki = dir.empty() ? fs::path() : fs::path(dir) / "pki";
  if (!dir.empty()) {
    local_credentials c{{read_text(pki / "ca.crt"), read_text(pki / "ca.key")},
                        {read_text(pki / "apiserver.crt"), read_text(pki / "apiserver.key")},
                        {read_text(pki / "admin.crt"), read_text(pki / "admin.key")},
                        read_text(pki / "token")};
    if (!c.token.empty() && serve::signed_by(c.server.cert_pem, c.ca.cert_pem) &&
        serve::signed_by(c.admin.cert_pem, c.ca.cert_pem) && !c.server.key_pem.empty() && !c.admin.key_pem.empty())
      return c;
  }
  auto c = make_credentials();
  if (!c || dir.empty())
    return c;
  std::error_code ec;
  fs::create_directories(pki, ec);
  if (ec)
    return error{"cannot create " + pki.string() + ": " + ec.message()};
  ::chmod(pki.c_str(), 0700);
  for (auto [name, text] : {std::pair{"ca.crt", &c->ca.cert_pem}, std::pair{"ca.key", &c->ca.key_pem},
                            std::pair{"apiserver.crt", &c->server.cert_pem}, std::pair{"apiserver.key", &c->server.key_pem},
                            std::pair{"admin.crt", &c->admin.cert_pem}, std::pair{"admin.key", &c->admin.key_pem},
                            std::pair{"token", &c->token}})
    if (auto st = write_private(pki / name, *text); !st)
      return st.err();
  return c;
}

std::string local_kubeconfig(const std::string& url, const local_credentials& c, const std::string& name) {
  return "apiVersion: v1\n"
         "kind: Config\n"
         "clusters:\n"
         "- name: " + name + "\n"
         "  cluster:\n"
         "    server: " + url + "\n"
         "    certificate-authority-data: " + base64(c.ca.cert_pem) + "\n"
         "contexts:\n"
         "- name: " + name + "\n"
         "  context:\n"
         "    cluster: " + name + "\n"
         "    user: " + name + "\n"
         "    namespace: default\n"
         "current-context: " + name + "\n"
         "users:\n"
         "- name: " + name + "\n"
         "  user:\n"
         "    client-certificate-data: " + base64(c.admin.cert_pem) + "\n"
         "    client-key-data: " + base64(c.admin.key_pem) + "\n"
         "    token: " + c.token + "\n";
}

} // namespace kozmo::runtime
