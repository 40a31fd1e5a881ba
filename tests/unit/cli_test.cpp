#include "runtime/cli.hpp"

#include <catch2/catch.hpp>

using namespace kozmo::runtime;

TEST_CASE("kozmo local takes its flags in both --flag value and --flag=value forms") {
  auto cmd = parse_command_line({"local", "--port", "6443", "--nodes=4", "--gpus-per-node", "2", "--data-dir", "/tmp/k",
                                 "--write-kubeconfig=/tmp/kc", "--demo"});
  REQUIRE(cmd.has_value());
  CHECK(cmd->what == command::kind::local);
  CHECK(cmd->local.port == 6443);
  CHECK(cmd->local.nodes == 4);
  CHECK(cmd->local.gpus_per_node == 2);
  CHECK(cmd->local.data_dir == "/tmp/k");
  CHECK(cmd->local.write_kubeconfig == "/tmp/kc");
  CHECK(cmd->local.demo);
}

TEST_CASE("a mistyped flag or value says which flag and what is accepted") {
  auto unknown = parse_command_line({"local", "--node", "3"});
  REQUIRE_FALSE(unknown.has_value());
  CHECK_THAT(unknown.err().message, Catch::Contains("unknown flag --node") && Catch::Contains("--nodes"));
  auto not_number = parse_command_line({"local", "--port", "http"});
  REQUIRE_FALSE(not_number.has_value());
  CHECK_THAT(not_number.err().message, Catch::Contains("--port") && Catch::Contains("not a number"));
  auto out_of_range = parse_command_line({"local", "--port", "70000"});
  REQUIRE_FALSE(out_of_range.has_value());
  CHECK_THAT(out_of_range.err().message, Catch::Contains("outside 0..65535"));
  auto missing = parse_command_line({"kubelet", "--kubeconfig"});
  REQUIRE_FALSE(missing.has_value());
  CHECK_THAT(missing.err().message, Catch::Contains("needs a value"));
}

TEST_CASE("an unknown sub-command points at kozmo help, and no arguments means help") {
  auto bad = parse_command_line({"frobnicate"});
  REQUIRE_FALSE(bad.has_value());
  CHECK_THAT(bad.err().message, Catch::Contains("kozmo help"));
  auto none = parse_command_line({});
  REQUIRE(none.has_value());
  CHECK(none->what == command::kind::help);
  CHECK_THAT(usage(), Catch::Contains("--write-kubeconfig"));
}

TEST_CASE("kozmo extender needs a HiveD configuration and takes kubeconfig and listen address") {
  auto cmd = parse_command_line({"extender", "--config", "hived.yaml", "--kubeconfig=/tmp/kc", "--listen", ":30096"});
  REQUIRE(cmd.has_value());
  CHECK(cmd->what == command::kind::extender);
  CHECK(cmd->extender.config == "hived.yaml");
  CHECK(cmd->extender.kubeconfig == "/tmp/kc");
  CHECK(cmd->extender.listen == ":30096");
  auto missing = parse_command_line({"extender", "--listen", ":30096"});
  REQUIRE_FALSE(missing.has_value());
  CHECK_THAT(missing.err().message, Catch::Contains("--config") && Catch::Contains("required"));
}

TEST_CASE("--event-ttl takes a duration in whole seconds, 0 for never, and says what it accepts") {
  auto cmd = parse_command_line({"local", "--event-ttl", "90m"});
  REQUIRE(cmd.has_value());
  CHECK(cmd->local.event_ttl_seconds == 5400);
  CHECK(parse_command_line({"local"})->local.event_ttl_seconds == 3600); // kube-apiserver's 1h
  CHECK(parse_command_line({"apiserver", "--event-ttl=0"})->apiserver.event_ttl_seconds == 0);
  auto bad = parse_command_line({"local", "--event-ttl", "1500ms"});
  REQUIRE_FALSE(bad.has_value());
  CHECK_THAT(bad.err().message, Catch::Contains("--event-ttl") && Catch::Contains("whole seconds"));
}

TEST_CASE("kozmo kubelet --training takes the API client's rate limit for a real cluster") {
  auto cmd = parse_command_line({"kubelet", "--nodes", "0", "--training", "--kube-api-qps", "300"});
  REQUIRE(cmd.has_value());
  CHECK(cmd->kubelet.training);
  CHECK(cmd->kubelet.kube_api_qps == 300);
  CHECK(cmd->kubelet.kube_api_burst == 0); // twice the qps
}

TEST_CASE("kozmo kubelet --training takes the MPI launcher's kubectl-delivery image") {
  auto cmd = parse_command_line({"kubelet", "--training", "--mpi-kubectl-delivery-image", "registry.local/kubectl-delivery:v1"});
  REQUIRE(cmd.has_value());
  CHECK(cmd->kubelet.mpi_kubectl_delivery_image == "registry.local/kubectl-delivery:v1");
}

TEST_CASE("kozmo extender takes the API client's rate limit, and refuses a limit of zero") {
  auto cmd = parse_command_line({"extender", "--config", "hived.yaml", "--kube-api-qps", "500", "--kube-api-burst=1000"});
  REQUIRE(cmd.has_value());
  CHECK(cmd->extender.kube_api_qps == 500);
  CHECK(cmd->extender.kube_api_burst == 1000);
  auto defaults = parse_command_line({"extender", "--config", "hived.yaml"});
  REQUIRE(defaults.has_value());
  CHECK(defaults->extender.kube_api_qps == 0); // run_extender's default (200) applies
  auto zero = parse_command_line({"extender", "--config", "hived.yaml", "--kube-api-qps", "0"});
  REQUIRE_FALSE(zero.has_value());
  CHECK_THAT(zero.err().message, Catch::Contains("kube-api-qps"));
}

TEST_CASE("kozmo local takes a configuration file") {
  auto cmd = parse_command_line({"local", "--config", "/etc/kozmo/config.yaml"});
  REQUIRE(cmd.has_value());
  CHECK(cmd->local.config_file == "/etc/kozmo/config.yaml");
  CHECK(parse_command_line({"local"})->local.config_file.empty());
}

TEST_CASE("kozmo crds takes repeated --kind and an OpenAPI document for the pod schema") {
  auto cmd = parse_command_line({"crds", "--kind", "PyTorchJob", "--kind=TFJob", "--pod-schema", "openapi.json"});
  REQUIRE(cmd.has_value());
  CHECK(cmd->what == command::kind::crds);
  CHECK(cmd->crds.kinds == std::vector<std::string>{"PyTorchJob", "TFJob"});
  CHECK(cmd->crds.pod_schema == "openapi.json");
  auto bare = parse_command_line({"crds"});
  REQUIRE(bare.has_value());
  CHECK(bare->crds.kinds.empty());
  CHECK(bare->crds.pod_schema.empty());
  CHECK_FALSE(parse_command_line({"crds", "--pod-schema"}).has_value());
}

TEST_CASE("kozmo controller takes kubebuilder's flag names, runs every part by default, and --enable picks") {
  auto cmd = parse_command_line({"controller", "--kubeconfig", "/kc", "--leader-elect", "--metrics-bind-address=:9090"});
  REQUIRE(cmd.has_value());
  CHECK(cmd->what == command::kind::controller);
  const auto& o = cmd->controller;
  CHECK(o.kubeconfig == "/kc");
  CHECK(o.leader_elect);
  CHECK(o.metrics_bind_address == ":9090");
  CHECK(o.health_probe_bind_address == ":8081");
  CHECK((o.scheduler && o.training && o.tasks));
  auto some = parse_command_line({"controller", "--enable", "scheduler,tasks", "--leader-elect=false"});
  REQUIRE(some.has_value());
  CHECK(some->controller.scheduler);
  CHECK_FALSE(some->controller.training);
  CHECK(some->controller.tasks);
  CHECK_FALSE(some->controller.leader_elect);
  auto bad = parse_command_line({"controller", "--enable", "scheduler,gpus"});
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.err().message == "--enable: unknown part \"gpus\" (known: scheduler, training, tasks)");
  CHECK_FALSE(parse_command_line({"controller", "--leader-elect=maybe"}).has_value());
}

TEST_CASE("kozmo controller secures its metrics address with --metrics-secure (or --secure-serving)") {
  auto plain = parse_command_line({"controller"});
  REQUIRE(plain);
  CHECK_FALSE(plain->controller.metrics_secure);
  CHECK(plain->controller.metrics_bind_address == "127.0.0.1:8080");
  auto secure = parse_command_line({"controller", "--metrics-secure", "--metrics-bind-address=:8443",
                                    "--tls-cert-file", "/c.pem", "--tls-private-key-file", "/k.pem"});
  REQUIRE(secure);
  CHECK(secure->controller.metrics_secure);
  CHECK(secure->controller.tls_cert_file == "/c.pem");
  CHECK(secure->controller.tls_private_key_file == "/k.pem");
  auto alias = parse_command_line({"controller", "--secure-serving=true"});
  REQUIRE(alias);
  CHECK(alias->controller.metrics_secure);
  CHECK_FALSE(parse_command_line({"controller", "--secure-serving=false"})->controller.metrics_secure);
  auto half = parse_command_line({"controller", "--metrics-secure", "--tls-cert-file", "/c.pem"});
  REQUIRE_FALSE(half);
  CHECK(half.err().message.find("go together") != std::string::npos);
  auto insecure = parse_command_line({"controller", "--tls-cert-file", "/c.pem", "--tls-private-key-file", "/k.pem"});
  REQUIRE_FALSE(insecure);
  CHECK(insecure.err().message.find("needs --metrics-secure") != std::string::npos);
}

TEST_CASE("kozmo local --runtime picks simulated or process pods and refuses anything else") {
  auto plain = parse_command_line({"local"});
  REQUIRE(plain.has_value());
  CHECK(plain->local.runtime == "sim");
  auto process = parse_command_line({"local", "--runtime", "process"});
  REQUIRE(process.has_value());
  CHECK(process->local.runtime == "process");
  auto docker = parse_command_line({"local", "--runtime=docker"});
  REQUIRE_FALSE(docker.has_value());
  CHECK_THAT(docker.err().message, Catch::Contains("--runtime") && Catch::Contains("sim or process"));
}

TEST_CASE("kozmo copilot download takes repeated inputs, a size cap, a termination log and S3 settings") {
  auto cmd = parse_command_line({"copilot", "download", "--input-path", "/in", "--input", "text=file:///tmp/t.txt",
                                 "--input=data=s3://b/d/", "--max-dataset-size", "1048576", "--termination-log",
                                 "/tmp/term", "--s3-endpoint", "http://127.0.0.1:4569", "--s3-region", "eu-west-1",
                                 "--s3-virtual-hosted"});
  REQUIRE(cmd.has_value());
  CHECK(cmd->what == command::kind::copilot);
  const auto& o = cmd->copilot;
  CHECK_FALSE(o.upload);
  CHECK(o.input_path == "/in");
  REQUIRE(o.inputs.size() == 2);
  CHECK(o.inputs[0] == std::pair<std::string, std::string>{"text", "file:///tmp/t.txt"});
  CHECK(o.inputs[1] == std::pair<std::string, std::string>{"data", "s3://b/d/"});
  CHECK(o.max_dataset_size == 1048576);
  CHECK(o.termination_log == "/tmp/term");
  CHECK(o.s3_endpoint == "http://127.0.0.1:4569");
  CHECK(o.s3_region == "eu-west-1");
  CHECK(o.s3_virtual_hosted);
}

TEST_CASE("kozmo copilot upload needs an output prefix and reads the timeout as a duration") {
  auto cmd = parse_command_line({"copilot", "upload", "--output-path", "/out", "--output-prefix", "s3://b/o/",
                                 "--timeout", "1h0m0s", "--s3-part-size", "8388608", "--s3-list-page", "2"});
  REQUIRE(cmd.has_value());
  CHECK(cmd->copilot.upload);
  CHECK(cmd->copilot.output_path == "/out");
  CHECK(cmd->copilot.output_prefix == "s3://b/o/");
  CHECK(cmd->copilot.timeout_seconds == 3600);
  CHECK(cmd->copilot.s3_part_size == 8388608);
  CHECK(cmd->copilot.s3_list_page == 2);
  auto defaults = parse_command_line({"copilot", "upload", "--output-prefix", "file:///o/"});
  REQUIRE(defaults.has_value());
  CHECK(defaults->copilot.output_path == "/var/kozmo/outputs");
  CHECK(defaults->copilot.timeout_seconds == 3600);

  auto err = [](std::vector<std::string> args) {
    auto c = parse_command_line(args);
    return c ? std::string() : c.err().message;
  };
  CHECK(err({"copilot", "upload"}) == "kozmo copilot upload: --output-prefix URI is required");
  CHECK(err({"copilot"}).starts_with("kozmo copilot: say download or upload"));
  CHECK(err({"copilot", "sync"}).starts_with("kozmo copilot: say download or upload"));
  CHECK_THAT(err({"copilot", "upload", "--output-prefix", "file:///o/", "--timeout", "soon"}),
             Catch::Contains("--timeout") && Catch::Contains("not a duration"));
  // Each sub-command takes only its own flags.
  CHECK_THAT(err({"copilot", "upload", "--output-prefix", "file:///o/", "--input", "a=file:///a"}),
             Catch::Contains("unknown flag --input"));
  CHECK_THAT(err({"copilot", "download", "--output-prefix", "file:///o/"}), Catch::Contains("unknown flag --output-prefix"));
  CHECK_THAT(err({"copilot", "download", "--input", "noequals"}), Catch::Contains("is not NAME=URI"));
  CHECK_THAT(err({"copilot", "download", "--input", "a/b=file:///x"}), Catch::Contains("is not a file name"));
  CHECK_THAT(err({"copilot", "download", "--input", "a=file:///x", "--input", "a=file:///y"}), Catch::Contains("given twice"));
  CHECK_THAT(err({"copilot", "download", "--s3-part-size", "1024"}), Catch::Contains("outside"));
}
