#include "actors/kubelet/image_reference.hpp"
#include "actors/kubelet/pod_lifecycle.hpp"

#include <catch2/catch.hpp>

using namespace kozmo;
using namespace kozmo::kubelet;
using namespace std::chrono_literals;

namespace {

sim_pod one_container(std::string restart_policy) {
  sim_pod p;
  p.uid = "u1";
  p.containers.push_back({"main", "busybox:1.36"});
  p.restart_policy = std::move(restart_policy);
  p.host_ip = "10.0.0.1";
  p.pod_ip = "10.244.0.5";
  return p;
}

pod_script script_of(std::map<std::string, std::string> annotations) {
  auto s = parse_pod_script(annotations);
  REQUIRE(s.has_value());
  return *s;
}

json::value main_state(const pod_lifecycle& l) {
  return *l.status_json().find("containerStatuses")->as_array().at(0).find("state");
}

std::string waiting_reason(const pod_lifecycle& l) {
  auto st = l.status_json();
  return st.find("containerStatuses")->as_array().at(0).at_path({"state", "waiting"})->get_string("reason");
}

} // namespace

TEST_CASE("durations are read the way Go's ParseDuration reads them") {
  CHECK(parse_duration("250ms").value() == 250ms);
  CHECK(parse_duration("5s").value() == 5000ms);
  CHECK(parse_duration("1.5m").value() == 90000ms);
  CHECK(parse_duration("1h2m").value() == 3720000ms);
  CHECK(parse_duration("0").value() == 0ms);
  CHECK_FALSE(parse_duration("5 seconds").has_value());
  CHECK_FALSE(parse_duration("").has_value());
}

TEST_CASE("a malformed simulation annotation is an error naming the annotation") {
  auto bad_code = parse_pod_script({{"kozmo.io/sim-exit-code", "one"}});
  REQUIRE_FALSE(bad_code.has_value());
  CHECK_THAT(bad_code.err().message, Catch::Contains("kozmo.io/sim-exit-code"));
  auto unknown = parse_pod_script({{"kozmo.io/sim-bogus", "1"}});
  REQUIRE_FALSE(unknown.has_value());
  CHECK_THAT(unknown.err().message, Catch::Contains("unknown annotation kozmo.io/sim-bogus"));
  auto bad_fail = parse_pod_script({{"kozmo.io/sim-fail", "Exploded"}});
  REQUIRE_FALSE(bad_fail.has_value());
  CHECK_THAT(bad_fail.err().message, Catch::Contains("ImagePullBackOff"));
  // Other annotations are not the simulation's business.
  CHECK(parse_pod_script({{"example.com/x", "y"}}).has_value());
}

TEST_CASE("a pod that exits 0 under restartPolicy Never goes Pending, Running, Succeeded") {
  auto t0 = clock::now();
  pod_lifecycle l(one_container("Never"), script_of({{"kozmo.io/sim-duration", "3s"}}), t0);
  CHECK(l.phase() == "Pending");
  CHECK(waiting_reason(l) == "ContainerCreating");
  CHECK(l.first_delay() == 500ms);

  auto next = l.advance(t0 + 500ms);
  CHECK(l.phase() == "Running");
  REQUIRE(next);
  CHECK(*next == 3000ms);
  CHECK(main_state(l).find("running"));
  CHECK(l.status_json().get_string("podIP") == "10.244.0.5");

  CHECK_FALSE(l.advance(t0 + 3500ms));
  CHECK(l.phase() == "Succeeded");
  auto state = main_state(l);
  auto term = state.find("terminated");
  REQUIRE(term);
  CHECK(term->get_int("exitCode", -1) == 0);
  CHECK(term->get_string("reason") == "Completed");
}

TEST_CASE("a failing container under OnFailure is restarted with a growing back-off, then succeeds") {
  auto t0 = clock::now();
  pod_lifecycle l(one_container("OnFailure"),
                  script_of({{"kozmo.io/sim-exit-code", "3"}, {"kozmo.io/sim-fail-times", "2"},
                             {"kozmo.io/sim-restart-backoff", "1s"}, {"kozmo.io/sim-duration", "1s"}}),
                  t0);
  l.advance(t0);                       // running, run 1
  auto backoff1 = l.advance(t0 + 1s);  // exits 3 → CrashLoopBackOff
  REQUIRE(backoff1);
  CHECK(*backoff1 == 1000ms);
  CHECK(waiting_reason(l) == "CrashLoopBackOff");
  auto st = l.status_json();
  const auto& cs = st.find("containerStatuses")->as_array().at(0);
  CHECK(cs.get_int("restartCount") == 1);
  CHECK(cs.at_path({"lastState", "terminated"})->get_int("exitCode") == 3);
  CHECK(l.phase() == "Running"); // a pod restarting its containers stays Running

  l.advance(t0 + 2s);                  // run 2
  auto backoff2 = l.advance(t0 + 3s);  // exits 3 again
  REQUIRE(backoff2);
  CHECK(*backoff2 == 2000ms);
  l.advance(t0 + 5s);                  // run 3
  l.advance(t0 + 6s);                  // exits 0 (fail-times exhausted)
  CHECK(l.phase() == "Succeeded");
}

TEST_CASE("a failing container under Never leaves the pod Failed with its exit code") {
  auto t0 = clock::now();
  pod_lifecycle l(one_container("Never"), script_of({{"kozmo.io/sim-exit-code", "1"}}), t0);
  l.advance(t0);
  l.advance(t0 + 2s);
  CHECK(l.phase() == "Failed");
  CHECK(main_state(l).find("terminated")->get_string("reason") == "Error");
  CHECK(main_state(l).find("terminated")->get_int("exitCode") == 1);
}

TEST_CASE("an OOM-killed container reports reason OOMKilled and exit code 137") {
  auto t0 = clock::now();
  pod_lifecycle l(one_container("Never"), script_of({{"kozmo.io/sim-fail", "OOMKilled"}}), t0);
  l.advance(t0);
  l.advance(t0 + 2s);
  CHECK(l.phase() == "Failed");
  CHECK(main_state(l).find("terminated")->get_string("reason") == "OOMKilled");
  CHECK(main_state(l).find("terminated")->get_int("exitCode") == 137);
}

TEST_CASE("an image that cannot be pulled shows ErrImagePull, then ImagePullBackOff, and stays Pending") {
  auto t0 = clock::now();
  pod_lifecycle l(one_container("Always"), script_of({{"kozmo.io/sim-fail", "ImagePullBackOff"}}), t0);
  auto next = l.advance(t0 + 500ms);
  CHECK(waiting_reason(l) == "ErrImagePull");
  REQUIRE(next);
  CHECK_FALSE(l.advance(t0 + 1500ms));
  CHECK(waiting_reason(l) == "ImagePullBackOff");
  CHECK(l.phase() == "Pending");
  CHECK_FALSE(l.status_json().find("podIP") == nullptr);
}

TEST_CASE("image references a container runtime parses are accepted as they are written") {
  const std::string sha = "sha256:" + std::string(64, 'a');
  const std::vector<std::string> images{"busybox", "busybox:1.36", "busybox:latest", "library/busybox",
                                        "docker.io/library/busybox:1.36", "index.docker.io/busybox",
                                        "pytorch/pytorch:2.3.0-cuda12.1", "nvcr.io/nvidia/pytorch:24.05-py3",
                                        "localhost:5000/team/train:v1", "localhost/train", "Registry.Example.com/a/b",
                                        "my-registry.example:443/ns/name_with__parts.and-dashes---x", "busybox@" + sha,
                                        "ghcr.io/org/app:1.0@" + sha, "busybox:" + std::string(128, 'T')};
  for (const auto& image : images) {
    INFO(image);
    CHECK_FALSE(image_reference_error(image));
    CHECK_FALSE(invalid_image_message(image));
  }
}

TEST_CASE("image references a container runtime cannot parse are named with the parser's reason") {
  CHECK(image_reference_error("BUSYBOX") == "invalid reference format: repository name must be lowercase");
  CHECK(image_reference_error("Busy Box!") == "invalid reference format: repository name must be lowercase");
  CHECK(image_reference_error("team/Train:1") == "invalid reference format: repository name must be lowercase");
  CHECK(image_reference_error("busy box") == "invalid reference format");
  CHECK(image_reference_error("busybox:") == "invalid reference format");
  CHECK(image_reference_error("busybox:1:2") == "invalid reference format");
  CHECK(image_reference_error("busybox:-1") == "invalid reference format");
  CHECK(image_reference_error("busybox:" + std::string(129, 't')) == "invalid reference format");
  CHECK(image_reference_error("-busybox") == "invalid reference format");
  CHECK(image_reference_error("team//train") == "invalid reference format");
  CHECK(image_reference_error("a___b") == "invalid reference format");
  CHECK(image_reference_error("busybox@sha256:abc") == "invalid reference format");
  CHECK(image_reference_error("busybox@" + std::string(64, 'a')) == "invalid reference format");
  CHECK(image_reference_error("localhost:port/train") == "invalid reference format");
  CHECK(image_reference_error("registry.example.com/" + std::string(250, 'a')) ==
        "repository name must not be more than 255 characters");
  CHECK(image_reference_error(std::string(64, 'f')) ==
        "invalid repository name (" + std::string(64, 'f') + "), cannot specify 64-byte hexadecimal strings");
  CHECK(image_reference_error("") == "invalid reference format");
  CHECK(invalid_image_message("BUSYBOX") ==
        "Failed to apply default image tag \"BUSYBOX\": couldn't parse image reference \"BUSYBOX\": invalid reference "
        "format: repository name must be lowercase");
}

TEST_CASE("a container whose image does not parse stays Pending in InvalidImageName with the kubelet's message") {
  auto t0 = clock::now();
  auto pod = one_container("Never");
  pod.containers.push_back({"sidecar", "Envoy:1.28"});
  pod_lifecycle l(pod, script_of({}), t0);
  CHECK_FALSE(l.advance(t0 + 500ms)); // nothing more happens on its own
  CHECK(l.phase() == "Pending");
  CHECK(waiting_reason(l) == "InvalidImageName");
  auto state = main_state(l);
  const auto* waiting = state.find("waiting");
  REQUIRE(waiting != nullptr);
  CHECK(waiting->get_string("message") == "Failed to apply default image tag \"Envoy:1.28\": couldn't parse image "
                                         "reference \"Envoy:1.28\": invalid reference format: repository name must "
                                         "be lowercase");
  CHECK_FALSE(l.advance(t0 + 10s));
  CHECK(waiting_reason(l) == "InvalidImageName");
}

TEST_CASE("a pod deleted while running stops with exit code 143 within its grace period") {
  auto t0 = clock::now();
  pod_lifecycle l(one_container("Always"),
                  script_of({{"kozmo.io/sim-duration", "forever"}, {"kozmo.io/sim-stop-duration", "10s"}}), t0);
  CHECK_FALSE(l.advance(t0)); // runs forever: no timer
  CHECK(l.current() == stage::running);
  CHECK(l.begin_stop(t0 + 1s, 2000ms) == 2000ms); // capped by the grace period
  l.advance(t0 + 3s);
  CHECK(l.current() == stage::gone);
  CHECK(main_state(l).find("terminated")->get_int("exitCode") == 143);
}

TEST_CASE("init containers are reported completed once the main containers start") {
  auto t0 = clock::now();
  auto pod = one_container("Never");
  pod.init_containers.push_back({"setup", "busybox"});
  pod_lifecycle l(pod, script_of({}), t0);
  auto conditions = l.status_json().find("conditions")->as_array();
  CHECK(conditions.at(0).get_string("type") == "Initialized");
  CHECK(conditions.at(0).get_string("status") == "False");
  l.advance(t0 + 500ms);
  auto st = l.status_json();
  CHECK(st.find("initContainerStatuses")->as_array().at(0).at_path({"state", "terminated"})->get_string("reason") ==
        "Completed");
  CHECK(st.find("conditions")->as_array().at(0).get_string("status") == "True");
}

#include "actors/kubelet/cluster_shape.hpp"

TEST_CASE("a uniform cluster has numbered nodes with their GPUs, distinct node IPs and pod ranges") {
  auto c = uniform_cluster(3, 4);
  REQUIRE(c.nodes.size() == 3);
  CHECK(c.nodes[2].name == "node-2");
  CHECK(c.nodes[0].internal_ip != c.nodes[1].internal_ip);
  CHECK(c.nodes[0].pod_cidr != c.nodes[1].pod_cidr);
  auto node = node_object(c.nodes[1], "2026-11-21T20:00:00Z");
  CHECK(node.at_path({"status", "capacity"})->get_string("nvidia.com/gpu") == "4");
  CHECK(node.at_path({"metadata", "labels"})->get_string("kubernetes.io/hostname") == "node-1");
  bool ready = false;
  for (const auto& cond : node.at_path({"status", "conditions"})->as_array())
    ready = ready || (cond.get_string("type") == "Ready" && cond.get_string("status") == "True");
  CHECK(ready);
}

TEST_CASE("a node's info has the ten fields a kubelet sends, its machine ids fixed by its name") {
  auto c = uniform_cluster(2, 1);
  auto info = [](const node_shape& n, const char* at) { return *node_object(n, at).at_path({"status", "nodeInfo"}); };
  auto first = info(c.nodes[0], "2026-11-21T20:00:00Z");
  for (const char* field : {"architecture", "bootID", "containerRuntimeVersion", "kernelVersion", "kubeProxyVersion",
                            "kubeletVersion", "machineID", "operatingSystem", "osImage", "systemUUID"}) {
    INFO(field);
    CHECK_FALSE(first.get_string(field).empty());
  }
  CHECK(first.get_string("machineID").size() == 32);
  CHECK(first.get_string("machineID").find_first_not_of("0123456789abcdef") == std::string::npos);
  auto uuid = first.get_string("systemUUID");
  REQUIRE(uuid.size() == 36);
  CHECK((uuid[8] == '-' && uuid[13] == '-' && uuid[14] == '4' && uuid[18] == '-' && uuid[23] == '-'));
  CHECK(std::string("89ab").find(uuid[19]) != std::string::npos);

  auto again = info(c.nodes[0], "2026-11-21T21:00:00Z");
  CHECK(again.get_string("machineID") == first.get_string("machineID"));
  CHECK(again.get_string("systemUUID") == first.get_string("systemUUID"));
  CHECK(again.get_string("bootID") != first.get_string("bootID")); // registered again: a reboot
  auto other = info(c.nodes[1], "2026-11-21T20:00:00Z");
  CHECK(other.get_string("machineID") != first.get_string("machineID"));
  CHECK(other.get_string("systemUUID") != first.get_string("systemUUID"));

  auto process_node = c.nodes[1];
  process_node.labels["kozmo.io/runtime"] = "process";
  CHECK(info(process_node, "2026-11-21T20:00:00Z").get_string("containerRuntimeVersion") == "kozmo-process://0.1");
}

TEST_CASE("a cluster file expands counted entries and carries GPU types and labels") {
  auto c = parse_cluster_yaml(R"(
nodes:
  - name: v100
    count: 2
    gpus: 8
    gpuType: V100
    labels: {zone: a}
  - name: k80-solo
    gpus: 4
    gpuType: K80
)");
  REQUIRE(c.has_value());
  REQUIRE(c->nodes.size() == 3);
  CHECK(c->nodes[0].name == "v100-0");
  CHECK(c->nodes[1].labels.at("zone") == "a");
  CHECK(c->nodes[2].name == "k80-solo");
  CHECK(c->nodes[2].gpus == 4);
  auto node = node_object(c->nodes[2], "2026-11-21T20:00:00Z");
  CHECK(node.at_path({"metadata", "labels"})->get_string("kozmo.io/gpu-type") == "K80");
}

TEST_CASE("a cluster file with a mistake says which entry and field is wrong") {
  auto typo = parse_cluster_yaml("nodes:\n  - name: a\n    gpu: 8\n");
  REQUIRE_FALSE(typo.has_value());
  CHECK_THAT(typo.err().message, Catch::Contains("nodes[0]") && Catch::Contains("unknown field `gpu`"));
  auto no_name = parse_cluster_yaml("nodes:\n  - gpus: 8\n");
  REQUIRE_FALSE(no_name.has_value());
  CHECK_THAT(no_name.err().message, Catch::Contains("`name` is required"));
  auto not_yaml = parse_cluster_yaml("nodes: [");
  REQUIRE_FALSE(not_yaml.has_value());
  CHECK_THAT(not_yaml.err().message, Catch::Contains("not valid YAML"));
}
