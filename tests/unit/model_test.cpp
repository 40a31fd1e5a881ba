#include "k8s/model/codec.hpp"
#include "k8s/model/selector.hpp"
#include "k8s/model/time.hpp"
#include "k8s/model/watch.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <stdexcept>

using namespace kozmo::k8s;
namespace json = kozmo::json;

namespace {

// A pod as kube-apiserver v1.20 returns it (GET /api/v1/namespaces/wire-a/pods/train-0): server
// defaults, managedFields, and one container in each state.
constexpr std::string_view pod_json = R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"train-0",
"generateName":"train-","namespace":"wire-a","selfLink":"/api/v1/namespaces/wire-a/pods/train-0",
"uid":"fc59a1e2-7d0c-4a53-9d4e-0b6f5d3c2a10","resourceVersion":"444","generation":1,
"creationTimestamp":"2026-11-21T20:01:26Z","labels":{"app":"demo","kozmo.io/gang":"g1"},
"annotations":{"kozmo.io/bind-info":"{\"node\":\"n1\",\"gpus\":[0,1]}","note":"caf\u00e9 \u003cok\u003e"},
"ownerReferences":[{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","name":"train","uid":"0a1b2c3d",
"controller":true,"blockOwnerDeletion":true}],"finalizers":["kozmo.io/cells"],
"managedFields":[{"manager":"kubectl-create","operation":"Update","apiVersion":"v1",
"time":"2026-11-21T20:01:26Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},
"f:spec":{"f:containers":{"k:{\"name\":\"main\"}":{".":{},"f:image":{}}}}}}]},
"spec":{"volumes":[{"name":"default-token-x7k2p","secret":{"secretName":"default-token-x7k2p","defaultMode":420}}],
"initContainers":[{"name":"fetch","image":"busybox:1.36","command":["sh","-c"],"args":["wget -O /data/x http://x"],
"resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",
"imagePullPolicy":"IfNotPresent"}],
"containers":[{"name":"main","image":"pytorch/pytorch:2.1","command":["python","train.py"],"args":["--epochs","3"],
"workingDir":"/work","ports":[{"name":"master","containerPort":23456,"protocol":"TCP"}],
"env":[{"name":"RANK","value":"0"},{"name":"POD_NAME","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}},
{"name":"TOKEN","valueFrom":{"secretKeyRef":{"name":"s","key":"k","optional":true}}}],
"resources":{"limits":{"cpu":"4","memory":"16Gi","nvidia.com/gpu":"2"},"requests":{"cpu":"3500m","memory":"12Gi","nvidia.com/gpu":"2"}},
"volumeMounts":[{"name":"default-token-x7k2p","readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],
"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"},
{"name":"sidecar","image":"envoy:1.28","resources":{"requests":{"cpu":"100m"}},"imagePullPolicy":"IfNotPresent"}],
"restartPolicy":"OnFailure","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",
"nodeSelector":{"gpu.kozmo.io/type":"a100"},"serviceAccountName":"default","serviceAccount":"default",
"nodeName":"wire-node1","securityContext":{},"hostname":"train-0","subdomain":"train",
"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
{"matchExpressions":[{"key":"zone","operator":"In","values":["z1","z2"]}]}]}}},
"schedulerName":"kozmo","tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},
{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},
{"key":"nvidia.com/gpu","operator":"Equal","value":"present","effect":"NoSchedule"}],
"priorityClassName":"high","priority":1000,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},
"status":{"phase":"Running","conditions":[{"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-21T20:01:30Z"},
{"type":"Ready","status":"False","lastProbeTime":null,"lastTransitionTime":"2026-11-21T20:01:40Z","reason":"ContainersNotReady",
"message":"containers with unready status: [sidecar]"},{"type":"PodScheduled","status":"True","lastProbeTime":null,
"lastTransitionTime":"2026-11-21T20:01:26Z"}],"hostIP":"10.0.0.7","podIP":"10.244.1.9","podIPs":[{"ip":"10.244.1.9"}],
"startTime":"2026-11-21T20:01:27Z",
"initContainerStatuses":[{"name":"fetch","state":{"terminated":{"exitCode":0,"reason":"Completed",
"startedAt":"2026-11-21T20:01:28Z","finishedAt":"2026-11-21T20:01:29Z","containerID":"containerd://aaa"}},
"lastState":{},"ready":true,"restartCount":0,"image":"docker.io/library/busybox:1.36","imageID":"docker.io/library/busybox@sha256:1",
"containerID":"containerd://aaa"}],
"containerStatuses":[{"name":"main","state":{"running":{"startedAt":"2026-11-21T20:01:35Z"}},
"lastState":{"terminated":{"exitCode":137,"reason":"OOMKilled","message":"out of memory","startedAt":"2026-11-21T20:01:30Z",
"finishedAt":"2026-11-21T20:01:34Z","containerID":"containerd://bbb"}},"ready":true,"restartCount":1,
"image":"docker.io/pytorch/pytorch:2.1","imageID":"docker.io/pytorch/pytorch@sha256:2","containerID":"containerd://ccc","started":true},
{"name":"sidecar","state":{"waiting":{"reason":"ImagePullBackOff","message":"Back-off pulling image \"envoy:1.28\""}},
"lastState":{},"ready":false,"restartCount":0,"image":"envoy:1.28","imageID":"","started":false}],
"qosClass":"Burstable"}})";

constexpr std::string_view node_json = R"json({"kind":"Node","apiVersion":"v1","metadata":{"name":"gpu-node-1",
"uid":"5d1c","resourceVersion":"901","creationTimestamp":"2026-11-21T19:30:00Z",
"labels":{"kubernetes.io/hostname":"gpu-node-1","gpu.kozmo.io/type":"a100"},
"annotations":{"node.alpha.kubernetes.io/ttl":"0"}},
"spec":{"podCIDR":"10.244.1.0/24","podCIDRs":["10.244.1.0/24"],"unschedulable":true,
"taints":[{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule","timeAdded":"2026-11-21T19:40:00Z"},
{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"}]},
"status":{"capacity":{"cpu":"96","ephemeral-storage":"1902329264Ki","hugepages-1Gi":"0","memory":"1056561252Ki",
"nvidia.com/gpu":"8","pods":"110"},"allocatable":{"cpu":"95500m","memory":"1054361252Ki","nvidia.com/gpu":"8","pods":"110"},
"conditions":[{"type":"MemoryPressure","status":"False","lastHeartbeatTime":"2026-11-21T20:00:00Z",
"lastTransitionTime":"2026-11-21T19:30:05Z","reason":"KubeletHasSufficientMemory","message":"kubelet has sufficient memory available"},
{"type":"Ready","status":"True","lastHeartbeatTime":"2026-11-21T20:00:00Z","lastTransitionTime":"2026-11-21T19:30:20Z",
"reason":"KubeletReady","message":"kubelet is posting ready status"}],
"addresses":[{"type":"InternalIP","address":"10.0.0.7"},{"type":"Hostname","address":"gpu-node-1"}],
"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},
"nodeInfo":{"machineID":"m1","systemUUID":"u1","bootID":"b1","kernelVersion":"5.10.0-26-amd64",
"osImage":"Debian GNU/Linux 12 (bookworm)","containerRuntimeVersion":"containerd://1.6.20","kubeletVersion":"v1.20.2",
"kubeProxyVersion":"v1.20.2","operatingSystem":"linux","architecture":"amd64"},
"images":[{"names":["pytorch/pytorch:2.1"],"sizeBytes":7000000000}]}})json";

time_point at(std::string_view rfc3339) {
  auto t = parse_time(rfc3339);
  REQUIRE(t.has_value());
  return *t;
}

quantity qty(std::string_view s) {
  auto q = quantity::parse(s);
  REQUIRE(q.has_value());
  return *q;
}

} // namespace

TEST_CASE("a pod as kube-apiserver returns it decodes with every field Kozmo reads") {
  auto r = decode_pod(pod_json);
  INFO((r ? "" : r.err().message));
  REQUIRE(r.has_value());
  const pod& p = *r;

  CHECK(p.metadata.name == "train-0");
  CHECK(p.metadata.generate_name == "train-");
  CHECK(p.metadata.namespace_ == "wire-a");
  CHECK(p.metadata.uid == "fc59a1e2-7d0c-4a53-9d4e-0b6f5d3c2a10");
  CHECK(p.metadata.resource_version == "444");
  CHECK(p.metadata.generation == 1);
  CHECK(p.metadata.creation_timestamp == at("2026-11-21T20:01:26Z"));
  CHECK(p.metadata.labels.at("kozmo.io/gang") == "g1");
  CHECK(p.metadata.annotations.at("kozmo.io/bind-info") == R"({"node":"n1","gpus":[0,1]})");
  CHECK(p.metadata.annotations.at("note") == "caf\xc3\xa9 <ok>");
  REQUIRE(p.metadata.controller_ref() != nullptr);
  CHECK(p.metadata.controller_ref()->kind == "PyTorchJob");
  CHECK(p.metadata.owner_references[0].block_owner_deletion == true);
  CHECK(p.metadata.finalizers == std::vector<std::string>{"kozmo.io/cells"});

  const auto& s = p.spec;
  REQUIRE(s.init_containers.size() == 1);
  CHECK(s.init_containers[0].command == std::vector<std::string>{"sh", "-c"});
  REQUIRE(s.containers.size() == 2);
  const auto& main = s.containers[0];
  CHECK(main.image == "pytorch/pytorch:2.1");
  CHECK(main.args == std::vector<std::string>{"--epochs", "3"});
  CHECK(main.working_dir == "/work");
  REQUIRE(main.ports.size() == 1);
  CHECK(main.ports[0].container_port == 23456);
  CHECK(main.ports[0].protocol == "TCP");
  REQUIRE(main.env.size() == 3);
  CHECK(main.env[0].value == "0");
  REQUIRE(main.env[1].value_from.has_value());
  CHECK(main.env[1].value_from->field_ref->field_path == "metadata.name");
  CHECK(main.env[2].value_from->secret_key_ref->optional == true);
  CHECK(main.resources.limits.at("nvidia.com/gpu").value() == 2);
  CHECK(main.resources.limits.at("memory") == qty("16Gi"));
  CHECK(main.resources.requests.at("cpu").milli_value() == 3500);
  CHECK(s.containers[1].resources.requests.at("cpu").to_string() == "100m");
  CHECK(s.restart_policy == "OnFailure");
  CHECK(s.termination_grace_period_seconds == 30);
  CHECK(s.node_selector.at("gpu.kozmo.io/type") == "a100");
  CHECK(s.node_name == "wire-node1");
  CHECK(s.scheduler_name == "kozmo");
  CHECK(s.hostname == "train-0");
  CHECK(s.subdomain == "train");
  CHECK(s.service_account_name == "default");
  CHECK(s.priority == 1000);
  CHECK(s.priority_class_name == "high");
  REQUIRE(s.tolerations.size() == 3);
  CHECK(s.tolerations[0].toleration_seconds == 300);
  CHECK(s.tolerations[2].operator_ == "Equal");
  CHECK(s.tolerations[2].value == "present");
  REQUIRE(s.affinity.has_value());
  REQUIRE(s.affinity->node_affinity.has_value());
  REQUIRE(s.affinity->node_affinity->required.has_value());
  const auto& terms = *s.affinity->node_affinity->required;
  REQUIRE(terms.size() == 1);
  REQUIRE(terms[0].match_expressions.size() == 1);
  CHECK(terms[0].match_expressions[0].key == "zone");
  CHECK(terms[0].match_expressions[0].operator_ == "In");
  CHECK(terms[0].match_expressions[0].values == std::vector<std::string>{"z1", "z2"});
  CHECK(s.affinity->node_affinity->preferred.empty());
  CHECK(s.affinity->pod_anti_affinity.is_null());

  const auto& st = p.status;
  CHECK(st.phase == "Running");
  REQUIRE(st.conditions.size() == 3);
  const condition* ready = find_condition(st.conditions, "Ready");
  REQUIRE(ready != nullptr);
  CHECK(ready->status == "False");
  CHECK(ready->reason == "ContainersNotReady");
  CHECK_FALSE(ready->last_probe_time.has_value());
  CHECK(ready->last_transition_time == at("2026-11-21T20:01:40Z"));
  CHECK(st.host_ip == "10.0.0.7");
  CHECK(st.pod_ip == "10.244.1.9");
  CHECK(st.pod_ips == std::vector<std::string>{"10.244.1.9"});
  CHECK(st.start_time == at("2026-11-21T20:01:27Z"));
  CHECK(st.qos_class == "Burstable");

  const auto& init = st.init_container_statuses.at(0).state;
  REQUIRE(init.terminated.has_value());
  CHECK(init.terminated->exit_code == 0);
  CHECK(init.terminated->reason == "Completed");
  CHECK(init.terminated->finished_at == at("2026-11-21T20:01:29Z"));

  const auto& running = st.container_statuses.at(0);
  REQUIRE(running.state.running.has_value());
  CHECK(running.state.running->started_at == at("2026-11-21T20:01:35Z"));
  CHECK_FALSE(running.state.waiting.has_value());
  REQUIRE(running.last_state.terminated.has_value());
  CHECK(running.last_state.terminated->exit_code == 137);
  CHECK(running.last_state.terminated->reason == "OOMKilled");
  CHECK(running.restart_count == 1);
  CHECK(running.ready);
  CHECK(running.started == true);
  CHECK(running.image_id == "docker.io/pytorch/pytorch@sha256:2");
  CHECK(running.container_id == "containerd://ccc");

  const auto& waiting = st.container_statuses.at(1);
  REQUIRE(waiting.state.waiting.has_value());
  CHECK(waiting.state.waiting->reason == "ImagePullBackOff");
  CHECK(waiting.state.waiting->message == "Back-off pulling image \"envoy:1.28\"");
  CHECK(waiting.last_state == container_state{});
  CHECK(waiting.started == false);
}

TEST_CASE("the fast decoder and the tree decoder agree on the same document") {
  auto tree = json::parse(pod_json);
  REQUIRE(tree.has_value());
  auto from_tree = from_json<pod>(*tree);
  auto fast = decode_pod(pod_json);
  REQUIRE(from_tree.has_value());
  REQUIRE(fast.has_value());
  CHECK(*from_tree == *fast);

  auto node_tree = json::parse(node_json);
  REQUIRE(node_tree.has_value());
  CHECK(*from_json<node>(*node_tree) == *decode_node(node_json));
}

TEST_CASE("a GPU node decodes with capacity, taints, conditions and node info") {
  auto r = decode_node(node_json);
  INFO((r ? "" : r.err().message));
  REQUIRE(r.has_value());
  const node& n = *r;
  CHECK(n.metadata.name == "gpu-node-1");
  CHECK(n.metadata.labels.at("gpu.kozmo.io/type") == "a100");
  CHECK(n.spec.unschedulable);
  CHECK(n.spec.pod_cidr == "10.244.1.0/24");
  REQUIRE(n.spec.taints.size() == 2);
  CHECK(n.spec.taints[0].time_added == at("2026-11-21T19:40:00Z"));
  CHECK(n.spec.taints[1].value == "present");
  CHECK(n.status.capacity.at("nvidia.com/gpu").value() == 8);
  CHECK(n.status.capacity.at("nvidia.com/gpu").to_string() == "8");
  CHECK(n.status.capacity.at("memory").to_string() == "1056561252Ki");
  CHECK(n.status.capacity.at("hugepages-1Gi").is_zero());
  CHECK(n.status.allocatable.at("cpu").milli_value() == 95500);
  const condition* ready = find_condition(n.status.conditions, "Ready");
  REQUIRE(ready != nullptr);
  CHECK(ready->status == "True");
  CHECK(ready->last_heartbeat_time == at("2026-11-21T20:00:00Z"));
  REQUIRE(n.status.addresses.size() == 2);
  CHECK(n.status.addresses[0].address == "10.0.0.7");
  CHECK(n.status.node_info.kubelet_version == "v1.20.2");
  CHECK(n.status.node_info.architecture == "amd64");
  CHECK(n.status.node_info.boot_id == "b1");
  CHECK(n.status.node_info.system_uuid == "u1");
  CHECK(n.status.node_info.kube_proxy_version == "v1.20.2");
  auto back = to_json(n);
  CHECK(back.at_path({"status", "nodeInfo"})->get_string("bootID") == "b1");
  CHECK(back.at_path({"status", "nodeInfo"})->get_string("systemUUID") == "u1");
}

TEST_CASE("decode errors name the field path of the bad value") {
  auto bad_quantity = decode_pod(
      R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"memory":"8Xi"}}}]}})");
  REQUIRE_FALSE(bad_quantity.has_value());
  CHECK(bad_quantity.err().code == 400);
  CHECK(bad_quantity.err().message ==
        "spec.containers[0].resources.limits[memory]: quantity \"8Xi\" is invalid: quantities must match the "
        "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");

  auto bad_type = decode_pod(R"({"spec":{"containers":[{"name":"a"},{"name":"b","ports":[{"containerPort":"80"}]}]}})");
  REQUIRE_FALSE(bad_type.has_value());
  CHECK(bad_type.err().message == "spec.containers[1].ports[0].containerPort: expected an integer, found a string");

  auto bad_time = decode_pod(R"({"metadata":{"creationTimestamp":"yesterday"}})");
  REQUIRE_FALSE(bad_time.has_value());
  CHECK(bad_time.err().message.starts_with("metadata.creationTimestamp: invalid RFC 3339 time \"yesterday\""));

  auto bad_label = decode_pod(R"({"metadata":{"labels":{"app":3}}})");
  REQUIRE_FALSE(bad_label.has_value());
  CHECK(bad_label.err().message == "metadata.labels[app]: expected a string, found a number");

  auto not_object = decode_pod("[1,2]");
  REQUIRE_FALSE(not_object.has_value());
  CHECK(not_object.err().message == "expected an object, found an array");

  auto too_big = decode_pod(R"({"spec":{"priority":3000000000}})");
  REQUIRE_FALSE(too_big.has_value());
  CHECK(too_big.err().message == "spec.priority: value 3000000000 does not fit in 32 bits");

  // The tree decoder reports the same paths.
  auto tree = json::parse(R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"memory":"8Xi"}}}]}})");
  auto from_tree = from_json<pod>(*tree);
  REQUIRE_FALSE(from_tree.has_value());
  CHECK(from_tree.err().message == bad_quantity.err().message);
}

TEST_CASE("quantities given as JSON numbers are accepted like Kubernetes does") {
  auto p = decode_pod(R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":2,"memory":1.5}}}]}})");
  REQUIRE(p.has_value());
  CHECK(p->spec.containers[0].resources.limits.at("cpu").value() == 2);
  CHECK(p->spec.containers[0].resources.limits.at("memory").to_string() == "1500m");
}

TEST_CASE("a pod built in code survives to_json and back unchanged") {
  pod p;
  p.metadata.name = "worker-1";
  p.metadata.namespace_ = "jobs";
  p.metadata.labels = {{"kozmo.io/replica-type", "worker"}};
  p.metadata.annotations = {{"kozmo.io/gang", "g1"}};
  p.metadata.owner_references.push_back({"kubeflow.org/v1", "PyTorchJob", "train", "u-1", true, true});
  p.metadata.creation_timestamp = at("2026-11-21T20:01:26Z");
  container c;
  c.name = "pytorch";
  c.image = "pytorch/pytorch:2.1";
  c.command = {"python", "train.py"};
  c.env.push_back({"MASTER_ADDR", "train-master-0", std::nullopt});
  env_var pod_name{"POD_NAME", "", env_var_source{}};
  pod_name.value_from->field_ref = object_field_selector{"v1", "metadata.name"};
  c.env.push_back(pod_name);
  c.ports.push_back({"pytorchjob-port", 23456, "TCP", 0});
  c.resources.limits = {{"nvidia.com/gpu", qty("8")}, {"memory", qty("64Gi")}};
  c.resources.requests = {{"cpu", qty("7500m")}};
  p.spec.containers.push_back(c);
  p.spec.restart_policy = "Never";
  p.spec.scheduler_name = "kozmo";
  p.spec.priority = 10;
  p.spec.termination_grace_period_seconds = 30;
  p.spec.tolerations.push_back({"nvidia.com/gpu", "Exists", "", "NoSchedule", std::nullopt});
  p.spec.affinity.emplace();
  p.spec.affinity->node_affinity.emplace();
  p.spec.affinity->node_affinity->required = std::vector<node_selector_term>{
      node_selector_term{{{"gpu.kozmo.io/type", "In", {"a100", "h100"}}}, {{"metadata.name", "NotIn", {"bad-node"}}}}};
  p.spec.affinity->node_affinity->preferred.push_back({10, node_selector_term{{{"zone", "Exists", {}}}, {}}});
  p.spec.affinity->pod_anti_affinity = *json::parse(R"({"requiredDuringSchedulingIgnoredDuringExecution":[]})");
  p.status.phase = "Failed";
  container_status cs;
  cs.name = "pytorch";
  cs.state.terminated = container_state_terminated{1, 0, "Error", "boom", at("2026-11-21T20:02:00Z"),
                                                   at("2026-11-21T20:03:00Z"), "containerd://x"};
  cs.last_state.waiting = container_state_waiting{"CrashLoopBackOff", "back-off"};
  cs.restart_count = 3;
  p.status.container_statuses.push_back(cs);
  p.status.conditions.push_back({"Ready", "False", "PodFailed", "", at("2026-11-21T20:03:00Z"), {}, {}});

  json::value v = to_json(p);
  CHECK(v.get_string("kind") == "Pod");
  CHECK(v.get_string("apiVersion") == "v1");
  CHECK(v.at_path({"spec", "containers"})->as_array()[0].at_path({"resources", "limits"})->get_string("memory") == "64Gi");
  CHECK(v.at_path({"metadata", "creationTimestamp"})->as_string() == "2026-11-21T20:01:26Z");
  CHECK(v.at_path({"spec", "nodeName"}) == nullptr); // empty fields are omitted

  auto back = from_json<pod>(v);
  REQUIRE(back.has_value());
  CHECK(*back == p);
  auto fast = decode_pod(json::dump(v));
  REQUIRE(fast.has_value());
  CHECK(*fast == p);
}

TEST_CASE("every other kind survives to_json and back unchanged") {
  node n;
  n.metadata.name = "n1";
  n.spec.taints.push_back({"gpu", "bad", "NoSchedule", at("2026-11-21T20:00:00Z")});
  n.status.capacity = {{"nvidia.com/gpu", qty("8")}, {"memory", qty("512Gi")}};
  n.status.allocatable = {{"nvidia.com/gpu", qty("8")}};
  n.status.conditions.push_back({"Ready", "True", "KubeletReady", "ok", at("2026-11-21T20:00:00Z"), {}, at("2026-11-21T20:00:05Z")});
  n.status.addresses.push_back({"InternalIP", "10.0.0.1"});
  n.status.node_info.kubelet_version = "kozmo-sim";
  CHECK(*from_json<node>(to_json(n)) == n);

  service s;
  s.metadata.name = "train-worker-0";
  s.spec.cluster_ip = "None";
  s.spec.selector = {{"job", "train"}};
  s.spec.ports.push_back({"pytorchjob-port", "TCP", 23456, int_or_string{false, 23456, ""}, 0});
  s.spec.ports.push_back({"http", "TCP", 80, int_or_string{true, 0, "http"}, 0});
  auto sv = to_json(s);
  CHECK(sv.at_path({"spec", "clusterIP"})->as_string() == "None");
  CHECK(*from_json<service>(sv) == s);

  event e;
  e.metadata.name = "train.1789";
  e.metadata.namespace_ = "jobs";
  e.involved_object = {"PyTorchJob", "jobs", "train", "u-1", "kubeflow.org/v1", "", ""};
  e.reason = "JobSucceeded";
  e.message = "PyTorchJob train is successfully completed.";
  e.type = "Normal";
  e.count = 1;
  e.first_timestamp = e.last_timestamp = at("2026-11-21T20:05:00Z");
  e.source.component = "kozmo";
  e.reporting_component = "kozmo";
  CHECK(*from_json<event>(to_json(e)) == e);

  lease l;
  l.metadata.name = "kozmo";
  l.spec.holder_identity = "kozmo-0";
  l.spec.lease_duration_seconds = 15;
  l.spec.acquire_time = at("2026-11-21T20:00:00.123456Z");
  l.spec.renew_time = at("2026-11-21T20:00:10.5Z");
  l.spec.lease_transitions = 0;
  auto lv = to_json(l);
  CHECK(lv.get_string("apiVersion") == "coordination.k8s.io/v1");
  CHECK(lv.at_path({"spec", "acquireTime"})->as_string() == "2026-11-21T20:00:00.123456Z");
  CHECK(*from_json<lease>(lv) == l);

  namespace_object ns;
  ns.metadata.name = "jobs";
  ns.phase = "Active";
  ns.finalizers = {"kubernetes"};
  CHECK(*from_json<namespace_object>(to_json(ns)) == ns);

  pod_template t;
  t.metadata.name = "tpl";
  t.template_.metadata.labels = {{"app", "x"}};
  t.template_.spec.containers.push_back(container{});
  t.template_.spec.containers[0].name = "c";
  CHECK(*from_json<pod_template>(to_json(t)) == t);
}

TEST_CASE("a custom object keeps the fields the model does not know") {
  constexpr std::string_view doc = R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob",
    "metadata":{"name":"train","namespace":"jobs","resourceVersion":"12","managedFields":[{"manager":"kubectl"}]},
    "spec":{"runPolicy":{"cleanPodPolicy":"None"},"pytorchReplicaSpecs":{"Worker":{"replicas":3}}},
    "status":{"conditions":[{"type":"Running","status":"True"}]}})";
  auto obj = decode_custom_object(doc);
  REQUIRE(obj.has_value());
  CHECK(obj->metadata.resource_version == "12");
  CHECK(obj->document.at_path({"spec", "runPolicy"})->get_string("cleanPodPolicy") == "None");

  obj->metadata.labels["kozmo.io/queue"] = "default";
  json::value out = to_json(*obj);
  CHECK(out.at_path({"metadata", "labels"})->get_string("kozmo.io/queue") == "default");
  CHECK(out.at_path({"metadata", "managedFields"}) != nullptr);
  CHECK(out.at_path({"spec", "pytorchReplicaSpecs", "Worker"})->get_int("replicas") == 3);
  auto again = from_json<custom_object>(out);
  REQUIRE(again.has_value());
  CHECK(again->metadata == obj->metadata);
  CHECK(again->kind == "PyTorchJob");
}

TEST_CASE("a Status body decodes into an error a caller can act on") {
  auto st = decode_status(
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"p3\" already exists","reason":"AlreadyExists","details":{"name":"p3","kind":"pods"},"code":409})");
  REQUIRE(st.has_value());
  auto e = st->to_error();
  CHECK(e.code == 409);
  CHECK(e.reason == "AlreadyExists");
  CHECK(e.message == "pods \"p3\" already exists");
  CHECK(st->details.get_string("name") == "p3");
  CHECK(*from_json<api_status>(to_json(*st)) == *st);
}

TEST_CASE("RFC 3339 times parse and print as Kubernetes writes them") {
  auto t = at("2026-11-21T20:01:26Z");
  CHECK(format_time(t) == "2026-11-21T20:01:26Z");
  CHECK(format_micro_time(t) == "2026-11-21T20:01:26.000000Z");
  CHECK(at("2026-11-21T22:01:26+02:00") == t);
  CHECK(at("2026-11-21T19:31:26-00:30") == t);
  auto micro = at("2026-11-21T20:01:26.123456789Z");
  CHECK(format_micro_time(micro) == "2026-11-21T20:01:26.123456Z");
  CHECK(format_time(micro) == "2026-11-21T20:01:26Z");
  CHECK(format_time(at("1969-12-31T23:59:59Z")) == "1969-12-31T23:59:59Z");
  CHECK(format_time(at("2024-02-29T00:00:00Z")) == "2024-02-29T00:00:00Z");
  for (auto bad : {"", "2026-11-21", "2026-11-21 20:01:26Z", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
                   "2026-11-21T20:01:26", "2026-11-21T20:01:26.Z", "2026-11-21T25:00:00Z"}) {
    INFO(bad);
    CHECK_FALSE(parse_time(bad).has_value());
  }
}

TEST_CASE("services, events, namespaces and pod templates decode as the server returns them") {
  auto svc = decode_service(
      R"({"kind":"Service","apiVersion":"v1","metadata":{"name":"train-worker-0","namespace":"jobs","resourceVersion":"31"},
          "spec":{"ports":[{"name":"pytorchjob-port","protocol":"TCP","port":23456,"targetPort":23456},
                           {"name":"web","protocol":"TCP","port":80,"targetPort":"http"}],
                  "selector":{"job-name":"train","replica-index":"0"},"clusterIP":"None","clusterIPs":["None"],
                  "type":"ClusterIP","sessionAffinity":"None"},"status":{"loadBalancer":{}}})");
  REQUIRE(svc.has_value());
  CHECK(svc->spec.cluster_ip == "None");
  CHECK(svc->spec.type == "ClusterIP");
  CHECK(svc->spec.selector.at("replica-index") == "0");
  REQUIRE(svc->spec.ports.size() == 2);
  CHECK(svc->spec.ports[0].target_port == int_or_string{false, 23456, ""});
  CHECK(svc->spec.ports[1].target_port == int_or_string{true, 0, "http"});

  auto ev = decode_event(
      R"({"kind":"Event","apiVersion":"v1","metadata":{"name":"p1.1789a","namespace":"wire-a","resourceVersion":"450"},
          "involvedObject":{"kind":"Pod","namespace":"wire-a","name":"p1","uid":"fc59","apiVersion":"v1","resourceVersion":"444"},
          "reason":"Scheduled","message":"Successfully assigned wire-a/p1 to wire-node1","source":{"component":"default-scheduler"},
          "firstTimestamp":"2026-11-21T20:01:26Z","lastTimestamp":"2026-11-21T20:01:27Z","count":2,"type":"Normal",
          "eventTime":null,"reportingComponent":"","reportingInstance":""})");
  REQUIRE(ev.has_value());
  CHECK(ev->involved_object.name == "p1");
  CHECK(ev->involved_object.uid == "fc59");
  CHECK(ev->source.component == "default-scheduler");
  CHECK(ev->count == 2);
  CHECK(ev->last_timestamp == at("2026-11-21T20:01:27Z"));
  CHECK_FALSE(ev->event_time.has_value());

  auto ns = decode_namespace(
      R"({"kind":"Namespace","apiVersion":"v1","metadata":{"name":"jobs"},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Terminating"}})");
  REQUIRE(ns.has_value());
  CHECK(ns->phase == "Terminating");
  CHECK(ns->finalizers == std::vector<std::string>{"kubernetes"});

  auto tpl = decode<pod_template_spec>(
      R"({"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"pytorch","image":"img","resources":{"limits":{"nvidia.com/gpu":1}}}]}})");
  REQUIRE(tpl.has_value());
  CHECK(tpl->metadata.labels.at("app") == "x");
  CHECK(tpl->spec.containers.at(0).resources.limits.at("nvidia.com/gpu").value() == 1);
}

TEST_CASE("label and resource maps read like std::map and convert to and from it") {
  string_map labels{{"tier", "web"}, {"app", "demo"}};
  labels["zone"] = "a";
  labels.emplace("app", "ignored"); // present: unchanged, as std::map does
  labels.insert_or_assign(std::string("tier"), std::string("api"));
  CHECK(labels.size() == 3);
  CHECK(labels.begin()->first == "app");
  CHECK(labels.at("app") == "demo");
  CHECK(labels.count("tier") == 1);
  CHECK(labels.find(std::string_view("zone"))->second == "a");
  CHECK(labels.find("missing") == labels.end());
  CHECK_THROWS_AS(labels.at("missing"), std::out_of_range);
  CHECK(labels.erase("zone") == 1);
  CHECK_FALSE(labels.contains("zone"));

  std::map<std::string, std::string> as_map = labels;
  CHECK(as_map == std::map<std::string, std::string>{{"app", "demo"}, {"tier", "api"}});
  string_map back = as_map;
  CHECK(back == labels);
  CHECK(label_selector::from_set(labels).to_string() == "app=demo,tier=api");

  resource_list r{{"memory", quantity::parse("1Gi").value()}, {"cpu", quantity::from_milli(500)}};
  r["nvidia.com/gpu"] = quantity::from_int(2);
  std::vector<std::string> keys;
  for (auto& [k, q] : r)
    keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"cpu", "memory", "nvidia.com/gpu"});
  CHECK(to_json(r).get_string("cpu") == "500m");
}

TEST_CASE("Go durations parse and print as Go does") {
  using namespace std::chrono;
  CHECK(parse_go_duration("1h30m").value() == minutes(90));
  CHECK(parse_go_duration("1.5s").value() == milliseconds(1500));
  CHECK(parse_go_duration("300ms").value() == milliseconds(300));
  CHECK(parse_go_duration("2500us").value() == milliseconds(3)); // rounded
  CHECK(parse_go_duration("-5s").value() == seconds(-5));
  CHECK(parse_go_duration("0").value() == milliseconds(0));
  CHECK_FALSE(parse_go_duration("5").has_value()); // a unit is required but for 0
  CHECK_FALSE(parse_go_duration("5 min").has_value());
  CHECK_FALSE(parse_go_duration("").has_value());
  CHECK(format_go_duration(minutes(3)) == "3m0s");
  CHECK(format_go_duration(hours(1)) == "1h0m0s");
  CHECK(format_go_duration(milliseconds(90500)) == "1m30.5s");
  CHECK(format_go_duration(milliseconds(250)) == "250ms");
  CHECK(format_go_duration(milliseconds(0)) == "0s");
  CHECK(format_go_duration(seconds(30)) == "30s");
}
