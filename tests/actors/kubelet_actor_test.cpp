// Simulated kubelets and the binder, through the embedding API (kozmo::engine) and the
// embedded API server, observed the way a user would: with GETs of pods, nodes and events.
#include "k8s/client/client.hpp"
#include "runtime/engine_internal.hpp"

#include "tests/actors/support/api_polling.hpp"

#include <catch2/catch.hpp>

#include <thread>

using namespace kozmo;
using namespace std::chrono_literals;

namespace {

struct local_cluster {
  engine e;
  std::shared_ptr<client::client> cli;

  explicit local_cluster(int nodes = 1, int gpus = 4, bool faults = false) : e(options(nodes, gpus, faults)) {
    auto st = e.start();
    REQUIRE(st.has_value());
    cli = engine_internal::api(e);
    // Pods are created once the nodes have registered, as a user would see them first.
    for (int i = 0; i < 100; ++i) {
      auto list = cli->list({"", "v1", "nodes", "", "", ""});
      if (list && static_cast<int>(list->find("items")->as_array().size()) == nodes)
        break;
      std::this_thread::sleep_for(50ms);
    }
  }

  static engine_options options(int nodes, int gpus, bool faults) {
    engine_options o;
    o.api.embedded = true;
    o.api.fault_injection = faults;
    o.parts.nodes = kozmo::uniform_nodes(nodes, gpus);
    o.parts.binder = true;
    return o;
  }

  void create_pod(const std::string& name, const std::string& annotations, const std::string& restart = "Never",
                  int gpus = 1) {
    auto body = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                            R"(","annotations":{)" + annotations + R"(}},"spec":{"restartPolicy":")" + restart +
                            R"(","containers":[{"name":"main","image":"busybox:1.36","resources":{"limits":{"nvidia.com/gpu":")" +
                            std::to_string(gpus) + R"("}}}]}})");
    REQUIRE(body.has_value());
    auto r = cli->create({"", "v1", "pods", "default", "", ""}, *body);
    INFO((r ? "" : r.err().message));
    REQUIRE(r.has_value());
  }

  expected<json::value> pod(const std::string& name) { return cli->get({"", "v1", "pods", "default", name, ""}); }

  // Polls until `pred` holds for the pod (up to `timeout`); returns the last state seen.
  json::value wait_pod(const std::string& name, const std::function<bool(const json::value&)>& pred,
                       std::chrono::milliseconds timeout = 20s) {
    return test::poll_until([&] { return pod(name); }, pred, timeout);
  }

  // The reasons and messages of the object's events, one per line.
  std::string events_of(const std::string& name) { return test::events_text(*cli, "default", name); }
};

std::string phase(const json::value& pod) {
  const auto* st = pod.find("status");
  return st ? st->get_string("phase") : "";
}

const json::value* main_status(const json::value& pod) {
  const auto* cs = pod.at_path({"status", "containerStatuses"});
  return cs && cs->is_array() && !cs->as_array().empty() ? &cs->as_array().front() : nullptr;
}

std::string waiting_reason(const json::value& pod) {
  const auto* cs = main_status(pod);
  const auto* w = cs ? cs->at_path({"state", "waiting"}) : nullptr;
  return w ? w->get_string("reason") : "";
}

} // namespace

TEST_CASE("a simulated node registers Ready with its GPU capacity") {
  local_cluster c(2, 4);
  json::value node;
  for (int i = 0; i < 100; ++i) {
    auto n = c.cli->get({"", "v1", "nodes", "", "node-1", ""});
    if (n) {
      node = *n;
      break;
    }
    std::this_thread::sleep_for(100ms);
  }
  REQUIRE(node.is_object());
  CHECK(node.at_path({"status", "capacity"})->get_string("nvidia.com/gpu") == "4");
  bool ready = false;
  for (const auto& cond : node.at_path({"status", "conditions"})->as_array())
    ready = ready || (cond.get_string("type") == "Ready" && cond.get_string("status") == "True");
  CHECK(ready);
  auto lease = c.cli->get({"coordination.k8s.io", "v1", "leases", "kube-node-lease", "node-1", ""});
  REQUIRE(lease.has_value());
  CHECK(lease->at_path({"spec"})->get_string("holderIdentity") == "node-1");
}

TEST_CASE("a pod is bound, runs and succeeds with its container's exit code and timestamps filled in") {
  local_cluster c;
  c.create_pod("ok", R"("kozmo.io/sim-duration":"1s","kozmo.io/sim-pull-duration":"100ms")");
  auto p = c.wait_pod("ok", [](const json::value& p) { return phase(p) == "Succeeded"; });
  REQUIRE(phase(p) == "Succeeded");
  CHECK(p.at_path({"spec"})->get_string("nodeName") == "node-0");
  const auto* term = main_status(p)->at_path({"state", "terminated"});
  REQUIRE(term);
  CHECK(term->get_int("exitCode", -1) == 0);
  CHECK(term->get_string("reason") == "Completed");
  CHECK_FALSE(term->get_string("startedAt").empty());
  CHECK_FALSE(term->get_string("finishedAt").empty());
  CHECK_FALSE(p.at_path({"status"})->get_string("podIP").empty());
  auto events = c.events_of("ok");
  CHECK_THAT(events, Catch::Contains("Scheduled: Successfully assigned default/ok to node-0"));
  CHECK_THAT(events, Catch::Contains("Started"));
}

TEST_CASE("a container scripted to exit 3 under restartPolicy Never leaves the pod Failed with exit code 3") {
  local_cluster c;
  c.create_pod("fails", R"("kozmo.io/sim-duration":"300ms","kozmo.io/sim-exit-code":"3")");
  auto p = c.wait_pod("fails", [](const json::value& p) { return phase(p) == "Failed"; });
  REQUIRE(phase(p) == "Failed");
  const auto* term = main_status(p)->at_path({"state", "terminated"});
  REQUIRE(term);
  CHECK(term->get_int("exitCode") == 3);
  CHECK(term->get_string("reason") == "Error");
}

TEST_CASE("under OnFailure a failing container is restarted and the restart count shows it") {
  local_cluster c;
  c.create_pod("flaky",
               R"("kozmo.io/sim-duration":"200ms","kozmo.io/sim-exit-code":"1","kozmo.io/sim-fail-times":"2","kozmo.io/sim-restart-backoff":"200ms")",
               "OnFailure");
  auto p = c.wait_pod("flaky", [](const json::value& p) { return phase(p) == "Succeeded"; });
  REQUIRE(phase(p) == "Succeeded");
  CHECK(main_status(p)->get_int("restartCount") == 2);
  CHECK(main_status(p)->at_path({"lastState", "terminated"})->get_int("exitCode") == 1);
  CHECK_THAT(c.events_of("flaky"), Catch::Contains("BackOff"));
}

TEST_CASE("an image that cannot be pulled leaves the pod Pending in ImagePullBackOff with a Warning event") {
  local_cluster c;
  c.create_pod("nopull", R"("kozmo.io/sim-fail":"ImagePullBackOff","kozmo.io/sim-pull-duration":"100ms")");
  auto p = c.wait_pod("nopull", [](const json::value& p) { return waiting_reason(p) == "ImagePullBackOff"; });
  CHECK(waiting_reason(p) == "ImagePullBackOff");
  CHECK(phase(p) == "Pending");
  CHECK_THAT(c.events_of("nopull"), Catch::Contains("failed to pull"));
}

TEST_CASE("a malformed simulation annotation fails the pod's start with an event naming it, and the node carries on") {
  local_cluster c;
  c.create_pod("typo", R"("kozmo.io/sim-exit-code":"three")");
  auto p = c.wait_pod("typo", [](const json::value& p) { return waiting_reason(p) == "CreateContainerConfigError"; });
  CHECK(waiting_reason(p) == "CreateContainerConfigError");
  CHECK_THAT(c.events_of("typo"), Catch::Contains("kozmo.io/sim-exit-code"));
  const auto* waiting = main_status(p)->at_path({"state", "waiting"});
  CHECK_THAT(waiting->get_string("message"), Catch::Contains("kozmo.io/sim-exit-code")); // as kubectl describe shows it
  c.create_pod("fine", R"("kozmo.io/sim-duration":"200ms")");
  auto fine = c.wait_pod("fine", [](const json::value& p) { return phase(p) == "Succeeded"; });
  CHECK(phase(fine) == "Succeeded");
}

TEST_CASE("deleting a running pod stops its containers and removes it") {
  local_cluster c;
  c.create_pod("forever", R"("kozmo.io/sim-duration":"forever","kozmo.io/sim-pull-duration":"100ms")");
  auto p = c.wait_pod("forever", [](const json::value& p) { return phase(p) == "Running"; });
  REQUIRE(phase(p) == "Running");
  auto del = c.cli->remove({"", "v1", "pods", "default", "forever", ""});
  REQUIRE(del.has_value());
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    auto r = c.pod("forever");
    gone = !r && r.err().code == 404;
    std::this_thread::sleep_for(100ms);
  }
  CHECK(gone);
  CHECK_THAT(c.events_of("forever"), Catch::Contains("Killing"));
}

TEST_CASE("a pod that no node can hold waits with PodScheduled=False and kube-scheduler's wording, then fits when room appears") {
  local_cluster c(1, 4);
  c.create_pod("big", R"("kozmo.io/sim-duration":"200ms")", "Never", 8);
  auto p = c.wait_pod("big", [](const json::value& p) {
    const auto* conds = p.at_path({"status", "conditions"});
    if (!conds || !conds->is_array())
      return false;
    for (const auto& cond : conds->as_array())
      if (cond.get_string("type") == "PodScheduled" && cond.get_string("status") == "False" &&
          cond.get_string("message").find("Insufficient") != std::string::npos)
        return true;
    return false;
  });
  std::string message;
  for (const auto& cond : p.at_path({"status", "conditions"})->as_array())
    if (cond.get_string("type") == "PodScheduled")
      message = cond.get_string("message");
  CHECK(message == "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
  CHECK_THAT(c.events_of("big"), Catch::Contains("FailedScheduling"));
  CHECK(p.at_path({"spec"})->get_string("nodeName").empty());
}

TEST_CASE("a pod's final status reaches the API server through failed writes, and its GPUs are not given to another "
          "pod before it has") {
  local_cluster c(1, 4, true);
  c.create_pod("first", R"("kozmo.io/sim-duration":"1s","kozmo.io/sim-pull-duration":"100ms")", "Never", 4);
  c.wait_pod("first", [](const json::value& p) { return phase(p) == "Running"; });
  // The kubelet's next writes of first's status (it ends in about a second) fail for 4 s.
  auto fault = c.cli->send_sync({"POST", "/debug/faults",
                                 R"({"action":"failNext","count":4,"status":500,"prefix":"/api/v1/namespaces/default/pods/first/status"})"});
  REQUIRE(fault.has_value());
  REQUIRE(fault->status == 200);
  std::this_thread::sleep_for(1500ms); // first has ended on its node; the API server does not know yet
  auto second = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"second","annotations":{
    "kozmo.io/sim-duration":"1s"}},"spec":{"nodeName":"node-0","restartPolicy":"Never","containers":[{"name":"main",
    "image":"busybox:1.36","resources":{"limits":{"nvidia.com/gpu":"4"}}}]}})");
  REQUIRE(second.has_value());
  REQUIRE(c.cli->create({"", "v1", "pods", "default", "", ""}, *second).has_value());
  // Seen from the API, the node never runs 8 GPUs' worth of pods.
  bool both_running = false;
  auto first = c.wait_pod("first", [&](const json::value& p) {
    auto s = c.pod("second");
    if (phase(p) == "Running" && s && phase(*s) == "Running")
      both_running = true;
    return phase(p) == "Succeeded";
  });
  CHECK(phase(first) == "Succeeded");
  CHECK_FALSE(both_running);
  auto s = c.wait_pod("second", [](const json::value& p) { return phase(p) == "Failed" || phase(p) == "Succeeded"; });
  CHECK(phase(s) == "Failed");
  CHECK(s.at_path({"status"})->get_string("reason") == "OutOfnvidia.com/gpu");
}
