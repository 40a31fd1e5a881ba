#include "actors/kubelet/mpi_delivery.hpp"
#include "actors/kubelet/process_lifecycle.hpp"
#include "actors/kubelet/process_spec.hpp"
#include "k8s/apiserver/pod_log_layout.hpp"

#include <catch2/catch.hpp>

using namespace kozmo;
using namespace kozmo::kubelet;
using namespace std::chrono_literals;

namespace {

const clock::time_point t0 = clock::time_point{} + std::chrono::hours(24 * 365 * 50);

process_pod_shape pod_of(std::vector<std::string> inits, std::vector<std::string> mains, std::string policy) {
  process_pod_shape p;
  p.uid = "u1";
  for (auto& n : inits)
    p.init_containers.push_back({n, "busybox", {}, {}});
  for (auto& n : mains)
    p.containers.push_back({n, "busybox", {}, {}});
  p.restart_policy = std::move(policy);
  p.host_ip = "10.0.0.1";
  p.pod_ip = "127.0.0.1";
  p.restart_backoff = 1000ms;
  return p;
}

const json::value& status_of(const json::value& st, const std::string& name, bool init = false) {
  for (const auto& c : st.find(init ? "initContainerStatuses" : "containerStatuses")->as_array())
    if (c.get_string("name") == name)
      return c;
  FAIL("no status for " << name);
  static json::value none;
  return none;
}

std::string condition(const json::value& st, const std::string& type) {
  for (const auto& c : st.find("conditions")->as_array())
    if (c.get_string("type") == type)
      return c.get_string("status");
  return "";
}

std::vector<std::string> names(const process_step& s) {
  std::vector<std::string> out;
  for (const auto& r : s.start)
    out.push_back(r.name);
  return out;
}

} // namespace

TEST_CASE("init containers run one after another, then every main container at once") {
  process_lifecycle l(pod_of({"a", "b"}, {"x", "y"}, "Never"), t0);
  CHECK(names(l.begin(t0)) == std::vector<std::string>{"a"});
  l.on_started("a", true, t0);
  CHECK(l.phase() == "Pending");
  CHECK(status_of(l.status_json(), "x").at_path({"state", "waiting"})->get_string("reason") == "PodInitializing");
  CHECK(names(l.on_exited("a", true, {0, "", ""}, t0 + 1s)) == std::vector<std::string>{"b"});
  l.on_started("b", true, t0 + 1s);
  CHECK(condition(l.status_json(), "Initialized") == "False");
  CHECK(names(l.on_exited("b", true, {0, "", ""}, t0 + 2s)) == std::vector<std::string>{"x", "y"});
  CHECK(condition(l.status_json(), "Initialized") == "True");
  l.on_started("x", false, t0 + 2s);
  CHECK(l.phase() == "Running");
  CHECK(condition(l.status_json(), "Ready") == "False"); // y is not running yet
  l.on_started("y", false, t0 + 2s);
  auto st = l.status_json();
  CHECK(condition(st, "Ready") == "True");
  CHECK(condition(st, "ContainersReady") == "True");
  CHECK(status_of(st, "x").get_bool("ready"));
  CHECK(status_of(st, "a", true).at_path({"state", "terminated"})->get_string("reason") == "Completed");
  CHECK(status_of(st, "a", true).get_bool("ready"));
}

TEST_CASE("a failing init container fails the pod under restartPolicy Never and no main container starts") {
  process_lifecycle l(pod_of({"a"}, {"x"}, "Never"), t0);
  l.begin(t0);
  l.on_started("a", true, t0);
  auto step = l.on_exited("a", true, {2, "", ""}, t0 + 1s);
  CHECK(step.start.empty());
  CHECK(!step.wake_after);
  CHECK(l.phase() == "Failed");
  auto st = l.status_json();
  CHECK(status_of(st, "a", true).at_path({"state", "terminated"})->get_int("exitCode") == 2);
  CHECK(status_of(st, "x").at_path({"state", "waiting"})->get_string("reason") == "PodInitializing");
}

TEST_CASE("a failing init container is retried with back-off under OnFailure, then the pod goes on") {
  process_lifecycle l(pod_of({"a"}, {"x"}, "OnFailure"), t0);
  l.begin(t0);
  l.on_started("a", true, t0);
  auto step = l.on_exited("a", true, {1, "", ""}, t0 + 1s);
  CHECK(step.start.empty());
  REQUIRE(step.wake_after);
  CHECK(*step.wake_after == 1000ms);
  CHECK(l.phase() == "Pending");
  auto a = status_of(l.status_json(), "a", true);
  CHECK(a.at_path({"state", "waiting"})->get_string("reason") == "CrashLoopBackOff");
  CHECK(a.get_int("restartCount") == 1);
  CHECK(l.on_timer(t0 + 1500ms).start.empty()); // not yet
  auto again = l.on_timer(t0 + 2s);
  REQUIRE(again.start.size() == 1);
  CHECK(again.start[0] == container_run{"a", true, 1});
  l.on_started("a", true, t0 + 2s);
  CHECK(names(l.on_exited("a", true, {0, "", ""}, t0 + 3s)) == std::vector<std::string>{"x"});
}

TEST_CASE("a main container that exits non-zero under Never ends the pod Failed with its exit code and times") {
  process_lifecycle l(pod_of({}, {"main"}, "Never"), t0);
  CHECK(names(l.begin(t0)) == std::vector<std::string>{"main"});
  CHECK(status_of(l.status_json(), "main").at_path({"state", "waiting"})->get_string("reason") == "ContainerCreating");
  l.on_started("main", false, t0 + 1s);
  CHECK(status_of(l.status_json(), "main").at_path({"state", "running", "startedAt"}));
  l.on_exited("main", false, {3, "bye", ""}, t0 + 5s);
  CHECK(l.phase() == "Failed");
  CHECK(l.finished());
  auto st = l.status_json();
  const auto* t = status_of(st, "main").at_path({"state", "terminated"});
  REQUIRE(t);
  CHECK(t->get_int("exitCode") == 3);
  CHECK(t->get_string("reason") == "Error");
  CHECK(t->get_string("message") == "bye");
  CHECK(t->get_string("startedAt") != t->get_string("finishedAt"));
  CHECK(condition(st, "Ready") == "False");
  bool completed = false;
  for (const auto& c : st.find("conditions")->as_array())
    completed = completed || c.get_string("reason") == "PodCompleted";
  CHECK(completed);
}

TEST_CASE("restart rules: Always restarts a clean exit, OnFailure only a failure") {
  SECTION("Always") {
    process_lifecycle l(pod_of({}, {"main"}, "Always"), t0);
    l.begin(t0);
    l.on_started("main", false, t0);
    auto step = l.on_exited("main", false, {0, "", ""}, t0 + 1s);
    CHECK(step.wake_after);
    CHECK(l.phase() == "Running");
    auto s = status_of(l.status_json(), "main");
    CHECK(s.get_int("restartCount") == 1);
    CHECK(s.at_path({"lastState", "terminated"})->get_string("reason") == "Completed");
  }
  SECTION("OnFailure, exit 0") {
    process_lifecycle l(pod_of({}, {"main"}, "OnFailure"), t0);
    l.begin(t0);
    l.on_started("main", false, t0);
    CHECK(!l.on_exited("main", false, {0, "", ""}, t0 + 1s).wake_after);
    CHECK(l.phase() == "Succeeded");
  }
  SECTION("OnFailure, exit 1: back-off doubles per restart") {
    process_lifecycle l(pod_of({}, {"main"}, "OnFailure"), t0);
    l.begin(t0);
    l.on_started("main", false, t0);
    CHECK(*l.on_exited("main", false, {1, "", ""}, t0).wake_after == 1000ms);
    CHECK(l.on_timer(t0 + 1s).start.size() == 1);
    l.on_started("main", false, t0 + 1s);
    CHECK(*l.on_exited("main", false, {1, "", ""}, t0 + 1s).wake_after == 2000ms);
    auto s = status_of(l.status_json(), "main");
    CHECK(s.get_int("restartCount") == 2);
    CHECK(s.at_path({"state", "waiting"})->get_string("reason") == "CrashLoopBackOff");
  }
}

TEST_CASE("a container that cannot start ends with StartError 128; a blocked one waits with its reason") {
  auto shape = pod_of({}, {"a", "b"}, "Never");
  shape.containers[1].blocked_reason = "CreateContainerError";
  shape.containers[1].blocked_message = "the process runtime needs a command";
  process_lifecycle l(shape, t0);
  CHECK(names(l.begin(t0)) == std::vector<std::string>{"a"});
  l.on_exited("a", false, {128, "exec: \"nope\": executable file not found in $PATH", "StartError"}, t0);
  auto st = l.status_json();
  CHECK(status_of(st, "a").at_path({"state", "terminated"})->get_string("reason") == "StartError");
  CHECK(status_of(st, "a").at_path({"state", "terminated"})->get_int("exitCode") == 128);
  CHECK(status_of(st, "b").at_path({"state", "waiting"})->get_string("reason") == "CreateContainerError");
  CHECK(!l.finished()); // b never ends
}

TEST_CASE("deletion signals the running containers, restarts nothing, and is over when the last exits") {
  process_lifecycle l(pod_of({}, {"main", "side"}, "Always"), t0);
  l.begin(t0);
  l.on_started("main", false, t0);
  l.on_started("side", false, t0);
  auto stop = l.begin_stop(t0 + 1s);
  CHECK(stop.signal_running);
  CHECK(!l.stopped());
  CHECK(!l.on_exited("main", false, {143, "", ""}, t0 + 2s).wake_after);
  CHECK(!l.stopped());
  l.on_exited("side", false, {137, "", ""}, t0 + 3s);
  CHECK(l.stopped());
  CHECK(status_of(l.status_json(), "main").at_path({"state", "terminated"})->get_int("exitCode") == 143);
}

TEST_CASE("the termination message: the file (at most 4 KiB), else the log tail on error with FallbackToLogsOnError") {
  CHECK(termination_message("done\n", "log", true, 1) == "done\n");
  CHECK(termination_message(std::string(5000, 'x'), "", false, 0).size() == 4096);
  CHECK(termination_message("", "a\nb\n", false, 1).empty());
  CHECK(termination_message("", "a\nb\n", true, 0).empty());
  CHECK(termination_message("", "a\nb\n", true, 1) == "a\nb\n");
  std::string log;
  for (int i = 0; i < 100; ++i)
    log += "line " + std::to_string(i) + "\n";
  auto tail = termination_message("", log, true, 1);
  CHECK(tail.rfind("line 20\n", 0) == 0); // the last 80 lines
  CHECK(termination_message("", std::string(3000, 'y'), true, 2).size() == 2048);
}

TEST_CASE("a pod's run spec: command, env sources, mounts, volumes; no command is CreateContainerError") {
  auto pod = json::parse(R"json({
    "metadata": {"name": "p", "namespace": "ns", "uid": "u", "labels": {"app": "demo"}},
    "spec": {"nodeName": "node-0", "restartPolicy": "Never",
      "initContainers": [{"name": "init", "image": "x", "command": ["sh", "-c", "echo $(GREETING)"]}],
      "containers": [{"name": "main", "image": "busybox", "args": ["a"],
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "env": [{"name": "GREETING", "value": "hi"},
                {"name": "FULL", "value": "$(GREETING) there $$(NOT)"},
                {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
                {"name": "PASS", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
                {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "mode", "optional": true}}}],
        "volumeMounts": [{"name": "work", "mountPath": "/work", "subPath": "sub"},
                         {"name": "creds", "mountPath": "/creds", "readOnly": true}]}],
      "volumes": [{"name": "work", "emptyDir": {}},
                  {"name": "creds", "secret": {"secretName": "db", "defaultMode": 256,
                                               "items": [{"key": "password", "path": "pw/file"}]}},
                  {"name": "share", "nfs": {"server": "nas", "path": "/"}}]}})json");
  REQUIRE(pod);
  auto spec = parse_run_spec(*pod);
  REQUIRE(spec);
  REQUIRE(spec->containers.size() == 2);
  CHECK(spec->containers[0].init);
  CHECK(spec->containers[0].blocked_reason.empty());
  const auto& main = spec->containers[1];
  CHECK(main.blocked_reason == "CreateContainerError");
  CHECK(main.blocked_message.find("needs a command") != std::string::npos);
  CHECK(main.fallback_to_logs_on_error);
  CHECK(main.termination_message_path == "/dev/termination-log");
  CHECK(main.mounts[0].sub_path == "sub");
  CHECK(main.mounts[1].read_only);

  auto refs = referenced_objects(*spec);
  CHECK(refs == std::vector<object_ref>{{object_ref::kind::secret, "db"}, {object_ref::kind::config_map, "cfg"}});

  fetched_objects objects;
  objects[{object_ref::kind::config_map, "cfg"}] = std::nullopt;
  objects[{object_ref::kind::secret, "db"}] = std::nullopt;
  auto missing = resolve_env(main, *pod, objects);
  REQUIRE(!missing);
  CHECK(missing.err().message == "secret \"db\" not found");

  objects[{object_ref::kind::secret, "db"}] = *json::parse(R"({"data": {"password": "czNjcjN0"}})"); // "s3cr3t"
  auto env = resolve_env(main, *pod, objects);
  REQUIRE(env);
  std::map<std::string, std::string> vars(env->begin(), env->end());
  CHECK(vars["FULL"] == "hi there $(NOT)");
  CHECK(vars["POD"] == "p");
  CHECK(vars["APP"] == "demo");
  CHECK(vars["PASS"] == "s3cr3t");
  CHECK(vars.count("MODE") == 0); // optional and absent
  CHECK(expand_references("echo $(GREETING) $(UNKNOWN)", *env) == "echo hi $(UNKNOWN)");

  auto files = volume_files(spec->volumes[1], objects);
  REQUIRE(files);
  CHECK(*files == std::vector<volume_file>{{"pw/file", "s3cr3t", 256}});
  CHECK(volume_files(spec->volumes[0], objects)->empty());
  auto nfs = volume_files(spec->volumes[2], objects);
  REQUIRE(!nfs);
  CHECK(nfs.err().message == "volume \"share\": the process runtime supports emptyDir, secret, configMap, "
                             "persistentVolumeClaim and hostPath volumes, not nfs");
  objects[{object_ref::kind::secret, "db"}] = std::nullopt;
  CHECK(volume_files(spec->volumes[1], objects).err().message ==
        "MountVolume.SetUp failed for volume \"creds\" : secret \"db\" not found");
}

TEST_CASE("a container whose image does not parse waits in InvalidImageName, before any want of a command") {
  auto pod = json::parse(R"json({
    "metadata": {"name": "p", "namespace": "ns", "uid": "u"},
    "spec": {"nodeName": "node-0", "restartPolicy": "Never",
      "containers": [{"name": "main", "image": "Busy Box", "command": ["true"]},
                     {"name": "side", "image": "BusyBox"}]}})json");
  REQUIRE(pod);
  auto spec = parse_run_spec(*pod);
  REQUIRE(spec);
  REQUIRE(spec->containers.size() == 2);
  for (const auto& c : spec->containers) {
    INFO(c.name);
    CHECK(c.blocked_reason == "InvalidImageName");
    CHECK(c.blocked_message.find("couldn't parse image reference \"" + c.image + "\"") != std::string::npos);
  }
}

TEST_CASE("the MPI launcher's kubectl-delivery step gets a command of the runtime's own; other commandless inits wait") {
  auto pod = json::parse(R"json({
    "metadata": {"name": "pi-launcher", "namespace": "ns", "uid": "u"},
    "spec": {"nodeName": "node-0", "restartPolicy": "Never",
      "initContainers": [
        {"name": "kubectl-delivery", "image": "kubeflow/kubectl-delivery:latest",
         "env": [{"name": "TARGET_DIR", "value": "/opt/kube"}],
         "volumeMounts": [{"name": "mpi-job-kubectl", "mountPath": "/opt/kube"}]},
        {"name": "other", "image": "busybox"},
        {"name": "kubectl-delivery-2", "image": "kubeflow/kubectl-delivery:latest",
         "env": [{"name": "TARGET_DIR", "value": "/opt/kube"}]}],
      "containers": [{"name": "kubectl-delivery", "image": "x", "env": [{"name": "TARGET_DIR", "value": "/t"}]}],
      "volumes": [{"name": "mpi-job-kubectl", "emptyDir": {}}]}})json");
  REQUIRE(pod);
  auto spec = parse_run_spec(*pod);
  REQUIRE(spec);
  REQUIRE(spec->containers.size() == 4);
  const auto& delivery = spec->containers[0];
  CHECK(delivery.blocked_reason.empty());
  CHECK(delivery.command == mpi_kubectl_delivery_command());
  REQUIRE(delivery.command.size() == 3);
  CHECK(delivery.command[2].find(mpi_kubectl_shim()) != std::string::npos);
  CHECK(delivery.command[2].find("\"$TARGET_DIR/kubectl\"") != std::string::npos);
  CHECK(spec->containers[1].blocked_reason == "CreateContainerError"); // not the delivery step
  CHECK(spec->containers[2].blocked_reason == "CreateContainerError"); // another name
  CHECK(spec->containers[3].blocked_reason == "CreateContainerError"); // a main container
  CHECK(mpi_kubectl_shim().find("/etc/mpi/hostfile") != std::string::npos);
}

TEST_CASE("container logs are CRI lines: written by the kubelet, read back as output with or without times") {
  std::string file = pod_logs::cri_line("2026-01-01T00:00:00.000000001Z", "stdout", false, "hello") +
                     pod_logs::cri_line("2026-01-01T00:00:00.000000002Z", "stderr", true, "a long ") +
                     pod_logs::cri_line("2026-01-01T00:00:00.000000003Z", "stderr", false, "line") +
                     "2026-01-01T00:00:00.000000004Z stdout F unfinished"; // no newline yet
  CHECK(file.rfind("2026-01-01T00:00:00.000000001Z stdout F hello\n", 0) == 0);
  CHECK(pod_logs::decode_cri(file, false) == "hello\na long line\n");
  CHECK(pod_logs::decode_cri(file, true) ==
        "2026-01-01T00:00:00.000000001Z hello\n2026-01-01T00:00:00.000000002Z a long line\n");
  CHECK(pod_logs::decode_cri("t stdout F rest\n", true, false) == "rest\n"); // continues a line
  CHECK(pod_logs::decode_cri("garbage\n", false).empty());
  CHECK(pod_logs::container_log("/w/logs/pods", "ns", "p", "u", "main", 2) == "/w/logs/pods/ns_p_u/main/2.log");
}

TEST_CASE("envFrom sets every key of a Secret or ConfigMap with its prefix, before env, which wins") {
  auto pod = json::parse(R"json({"metadata": {"name": "p", "namespace": "ns"}, "spec": {"containers": [
      {"name": "c", "image": "busybox", "command": ["true"],
       "envFrom": [{"secretRef": {"name": "s3-creds"}}, {"prefix": "CFG_", "configMapRef": {"name": "cfg", "optional": true}}],
       "env": [{"name": "AWS_REGION", "value": "eu"}, {"name": "AWS_ACCESS_KEY_ID", "value": "override"}]}]}})json");
  REQUIRE(pod);
  auto spec = parse_run_spec(*pod);
  REQUIRE(spec);
  const auto& c = spec->containers[0];
  CHECK(referenced_objects(*spec) ==
        std::vector<object_ref>{{object_ref::kind::secret, "s3-creds"}, {object_ref::kind::config_map, "cfg"}});
  fetched_objects objects;
  objects[{object_ref::kind::config_map, "cfg"}] = std::nullopt; // optional: nothing
  objects[{object_ref::kind::secret, "s3-creds"}] = std::nullopt;
  CHECK(resolve_env(c, *pod, objects).err().message == "secret \"s3-creds\" not found");
  // "S3RVER" and "c2VjcmV0" ("secret")
  objects[{object_ref::kind::secret, "s3-creds"}] =
      *json::parse(R"({"data": {"AWS_ACCESS_KEY_ID": "UzNSVkVS", "AWS_SECRET_ACCESS_KEY": "c2VjcmV0"}})");
  objects[{object_ref::kind::config_map, "cfg"}] = *json::parse(R"({"data": {"MODE": "fast"}})");
  auto env = resolve_env(c, *pod, objects);
  REQUIRE(env);
  std::map<std::string, std::string> vars;
  for (const auto& [k, v] : *env)
    vars[k] = v; // the last definition wins, as in the process's environment
  CHECK(vars["AWS_SECRET_ACCESS_KEY"] == "secret");
  CHECK(vars["CFG_MODE"] == "fast");
  CHECK(vars["AWS_ACCESS_KEY_ID"] == "override");
  CHECK(vars["AWS_REGION"] == "eu");
}
