// Kozmo's GPU scheduler in direct mode, through the embedding API (kozmo::engine): the
// embedded API server, simulated kubelets, the scheduler actor and its cellgroup actors,
// observed the way a user would: pods, their annotations and conditions, events, inspect.
#include "k8s/apiserver/server.hpp"
#include "k8s/client/client.hpp"
#include "runtime/engine_internal.hpp"
#include "runtime/hived_shape.hpp"

#include "tests/actors/support/api_polling.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include <unistd.h>

using namespace kozmo;
using namespace std::chrono_literals;

namespace {

engine_options options(int nodes, int gpus, const std::string& data_dir = {}) {
  engine_options o;
  o.api.embedded = true;
  o.api.data_dir = data_dir;
  o.parts.nodes = kozmo::uniform_nodes(nodes, gpus);
  o.parts.binder = true;
  o.parts.scheduler_config = runtime::hived_config_from_shape(kozmo::cluster_shape_of(o.parts.nodes));
  return o;
}

struct local_cluster {
  engine e;
  std::shared_ptr<client::client> cli;

  explicit local_cluster(engine_options o) : e(std::move(o)) {
    auto st = e.start();
    INFO((st ? "" : st.err().message));
    REQUIRE(st.has_value());
    cli = engine_internal::api(e);
  }

  // A pod for the GPU scheduler: `annotations` is a JSON fragment ("k":"v",...).
  void create_pod(const std::string& name, const std::string& annotations, int gpus) {
    auto body = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                            R"(","annotations":{)" + annotations +
                            R"(}},"spec":{"schedulerName":"kozmo","restartPolicy":"Never","containers":[{"name":"main","image":"busybox:1.36","resources":{"limits":{"nvidia.com/gpu":")" +
                            std::to_string(gpus) + R"("}}}]}})");
    REQUIRE(body.has_value());
    auto r = cli->create({"", "v1", "pods", "default", "", ""}, *body);
    INFO((r ? "" : r.err().message));
    REQUIRE(r.has_value());
  }

  void create_gang(const std::string& gang, int pods, int gpus, const std::string& duration) {
    for (int i = 0; i < pods; ++i)
      create_pod(gang + "-" + std::to_string(i),
                 R"("kozmo.io/gang":")" + gang + R"(","kozmo.io/gang-members":")" + std::to_string(pods) + "x" +
                     std::to_string(gpus) + R"(","kozmo.io/sim-duration":")" + duration + R"(")",
                 gpus);
  }

  expected<json::value> pod(const std::string& name) { return cli->get({"", "v1", "pods", "default", name, ""}); }

  // Polls until `pred` holds for the pod (up to `timeout`); returns the last state seen.
  json::value wait_pod(const std::string& name, const std::function<bool(const json::value&)>& pred,
                       std::chrono::milliseconds timeout = 30s) {
    return test::poll_until([&] { return pod(name); }, pred, timeout);
  }

  // The reasons and messages of the object's events, one per line.
  std::string events_of(const std::string& name) { return test::events_text(*cli, "default", name); }

  std::string wait_event(const std::string& name, const std::string& needle, std::chrono::milliseconds timeout = 20s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string events;
    while (std::chrono::steady_clock::now() < deadline) {
      events = events_of(name);
      if (events.find(needle) != std::string::npos)
        break;
      std::this_thread::sleep_for(100ms);
    }
    return events;
  }

  void remove_pod(const std::string& name) {
    auto r = cli->remove({"", "v1", "pods", "default", name, ""});
    REQUIRE(r.has_value());
  }

  // The HTTP status of a GET (the client turns statuses >= 400 into errors).
  int get_status(const std::string& path) {
    auto r = cli->send_sync({"GET", path, "", "application/json", "application/json"});
    return r ? r->status : r.err().code;
  }

  json::value get_json(const std::string& path) {
    auto r = cli->send_sync({"GET", path, "", "application/json", "application/json"});
    REQUIRE(r.has_value());
    auto v = json::parse(r->body);
    REQUIRE(v.has_value());
    return *v;
  }
};

std::string phase(const json::value& p) {
  const auto* st = p.find("status");
  return st ? st->get_string("phase") : "";
}

std::string node_of(const json::value& p) {
  const auto* spec = p.find("spec");
  return spec ? spec->get_string("nodeName") : "";
}

std::string annotation(const json::value& p, const std::string& key) {
  const auto* a = p.at_path({"metadata", "annotations"});
  return a ? a->get_string(key) : "";
}

std::vector<int> isolation(const json::value& p) {
  std::vector<int> out;
  std::stringstream in(annotation(p, "hivedscheduler.microsoft.com/pod-leaf-cell-isolation"));
  std::string item;
  while (std::getline(in, item, ','))
    out.push_back(std::stoi(item));
  return out;
}

const json::value* pod_scheduled(const json::value& p) {
  const auto* conds = p.at_path({"status", "conditions"});
  if (!conds || !conds->is_array())
    return nullptr;
  for (const auto& c : conds->as_array())
    if (c.get_string("type") == "PodScheduled")
      return &c;
  return nullptr;
}

bool is_bound(const json::value& p) { return !node_of(p).empty(); }

// Told it waits: PodScheduled=False.
bool unschedulable(const json::value& p) {
  const auto* cond = pod_scheduled(p);
  return cond && cond->get_string("status") == "False";
}

// Each pod of a 2-GPU gang holds a pair of GPUs under one switch: {0,1}, {2,3}, ...
void check_switch_pairs(const std::vector<json::value>& pods) {
  std::set<std::pair<std::string, int>> used;
  for (const auto& p : pods) {
    auto gpus = isolation(p);
    REQUIRE(gpus.size() == 2);
    CHECK(gpus[0] / 2 == gpus[1] / 2);
    for (int g : gpus)
      CHECK(used.insert({node_of(p), g}).second);
  }
}

} // namespace

TEST_CASE("a gang of four 2-GPU pods is bound as a whole, each pod under one switch, and its GPUs come back when it ends") {
  local_cluster c(options(1, 8));
  c.create_gang("gang-a", 4, 2, "1s");
  std::vector<json::value> pods;
  for (int i = 0; i < 4; ++i) {
    auto p = c.wait_pod("gang-a-" + std::to_string(i), is_bound);
    REQUIRE(is_bound(p));
    CHECK(node_of(p) == "node-0");
    // The whole gang's placement is in every pod's bind-info: it was allocated at once.
    auto info = annotation(p, "hivedscheduler.microsoft.com/pod-bind-info");
    CHECK(std::count(info.begin(), info.end(), '[') >= 4);
    pods.push_back(p);
  }
  check_switch_pairs(pods);
  CHECK_THAT(c.wait_event("gang-a-0", "Scheduled"), Catch::Contains("Successfully assigned default/gang-a-0 to node-0 with GPUs"));

  // HiveD's AffinityGroupList, as the extender answers it: {"items": [...]}.
  auto groups = c.get_json("/v1/inspect/affinitygroups/");
  REQUIRE(groups.find("items") != nullptr);
  REQUIRE(groups.find("items")->is_array());
  bool listed = false;
  for (const auto& g : groups.find("items")->as_array())
    listed = listed || g.get_string("name") == "gang-a";
  CHECK(listed);
  CHECK(c.get_status("/v1/inspect/affinitygroups/nope") == 404);
  CHECK(c.get_json("/v1/inspect/clusterstatus").find("physicalCluster") != nullptr);

  for (int i = 0; i < 4; ++i)
    CHECK(phase(c.wait_pod("gang-a-" + std::to_string(i), [](const json::value& p) { return phase(p) == "Succeeded"; })) ==
          "Succeeded");
  // All eight GPUs again: a second gang of the same size fits on the same node.
  c.create_gang("gang-b", 4, 2, "forever");
  std::vector<json::value> second;
  for (int i = 0; i < 4; ++i) {
    auto p = c.wait_pod("gang-b-" + std::to_string(i), is_bound);
    REQUIRE(is_bound(p));
    second.push_back(p);
  }
  check_switch_pairs(second);
}

TEST_CASE("with the pods watch narrowed to the scheduler's pods a gang is bound as before; a malformed selector stops the start") {
  auto o = options(1, 8);
  o.parts.pods_field_selector = "spec.schedulerName=kozmo";
  local_cluster c(o);
  c.create_gang("narrow", 2, 2, "forever");
  for (int i = 0; i < 2; ++i) {
    auto p = c.wait_pod("narrow-" + std::to_string(i), is_bound);
    REQUIRE(is_bound(p));
    CHECK_FALSE(annotation(p, "hivedscheduler.microsoft.com/pod-bind-info").empty());
  }

  auto bad = options(1, 8);
  bad.parts.pods_field_selector = "spec.schedulerName";
  engine e(bad);
  auto st = e.start();
  REQUIRE_FALSE(st.has_value());
  CHECK_THAT(st.err().message, Catch::Contains("pods_field_selector") && Catch::Contains("spec.schedulerName"));
}

TEST_CASE("GPUs that another scheduler's pod holds on a node are not given to Kozmo's pods until it ends") {
  // Both ways the scheduler learns of other schedulers' pods: from the shared pods watch
  // (every pod, as in kozmo local) and from a watch of their own (beside a pods watch
  // narrowed to its pods, as `kozmo controller --enable scheduler` runs).
  const bool narrowed = GENERATE(false, true);
  INFO((narrowed ? "pods watch narrowed to the scheduler's pods" : "one pods watch for every pod"));
  auto o = options(2, 8);
  if (narrowed)
    o.parts.pods_field_selector = "spec.schedulerName=kozmo";
  local_cluster c(o);
  // Bound by another scheduler (its nodeName set, as kube-scheduler's binding sets it).
  auto theirs = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"theirs","annotations":{"kozmo.io/sim-duration":"forever"}},"spec":{"schedulerName":"default-scheduler","nodeName":"node-0","restartPolicy":"Never","containers":[{"name":"main","image":"busybox:1.36","resources":{"limits":{"nvidia.com/gpu":"6"}}}]}})");
  REQUIRE(theirs.has_value());
  REQUIRE(c.cli->create({"", "v1", "pods", "default", "", ""}, *theirs).has_value());
  auto held_on_node0 = [&] {
    auto status = c.get_json("/v1/inspect/clusterstatus");
    for (const auto& n : status.find("physicalCluster")->as_array())
      if (n.get_string("node") == "node-0")
        return n.get_int("otherPodsLeafCells");
    return std::int64_t{-1};
  };
  for (auto deadline = std::chrono::steady_clock::now() + 20s;
       held_on_node0() != 6 && std::chrono::steady_clock::now() < deadline;)
    std::this_thread::sleep_for(50ms);
  REQUIRE(held_on_node0() == 6);
  // 16 GPUs, 6 of them theirs: a gang of three 4-GPU pods (12) must wait.
  c.create_gang("ours", 3, 4, "forever");
  auto p = c.wait_pod("ours-0", unschedulable);
  const auto* cond = pod_scheduled(p);
  REQUIRE(cond);
  CHECK_THAT(cond->get_string("message"), Catch::Contains("6 held by other schedulers' pods"));
  for (int i = 0; i < 3; ++i)
    CHECK_FALSE(is_bound(*c.pod("ours-" + std::to_string(i))));
  // Their pod is gone: the gang binds. (Deleted at once: with the pods watch narrowed the
  // simulated kubelet never sees a pod of another scheduler, so no kubelet would end it.)
  client::delete_options now;
  now.grace_period_seconds = 0;
  REQUIRE(c.cli->remove({"", "v1", "pods", "default", "theirs", ""}, now).has_value());
  for (int i = 0; i < 3; ++i)
    CHECK(is_bound(c.wait_pod("ours-" + std::to_string(i), is_bound)));
  CHECK(held_on_node0() == 0);
}

TEST_CASE("a gang that cannot fit waits unbound with PodScheduled=False and a reason, and holds no GPU") {
  local_cluster c(options(1, 8));
  c.create_gang("too-big", 2, 8, "forever");
  auto p = c.wait_pod("too-big-0", unschedulable);
  const auto* cond = pod_scheduled(p);
  REQUIRE(cond);
  CHECK(cond->get_string("reason") == "Unschedulable");
  CHECK_FALSE(cond->get_string("message").empty());
  CHECK_FALSE(is_bound(p));
  CHECK_THAT(c.wait_event("too-big-0", "FailedScheduling"), Catch::Contains("FailedScheduling"));
  // Nothing was taken: an 8-GPU pod still fits.
  c.create_pod("whole-node", R"("kozmo.io/sim-duration":"forever")", 8);
  CHECK(is_bound(c.wait_pod("whole-node", is_bound)));
  CHECK_FALSE(is_bound(*c.pod("too-big-0")));
}

TEST_CASE("a malformed scheduling spec gets a Warning event naming the field, and the scheduler carries on") {
  local_cluster c(options(1, 8));
  c.create_pod("typo", R"("kozmo.io/gang":"g","kozmo.io/gang-members":"four")", 2);
  c.create_pod("bad-hived", R"("hivedscheduler.microsoft.com/pod-scheduling-spec":"virtualCluster: [")", 2);
  CHECK_THAT(c.wait_event("typo", "InvalidSchedulingSpec"), Catch::Contains("kozmo.io/gang-members"));
  CHECK_THAT(c.wait_event("bad-hived", "InvalidSchedulingSpec"), Catch::Contains("InvalidSchedulingSpec"));
  CHECK_FALSE(is_bound(*c.pod("typo")));
  c.create_pod("fine", R"("kozmo.io/sim-duration":"forever")", 2);
  CHECK(is_bound(c.wait_pod("fine", is_bound)));
}

TEST_CASE("a higher-priority gang preempts a lower-priority one: the victims are deleted and the preemptor binds on their GPUs") {
  local_cluster c(options(1, 8));
  auto gang = [&](const std::string& name, int pods, int gpus, int priority) {
    for (int i = 0; i < pods; ++i)
      c.create_pod(name + "-" + std::to_string(i),
                   R"("kozmo.io/gang":")" + name + R"(","kozmo.io/gang-members":")" + std::to_string(pods) + "x" +
                       std::to_string(gpus) + R"(","kozmo.io/priority":")" + std::to_string(priority) +
                       R"(","kozmo.io/sim-duration":"forever")",
                   gpus);
  };
  gang("low", 4, 2, 1);
  std::vector<std::string> low_uids;
  for (int i = 0; i < 4; ++i) {
    auto p = c.wait_pod("low-" + std::to_string(i), is_bound);
    REQUIRE(is_bound(p));
    low_uids.push_back(p.at_path({"metadata", "uid"})->as_string());
  }
  // The node is full; a priority-10 gang of two 4-GPU pods needs every GPU of it.
  gang("high", 2, 4, 10);
  CHECK_THAT(c.wait_event("high-0", "Preempting"), Catch::Contains("Preempting default/low-"));
  std::set<int> gpus;
  for (int i = 0; i < 2; ++i) {
    auto p = c.wait_pod("high-" + std::to_string(i), is_bound);
    REQUIRE(is_bound(p));
    for (int g : isolation(p))
      CHECK(gpus.insert(g).second);
  }
  CHECK(gpus.size() == 8);
  CHECK_THAT(c.wait_event("low-0", "Preempted"), Catch::Contains("Preempted by default/high-"));
  // The victims are gone (not merely evicted and left holding their GPUs).
  for (int i = 0; i < 4; ++i) {
    auto p = c.pod("low-" + std::to_string(i));
    CHECK((!p.has_value() || p->at_path({"metadata", "uid"})->as_string() != low_uids[static_cast<std::size_t>(i)] ||
           p->at_path({"metadata", "deletionTimestamp"}) != nullptr));
  }
}

TEST_CASE("after a restart on the same data dir no GPU is given twice and the pending gang is placed") {
  auto dir = std::filesystem::temp_directory_path() / ("kozmo-sched-restart-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::map<std::string, std::vector<int>> before;
  // The first engine is stopped but kept: stop() alone must let go of the data dir.
  auto first_run = std::make_unique<local_cluster>(options(1, 8, dir.string()));
  {
    local_cluster& c = *first_run;
    c.create_gang("first", 2, 4, "forever");
    for (int i = 0; i < 2; ++i) {
      auto name = "first-" + std::to_string(i);
      auto p = c.wait_pod(name, is_bound);
      REQUIRE(is_bound(p));
      before[name] = isolation(p);
    }
    c.create_gang("second", 2, 4, "forever");
    c.wait_event("second-0", "FailedScheduling");
    CHECK_FALSE(is_bound(*c.pod("second-0")));
    c.e.stop();
  }
  local_cluster c(options(1, 8, dir.string()));
  // The inspect API answers only after recovery: by then the first gang is accounted for.
  auto groups = c.get_json("/v1/inspect/affinitygroups/first");
  CHECK(groups.get_string("name") == "first");
  std::this_thread::sleep_for(1s);
  for (int i = 0; i < 2; ++i) {
    auto p = c.pod("second-" + std::to_string(i));
    REQUIRE(p.has_value());
    CHECK_FALSE(is_bound(*p));
    auto first = c.pod("first-" + std::to_string(i));
    REQUIRE(first.has_value());
    CHECK(isolation(*first) == before["first-" + std::to_string(i)]);
  }
  c.remove_pod("first-0");
  c.remove_pod("first-1");
  std::set<int> used;
  for (int i = 0; i < 2; ++i) {
    auto p = c.wait_pod("second-" + std::to_string(i), is_bound);
    REQUIRE(is_bound(p));
    for (int g : isolation(p))
      CHECK(used.insert(g).second);
  }
  CHECK(used.size() == 8);
  c.e.stop();
  std::filesystem::remove_all(dir);
}

TEST_CASE("kozmo local derives a valid HiveD configuration from a simple cluster shape") {
  auto shape = kubelet::shape_of({{"a", 8, "V100"}, {"b", 8, "V100"}, {"c", 4, "K80"}, {"d", 2, "K80"}, {"e", 0}});
  auto yaml = runtime::hived_config_from_shape(shape);
  INFO(yaml);
  CHECK_THAT(yaml, Catch::Contains("V100-SWITCH") && Catch::Contains("V100-SOCKET") &&
                       Catch::Contains("K80-4GPU-SWITCH") && Catch::Contains("default:"));
  // The simulated nodes it implies are the ones we started from (minus the GPU-less one).
  auto back = runtime::shape_from_hived_config(yaml);
  REQUIRE(back.has_value());
  std::map<std::string, int> gpus;
  for (const auto& n : back->nodes)
    gpus[n.name] = n.gpus;
  CHECK(gpus == std::map<std::string, int>{{"a", 8}, {"b", 8}, {"c", 4}, {"d", 2}});
}

TEST_CASE("a gang deleted after recovery but before other schedulers' pods are listed gives its GPUs back") {
  // kozmo controller's layout: an API server of its own (here the embedded one, whose fault
  // injector can hold one LIST back), a GPU node without a kubelet, the scheduler alone on a
  // pods watch narrowed to its pods and a watch of other schedulers' pods.
  apiserver::server srv;
  REQUIRE(srv.start().has_value());
  client::config cfg;
  cfg.server = srv.url();
  client::client cli(cfg);
  auto node = json::parse(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-0"},"status":{"allocatable":{"cpu":"64","memory":"256Gi","pods":"110","nvidia.com/gpu":"8"},"capacity":{"cpu":"64","memory":"256Gi","pods":"110","nvidia.com/gpu":"8"},"conditions":[{"type":"Ready","status":"True"}]}})");
  REQUIRE(node.has_value());
  REQUIRE(cli.create({"", "v1", "nodes", "", "", ""}, *node).has_value());
  engine_options o;
  o.api.server_url = srv.url();
  o.parts.scheduler_from_nodes = true;
  o.parts.pods_field_selector = "spec.schedulerName=kozmo";
  auto create_gang = [&](const std::string& gang) {
    for (int i = 0; i < 2; ++i) {
      auto body = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + gang + "-" +
                              std::to_string(i) + R"(","annotations":{"kozmo.io/gang":")" + gang +
                              R"(","kozmo.io/gang-members":"2x4"}},"spec":{"schedulerName":"kozmo","containers":[{"name":"main","image":"busybox:1.36","resources":{"limits":{"nvidia.com/gpu":"4"}}}]}})");
      REQUIRE(body.has_value());
      REQUIRE(cli.create({"", "v1", "pods", "default", "", ""}, *body).has_value());
    }
  };
  auto bound = [&](const std::string& name) {
    return test::poll_until([&] { return cli.get({"", "v1", "pods", "default", name, ""}); }, is_bound, 30s);
  };
  {
    engine first(o);
    REQUIRE(first.start().has_value());
    create_gang("old"); // all 8 GPUs, recorded in the pods' bind-info
    REQUIRE(is_bound(bound("old-0")));
    REQUIRE(is_bound(bound("old-1")));
    first.stop();
  }
  // The next start gets the nodes and its own pods at once (it recovers "old" from them, in
  // milliseconds), and the LIST of other schedulers' pods only after five 429s of a second each.
  srv.faults().fail_next(5, 429, "/api/v1/pods?fieldSelector=spec.schedulerName%21%3Dkozmo", 1);
  engine second(o);
  REQUIRE(second.start().has_value());
  std::this_thread::sleep_for(1500ms);
  client::delete_options now;
  now.grace_period_seconds = 0;
  REQUIRE(cli.remove({"", "v1", "pods", "default", "old-0", ""}, now).has_value());
  REQUIRE(cli.remove({"", "v1", "pods", "default", "old-1", ""}, now).has_value());
  std::this_thread::sleep_for(200ms);
  INFO("the deletes must reach the scheduler while the other pods' LIST is held back");
  REQUIRE(srv.faults().failures_left() > 0);
  // Ready once that LIST comes: "old" is gone from the scheduler too, so "new" fits.
  create_gang("new");
  CHECK(is_bound(bound("new-0")));
  CHECK(is_bound(bound("new-1")));
  second.stop();
}
