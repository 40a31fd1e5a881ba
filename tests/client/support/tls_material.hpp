// Certificates for TLS tests, made at test time with the openssl CLI in a temporary
// directory: a CA, a server certificate for 127.0.0.1 / localhost signed by it, a client
// certificate signed by it, and a second, unrelated CA.
#pragma once

#include <string>

namespace kozmo::test {

struct tls_material {
  std::string dir;  // where the files are (ca.crt, server.crt, client.key, ...)
  std::string ca_pem;
  std::string server_cert_pem;
  std::string server_key_pem;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string other_ca_pem;
};

// Generated once per test process; aborts the test run when openssl fails.
const tls_material& test_tls_material();

// Reads a whole file ("" when missing).
std::string slurp(const std::string& path);
// Writes a whole file.
void spit(const std::string& path, const std::string& text);
// A fresh temporary directory.
std::string make_temp_dir();

} // namespace kozmo::test
