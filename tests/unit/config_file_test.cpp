// Kozmo's configuration file (runtime/config_file.hpp): the sections `kozmo controller` reads
// beside `tasks:`, their defaults, and errors that name the field.
#include "runtime/config_file.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

using namespace kozmo::runtime;

TEST_CASE("an empty configuration gives client-go's election timing and the default lease") {
  auto c = parse_config("", "f.yaml");
  REQUIRE(c.has_value());
  CHECK(c->leader_election.timing.lease_duration == std::chrono::seconds(15));
  CHECK(c->leader_election.timing.renew_deadline == std::chrono::seconds(10));
  CHECK(c->leader_election.timing.retry_period == std::chrono::seconds(2));
  CHECK(c->leader_election.resource_name == "kozmo-controller");
  CHECK(c->scheduler.config_text.empty());
  CHECK(c->scheduler.scheduler_name == "kozmo");
}

TEST_CASE("the controller's sections are read with their names") {
  auto c = parse_config(R"(
scheduler:
  schedulerName: gpu-sched
  config:
    physicalCluster: {cellTypes: {}, physicalCells: []}
client: {qps: 100, burst: 300, connections: 32}
leaderElection:
  leaseDuration: 30s
  renewDeadline: 20s
  retryPeriod: 4s
  resourceName: my-lease
  resourceNamespace: ops
)",
                        "f.yaml");
  REQUIRE(c.has_value());
  CHECK(c->scheduler.scheduler_name == "gpu-sched");
  CHECK(c->scheduler.config_text.find("physicalCluster") != std::string::npos);
  CHECK(c->client.qps == 100);
  CHECK(c->client.burst == 300);
  CHECK(c->client.connections == 32);
  CHECK(c->leader_election.timing.lease_duration == std::chrono::seconds(30));
  CHECK(c->leader_election.timing.retry_period == std::chrono::seconds(4));
  CHECK(c->leader_election.resource_name == "my-lease");
  CHECK(c->leader_election.resource_namespace == "ops");
}

TEST_CASE("scheduler.configFile is read relative to the configuration file") {
  const std::string dir = "/tmp";
  {
    std::ofstream out(dir + "/kozmo-config-test-hived.yaml");
    out << "physicalCluster: {}\n";
  }
  auto c = parse_config("scheduler: {configFile: kozmo-config-test-hived.yaml}", "f.yaml", dir);
  REQUIRE(c.has_value());
  CHECK(c->scheduler.config_text == "physicalCluster: {}\n");
  auto missing = parse_config("scheduler: {configFile: nowhere.yaml}", "f.yaml", dir);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.err().message == "f.yaml: scheduler.configFile: cannot read /tmp/nowhere.yaml");
  std::remove((dir + "/kozmo-config-test-hived.yaml").c_str());
}

TEST_CASE("every bad value names its field") {
  auto message = [](const std::string& text) {
    auto c = parse_config(text, "f.yaml");
    return c ? std::string("accepted") : c.err().message;
  };
  CHECK(message("leaderElection: {leaseDuration: 5s}") ==
        "f.yaml: leaderElection.leaseDuration: must be greater than renewDeadline");
  CHECK(message("leaderElection: {retryPeriod: soon}") ==
        "f.yaml: leaderElection.retryPeriod: \"soon\" is not a positive duration (examples: 15s, 1m)");
  CHECK(message("leaderElection: {leaseName: x}").rfind("f.yaml: leaderElection.leaseName: unknown key", 0) == 0);
  CHECK(message("client: {qps: 0}") == "f.yaml: client.qps: must be a number above 0");
  CHECK(message("client: {burst: 1.5}") == "f.yaml: client.burst: must be a whole number above 0");
  CHECK(message("client: {connections: 0}") == "f.yaml: client.connections: must be a whole number from 1 to 10000");
  CHECK(message("client: {timeout: 5}") == "f.yaml: client.timeout: unknown key (known: qps, burst, connections)");
  CHECK(message("scheduler: {config: text}").rfind("f.yaml: scheduler.config: must be HiveD's configuration", 0) == 0);
  CHECK(message("scheduler: {config: {}, configFile: x}").find("f.yaml: scheduler.configFile: cannot read") == 0);
  CHECK(message("gpus: {}") == "f.yaml: gpus: unknown section (known: tasks, scheduler, client, leaderElection, training)");
  CHECK(message("tasks: {default-cpus: lots}").rfind("f.yaml: ", 0) == 0);
}

TEST_CASE("scheduler.extender: kube-scheduler's verbs over mutual TLS, or plain HTTP only when asked") {
  const std::string dir = "/tmp/kozmo-config-test-extender";
  std::system(("mkdir -p " + dir).c_str());
  for (const char* f : {"ca.crt", "tls.crt", "tls.key"})
    std::ofstream(dir + "/" + f) << "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
  std::ofstream(dir + "/empty.pem") << "";
  auto parse = [&](const std::string& text) { return parse_config(text, "f.yaml", dir); };
  auto message = [&](const std::string& text) {
    auto c = parse(text);
    return c ? std::string("accepted") : c.err().message;
  };

  auto none = parse("scheduler: {}");
  REQUIRE(none.has_value());
  CHECK(none->scheduler.extender.bind_address.empty()); // direct mode

  auto mtls = parse("scheduler: {extender: {bindAddress: ':30096', certFile: tls.crt, keyFile: tls.key, "
                    "clientCAFile: ca.crt}}");
  REQUIRE(mtls.has_value());
  CHECK(mtls->scheduler.extender.bind_address == ":30096");
  CHECK(mtls->scheduler.extender.client_ca_pem.find("BEGIN CERTIFICATE") != std::string::npos);
  CHECK(mtls->scheduler.extender.cert_pem.find("BEGIN CERTIFICATE") != std::string::npos);
  CHECK_FALSE(mtls->scheduler.extender.insecure);

  auto plain = parse("scheduler: {extender: {bindAddress: ':30096', insecure: true}}");
  REQUIRE(plain.has_value());
  CHECK(plain->scheduler.extender.insecure);

  CHECK(message("scheduler: {extender: {bindAddress: ':30096'}}")
            .rfind("f.yaml: scheduler.extender.clientCAFile: required", 0) == 0);
  CHECK(message("scheduler: {extender: {clientCAFile: ca.crt}}")
            .rfind("f.yaml: scheduler.extender.bindAddress: required", 0) == 0);
  CHECK(message("scheduler: {extender: {bindAddress: ':1', clientCAFile: ca.crt, certFile: tls.crt}}") ==
        "f.yaml: scheduler.extender.keyFile: certFile and keyFile go together");
  CHECK(message("scheduler: {extender: {bindAddress: ':1', clientCAFile: nowhere.crt}}") ==
        "f.yaml: scheduler.extender.clientCAFile: cannot read " + dir + "/nowhere.crt");
  CHECK(message("scheduler: {extender: {bindAddress: ':1', clientCAFile: empty.pem}}") ==
        "f.yaml: scheduler.extender.clientCAFile: empty.pem holds no PEM block");
  CHECK(message("scheduler: {extender: {bindAddress: ':1', insecure: true, clientCAFile: ca.crt}}")
            .rfind("f.yaml: scheduler.extender.insecure: true serves plain HTTP", 0) == 0);
  CHECK(message("scheduler: {extender: {bindAddress: ':1', insecure: yes please}}") ==
        "f.yaml: scheduler.extender.insecure: must be true or false");
  CHECK(message("scheduler: {extender: {bindAddress: ':1', insecure: true, port: 1}}")
            .rfind("f.yaml: scheduler.extender.port: unknown key", 0) == 0);
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("training.maxReplicas sets the replicas bound, for every kind or by kind") {
  auto plain = parse_config("", "f.yaml");
  REQUIRE(plain);
  CHECK(plain->training.default_max_replicas == 10000);
  auto all = parse_config("training: {maxReplicas: 64}", "f.yaml");
  REQUIRE(all);
  CHECK(all->training.default_max_replicas == 64);
  auto by_kind = parse_config("training: {maxReplicas: {PyTorchJob: 20000, default: 100}}", "f.yaml");
  REQUIRE(by_kind);
  CHECK(by_kind->training.default_max_replicas == 100);
  CHECK(by_kind->training.max_replicas.at("PyTorchJob") == 20000);
  auto message = [](const std::string& text) {
    auto c = parse_config(text, "f.yaml");
    return c ? std::string("accepted") : c.err().message;
  };
  CHECK(message("training: {maxReplicas: 0}") == "f.yaml: training.maxReplicas: must be a whole number from 1 to 100000");
  CHECK(message("training: {maxReplicas: 1000000000}") ==
        "f.yaml: training.maxReplicas: must be a whole number from 1 to 100000");
  CHECK(message("training: {maxReplicas: {TorchJob: 5}}").rfind(
            "f.yaml: training.maxReplicas.TorchJob: unknown kind (known: default, PyTorchJob", 0) == 0);
  CHECK(message("training: {replicas: 5}") == "f.yaml: training.replicas: unknown key (known: maxReplicas)");
}
