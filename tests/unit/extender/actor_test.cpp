// The extender actor with a real actor system, real watches and the embedded API server,
// driven over HTTP the way kube-scheduler drives it: filter and bind write a real binding, and
// an extender started afresh recovers the gang from the bind-info annotations.
#include "actors/extender/extender_actor.hpp"
#include "actors/extender/extender_server.hpp"
#include "actors/watch/watch_actor.hpp"
#include "k8s/apiserver/server.hpp"
#include "k8s/client/client.hpp"
#include "k8s/model/codec.hpp"
#include "tests/unit/extender/cluster.hpp"
#include "tests/support/raw_http.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

using namespace kozmo;
using namespace kozmo::extender;
using kozmo::extender::test::cluster_yaml;
using kozmo::test::raw_connection;

namespace {


constexpr const char* gang_spec = "virtualCluster: vc1\npriority: 10\nleafCellNumber: 2\n"
                                  "affinityGroup: {name: default/job1, members: [{podNumber: 2, leafCellNumber: 2}]}\n";

json::value node_json(const std::string& name) {
  json::value n;
  n["apiVersion"] = "v1";
  n["kind"] = "Node";
  n["metadata"]["name"] = name;
  n["status"]["capacity"]["nvidia.com/gpu"] = "4";
  n["status"]["allocatable"]["nvidia.com/gpu"] = "4";
  n["status"]["conditions"] = json::array{json::object{{"type", "Ready"}, {"status", "True"}}};
  return n;
}

json::value pod_json(const std::string& name) {
  json::value p;
  p["apiVersion"] = "v1";
  p["kind"] = "Pod";
  p["metadata"]["name"] = name;
  p["metadata"]["namespace"] = "default";
  p["metadata"]["annotations"]["hivedscheduler.microsoft.com/pod-scheduling-spec"] = gang_spec;
  p["spec"]["schedulerName"] = "kozmo-extender";
  p["spec"]["containers"] = json::array{json::object{{"name", "main"}, {"image", "busybox"}}};
  return p;
}

// One extender "process": watches, the actor owning a fresh core, and the HTTP server.
struct extender_instance {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::actor pods, nodes, actor;
  std::unique_ptr<extender_server> server;
  unsigned short port = 0;

  explicit extender_instance(std::shared_ptr<client::client> cli) {
    watch::watch_config pc;
    pc.resource = {"", "v1", "pods", "", "", ""};
    watch::watch_config nc;
    nc.resource = {"", "v1", "nodes", "", "", ""};
    pods = watch::spawn_watch<k8s::pod>(sys, cli, pc);
    nodes = watch::spawn_watch<k8s::node>(sys, cli, nc);
    auto core = scheduler::scheduler_core::load(cluster_yaml);
    REQUIRE(core);
    actor = spawn_extender_actor(sys, cli, std::make_shared<extender_logic>(std::move(*core)), pods, nodes);
    server = std::make_unique<extender_server>(make_actor_backend(actor), server_options{});
    auto p = server->start();
    REQUIRE(p);
    port = *p;
  }
  ~extender_instance() {
    server->stop();
    for (const auto& a : {actor, pods, nodes}) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }
};

std::string filter_request(client::client& cli, const std::string& pod) {
  auto obj = cli.get({"", "v1", "pods", "default", pod, ""});
  REQUIRE(obj);
  auto decoded = k8s::from_json<k8s::pod>(*obj);
  REQUIRE(decoded);
  return encode(filter_args{*decoded, {"node-a", "node-b"}, false});
}

std::string pod_uid(client::client& cli, const std::string& pod) {
  auto obj = cli.get({"", "v1", "pods", "default", pod, ""});
  REQUIRE(obj);
  return obj->at_path({"metadata", "uid"})->as_string();
}

// (node, isolation annotation) of a pod as the API server has it.
std::pair<std::string, std::string> placement_of(client::client& cli, const std::string& pod) {
  auto obj = cli.get({"", "v1", "pods", "default", pod, ""});
  REQUIRE(obj);
  auto* iso = obj->at_path({"metadata", "annotations"});
  std::string isolation;
  if (iso)
    if (auto* v = iso->find("hivedscheduler.microsoft.com/pod-leaf-cell-isolation")) isolation = v->as_string();
  return {obj->at_path({"spec"})->get_string("nodeName"), isolation};
}

} // namespace

TEST_CASE("the extender actor binds a gang pod through the API server and a restarted extender recovers the gang") {
  apiserver::server api;
  REQUIRE(api.start());
  client::config ccfg;
  ccfg.server = api.url();
  auto cli = std::make_shared<client::client>(ccfg);
  for (const char* n : {"node-a", "node-b"}) REQUIRE(cli->create({"", "v1", "nodes", "", "", ""}, node_json(n)));
  for (const char* p : {"w-0", "w-1"}) REQUIRE(cli->create({"", "v1", "pods", "default", "", ""}, pod_json(p)));

  std::pair<std::string, std::string> first;
  {
    extender_instance ext(cli);
    raw_connection c(ext.port);
    auto reply = c.request("POST", "/v1/extender/filter", filter_request(*cli, "w-0"));
    REQUIRE(reply.status == 200);
    auto r = decode_filter_result(reply.body);
    REQUIRE(r);
    REQUIRE(r->node_names.size() == 1);

    auto bound = c.request("POST", "/v1/extender/bind", encode(bind_args{"w-0", "default", pod_uid(*cli, "w-0"), r->node_names[0]}));
    REQUIRE(bound.status == 200);
    CHECK(decode_bind_result(bound.body)->error.empty());
    first = placement_of(*cli, "w-0");
    CHECK(first.first == r->node_names[0]);
    CHECK_FALSE(first.second.empty());
  }

  // A new extender knows nothing but what the pods say: it must keep w-1's slot in the gang
  // and never hand w-0's GPUs out again.
  extender_instance ext(cli);
  raw_connection c(ext.port);
  auto reply = c.request("POST", "/v1/extender/filter", filter_request(*cli, "w-1"));
  REQUIRE(reply.status == 200);
  auto r = decode_filter_result(reply.body);
  REQUIRE(r);
  REQUIRE(r->node_names.size() == 1);
  auto bound = c.request("POST", "/v1/extender/bind", encode(bind_args{"w-1", "default", pod_uid(*cli, "w-1"), r->node_names[0]}));
  REQUIRE(bound.status == 200);
  CHECK(decode_bind_result(bound.body)->error.empty());
  auto second = placement_of(*cli, "w-1");
  CHECK(second.first == r->node_names[0]);
  if (second.first == first.first) CHECK(second.second != first.second);

  auto groups = c.request("GET", "/v1/inspect/affinitygroups/");
  CHECK(groups.status == 200);
  CHECK_THAT(groups.body, Catch::Contains("default/job1"));
}
