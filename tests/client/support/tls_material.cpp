#include "tests/client/support/tls_material.hpp"

#include <cstdio>
#include <filesystem>
#include <mutex>
#include <vector>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kozmo::test {
namespace {

void run(const std::string& cmd) {
  std::string full = cmd + " >/dev/null 2>&1";
  if (std::system(full.c_str()) != 0) throw std::runtime_error("command failed: " + cmd);
}

tls_material generate() {
  tls_material m;
  m.dir = make_temp_dir();
  const std::string& d = m.dir;
  const std::string ec_key = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
  auto ca = [&](const std::string& name) {
    run("openssl req -x509 " + ec_key + " -keyout " + d + "/" + name + ".key -out " + d + "/" +
        name + ".crt -days 2 -subj /CN=" + name +
        " -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign");
  };
  ca("ca");
  ca("other-ca");
  auto leaf = [&](const std::string& name, const std::string& subject, const std::string& ext) {
    spit(d + "/" + name + ".ext", ext);
    run("openssl req " + ec_key + " -keyout " + d + "/" + name + ".key -out " + d + "/" + name +
        ".csr -subj " + subject);
    run("openssl x509 -req -in " + d + "/" + name + ".csr -CA " + d + "/ca.crt -CAkey " + d +
        "/ca.key -CAcreateserial -out " + d + "/" + name + ".crt -days 2 -extfile " + d + "/" +
        name + ".ext");
  };
  leaf("server", "/CN=kozmo-test-server",
       "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
       "extendedKeyUsage=serverAuth\n");
  leaf("client", "/O=system:masters/CN=kozmo-test-client",
       "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n");
  m.ca_pem = slurp(d + "/ca.crt");
  m.other_ca_pem = slurp(d + "/other-ca.crt");
  m.server_cert_pem = slurp(d + "/server.crt");
  m.server_key_pem = slurp(d + "/server.key");
  m.client_cert_pem = slurp(d + "/client.crt");
  m.client_key_pem = slurp(d + "/client.key");
  return m;
}

} // namespace

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

namespace {
// Removes the test's temporary directories when the process exits.
struct temp_dirs {
  std::mutex mu;
  std::vector<std::string> paths;
  ~temp_dirs() {
    std::error_code ec;
    for (const auto& p : paths) std::filesystem::remove_all(p, ec);
  }
};
temp_dirs& registry() {
  static temp_dirs r;
  return r;
}
} // namespace

std::string make_temp_dir() {
  std::string tmpl = "/tmp/kozmo-client-test-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  auto& r = registry();
  std::lock_guard lk(r.mu);
  r.paths.push_back(tmpl);
  return tmpl;
}

const tls_material& test_tls_material() {
  static const tls_material m = generate();
  return m;
}

} // namespace kozmo::test
