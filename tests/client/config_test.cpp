// Kubeconfig and in-cluster configuration, from files written into a temporary directory.
#include "k8s/client/config.hpp"
#include "tests/client/support/tls_material.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

using namespace kozmo::client;
using kozmo::test::make_temp_dir;
using kozmo::test::spit;

namespace {

const char* two_contexts = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K
    tls-server-name: kubernetes
- name: prod-cluster
  cluster:
    server: https://prod.example.com
    insecure-skip-tls-verify: true
users:
- name: dev-user
  user:
    token: abc.def
- name: cert-user
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
contexts:
- name: dev
  context:
    cluster: dev-cluster
    user: dev-user
    namespace: team-a
- name: prod
  context:
    cluster: prod-cluster
    user: cert-user
- name: broken
  context:
    cluster: nowhere
    user: dev-user
)";

} // namespace

TEST_CASE("the current context gives server, CA data, token and namespace", "[kubeconfig]") {
  std::string dir = make_temp_dir();
  spit(dir + "/config", two_contexts);
  auto cfg = load_kubeconfig(dir + "/config");
  REQUIRE(cfg);
  CHECK(cfg->server == "https://127.0.0.1:6443");
  CHECK(cfg->ca_pem == "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n");
  CHECK(cfg->tls_server_name == "kubernetes");
  CHECK(cfg->token == "abc.def");
  CHECK(cfg->default_namespace == "team-a");
  CHECK_FALSE(cfg->insecure_skip_tls_verify);
}

TEST_CASE("a named context with a client-certificate-data user loads its cert and key",
          "[kubeconfig]") {
  std::string dir = make_temp_dir();
  spit(dir + "/config", two_contexts);
  auto cfg = load_kubeconfig(dir + "/config", "prod");
  REQUIRE(cfg);
  CHECK(cfg->server == "https://prod.example.com");
  CHECK(cfg->insecure_skip_tls_verify);
  CHECK(cfg->client_cert_pem == "CERT");
  CHECK(cfg->client_key_pem == "KEY");
  CHECK(cfg->token.empty());
  CHECK(cfg->default_namespace == "default");
}

TEST_CASE("file references are resolved against the kubeconfig's own directory", "[kubeconfig]") {
  std::string dir = make_temp_dir();
  std::filesystem::create_directories(dir + "/pki");
  spit(dir + "/pki/ca.crt", "CA-PEM");
  spit(dir + "/pki/client.crt", "CLIENT-CERT");
  spit(dir + "/pki/client.key", "CLIENT-KEY");
  spit(dir + "/token", "tok-from-file\n");
  spit(dir + "/config", R"(apiVersion: v1
kind: Config
current-context: files
clusters:
- name: c
  cluster:
    server: https://10.0.0.1:443
    certificate-authority: pki/ca.crt
users:
- name: u
  user:
    client-certificate: pki/client.crt
    client-key: )" + dir + R"(/pki/client.key
- name: t
  user:
    tokenFile: token
contexts:
- name: files
  context: {cluster: c, user: u}
- name: tokenfile
  context: {cluster: c, user: t}
)");
  auto cfg = load_kubeconfig(dir + "/config");
  REQUIRE(cfg);
  CHECK(cfg->ca_pem == "CA-PEM");
  CHECK(cfg->client_cert_pem == "CLIENT-CERT");
  CHECK(cfg->client_key_pem == "CLIENT-KEY");

  auto tok = load_kubeconfig(dir + "/config", "tokenfile");
  REQUIRE(tok);
  CHECK(tok->token == "tok-from-file");
  CHECK(tok->token_file == dir + "/token");
}

TEST_CASE("kubeconfig mistakes are reported with the file and the missing piece", "[kubeconfig]") {
  std::string dir = make_temp_dir();
  std::string path = dir + "/config";
  spit(path, two_contexts);

  auto missing = load_kubeconfig(path, "foo");
  REQUIRE_FALSE(missing);
  CHECK(missing.err().message == "kubeconfig " + path + ": context \"foo\" not found");

  auto broken = load_kubeconfig(path, "broken");
  REQUIRE_FALSE(broken);
  CHECK(broken.err().message ==
        "kubeconfig " + path + ": cluster \"nowhere\" of context \"broken\" not found");

  auto no_file = load_kubeconfig(dir + "/absent");
  REQUIRE_FALSE(no_file);
  CHECK(no_file.err().message.find("kubeconfig " + dir + "/absent: cannot read") == 0);

  spit(dir + "/bad-ca", R"(current-context: x
clusters: [{name: c, cluster: {server: "https://h", certificate-authority: missing.crt}}]
contexts: [{name: x, context: {cluster: c}}]
)");
  auto bad_ca = load_kubeconfig(dir + "/bad-ca");
  REQUIRE_FALSE(bad_ca);
  CHECK(bad_ca.err().message.find("certificate-authority " + dir + "/missing.crt: cannot read") !=
        std::string::npos);

  spit(dir + "/garbage", "clusters: [unterminated");
  CHECK_FALSE(load_kubeconfig(dir + "/garbage"));
}

TEST_CASE("KUBECONFIG picks the first existing file of its list", "[kubeconfig]") {
  std::string dir = make_temp_dir();
  spit(dir + "/second", "x: 1");
  std::string list = dir + "/first:" + dir + "/second";
  ::setenv("KUBECONFIG", list.c_str(), 1);
  CHECK(default_kubeconfig_path() == dir + "/second");
  ::setenv("KUBECONFIG", "", 1);
  ::setenv("HOME", dir.c_str(), 1);
  CHECK(default_kubeconfig_path() == dir + "/.kube/config");
  ::unsetenv("KUBECONFIG");
}

TEST_CASE("in a pod the service host, token, CA and namespace come from the environment",
          "[in-cluster]") {
  std::string dir = make_temp_dir();
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  auto outside = in_cluster_config(dir);
  REQUIRE_FALSE(outside);
  CHECK(outside.err().message.find("KUBERNETES_SERVICE_HOST") != std::string::npos);

  ::setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  spit(dir + "/token", "sa-token\n");
  spit(dir + "/ca.crt", "CLUSTER-CA");
  spit(dir + "/namespace", "kozmo-system");
  auto cfg = in_cluster_config(dir);
  REQUIRE(cfg);
  CHECK(cfg->server == "https://10.96.0.1:443");
  CHECK(cfg->token == "sa-token");
  CHECK(cfg->token_file == dir + "/token");
  CHECK(cfg->ca_pem == "CLUSTER-CA");
  CHECK(cfg->default_namespace == "kozmo-system");

  ::setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  auto v6 = in_cluster_config(dir);
  REQUIRE(v6);
  CHECK(v6->server == "https://[fd00::1]:443");
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
}

TEST_CASE("base64 data decodes with or without padding and rejects junk", "[kubeconfig]") {
  CHECK(*base64_decode("aGVsbG8=") == "hello");
  CHECK(*base64_decode("aGVsbG8") == "hello");
  CHECK(*base64_decode("aGVs\nbG8=") == "hello");
  CHECK_FALSE(base64_decode("a$b"));
}
