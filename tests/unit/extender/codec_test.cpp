// kube-scheduler's extender v1 JSON: what kube-scheduler v1.20 sends is read, what we answer
// is what it reads (Go field names, no json tags).
#include "actors/extender/extender_codec.hpp"
#include "actors/extender/extender_server.hpp"

#include <catch2/catch.hpp>

using namespace kozmo;
using namespace kozmo::extender;

namespace {

// The shape kube-scheduler v1.20 posts with nodeCacheCapable: true.
constexpr const char* filter_body = R"({
  "Pod": {"metadata": {"name": "w-0", "namespace": "team", "uid": "u-1",
                       "annotations": {"hivedscheduler.microsoft.com/pod-scheduling-spec": "virtualCluster: vc1"}},
          "spec": {"schedulerName": "kozmo-extender", "containers": [{"name": "c", "image": "x",
                   "resources": {"limits": {"nvidia.com/gpu": "2"}}}]},
          "status": {"phase": "Pending"}},
  "Nodes": null,
  "NodeNames": ["node-a", "node-b"]
})";

} // namespace

TEST_CASE("a filter request from a node-cache-capable kube-scheduler yields the pod and the node names") {
  auto args = decode_filter_args(filter_body);
  REQUIRE(args);
  CHECK(args->pod.metadata.name == "w-0");
  CHECK(args->pod.metadata.namespace_ == "team");
  CHECK(args->pod.metadata.uid == "u-1");
  CHECK(args->pod.metadata.annotations.at("hivedscheduler.microsoft.com/pod-scheduling-spec") == "virtualCluster: vc1");
  CHECK(args->node_names == std::vector<std::string>{"node-a", "node-b"});
  CHECK_FALSE(args->nodes_as_objects);
}

TEST_CASE("a filter request carrying a NodeList yields the names of its nodes") {
  auto args = decode_filter_args(R"({"Pod": {"metadata": {"name": "p", "uid": "u"}},
    "Nodes": {"items": [{"metadata": {"name": "n1"}}, {"metadata": {"name": "n2"}}]}})");
  REQUIRE(args);
  CHECK(args->node_names == std::vector<std::string>{"n1", "n2"});
  CHECK(args->nodes_as_objects);
}

TEST_CASE("field names are matched without regard to case, as Go's decoder does") {
  auto args = decode_filter_args(R"({"pod": {"metadata": {"name": "p", "uid": "u"}}, "nodenames": ["n1"]})");
  REQUIRE(args);
  CHECK(args->node_names == std::vector<std::string>{"n1"});
  auto bind = decode_bind_args(R"({"podname": "p", "podnamespace": "ns", "poduid": "u", "node": "n1"})");
  REQUIRE(bind);
  CHECK(*bind == bind_args{"p", "ns", "u", "n1"});
}

TEST_CASE("requests that cannot be read are refused as bad requests with a message naming the problem") {
  SECTION("malformed JSON") {
    auto r = decode_filter_args("{\"Pod\": ");
    REQUIRE_FALSE(r);
    CHECK(r.err().code == 400);
    CHECK_THAT(r.err().message, Catch::Contains("malformed JSON"));
  }
  SECTION("no pod") {
    auto r = decode_filter_args(R"({"NodeNames": ["n1"]})");
    REQUIRE_FALSE(r);
    CHECK(r.err().code == 400);
    CHECK_THAT(r.err().message, Catch::Contains("no Pod"));
  }
  SECTION("a pod without a uid") {
    auto r = decode_preempt_args(R"({"Pod": {"metadata": {"name": "p"}}})");
    REQUIRE_FALSE(r);
    CHECK_THAT(r.err().message, Catch::Contains("uid"));
  }
  SECTION("node names that are not strings") {
    auto r = decode_filter_args(R"({"Pod": {"metadata": {"name": "p", "uid": "u"}}, "NodeNames": [1]})");
    REQUIRE_FALSE(r);
    CHECK_THAT(r.err().message, Catch::Contains("NodeNames"));
  }
  SECTION("a bind without a node") {
    auto r = decode_bind_args(R"({"PodName": "p", "PodNamespace": "ns", "PodUID": "u"})");
    REQUIRE_FALSE(r);
    CHECK_THAT(r.err().message, Catch::Contains("Node"));
  }
  SECTION("a body that is not an object") {
    auto r = decode_bind_args("[]");
    REQUIRE_FALSE(r);
    CHECK(r.err().code == 400);
  }
}

TEST_CASE("a filter result is written with the Go field names kube-scheduler reads") {
  filter_result r;
  r.node_names = {"node-a"};
  r.failed_nodes = {{"node-b", "Pod is waiting for preemptible or free resource to appear: no room"}};
  auto text = encode(r);
  CHECK_THAT(text, Catch::Contains("\"NodeNames\":[\"node-a\"]"));
  CHECK_THAT(text, Catch::Contains("\"FailedNodes\":{\"node-b\":"));
  CHECK_THAT(text, Catch::Contains("\"Error\":\"\""));
  auto back = decode_filter_result(text);
  REQUIRE(back);
  CHECK(*back == r);
}

TEST_CASE("preemption arguments and results round-trip with victims' UIDs per node") {
  preempt_args a;
  a.pod.metadata.name = "p";
  a.pod.metadata.uid = "u";
  a.node_victims["node-a"] = meta_victims{{"v1", "v2"}, 1};
  auto decoded = decode_preempt_args(encode(a));
  REQUIRE(decoded);
  CHECK(decoded->node_victims == a.node_victims);

  preempt_result r;
  r.node_victims["node-b"] = meta_victims{{"v3"}, 0};
  auto text = encode(r);
  CHECK_THAT(text, Catch::Contains(R"("NodeNameToMetaVictims":{"node-b":{"Pods":[{"UID":"v3"}],"NumPDBViolations":0}})"));
  auto back = decode_preempt_result(text);
  REQUIRE(back);
  CHECK(*back == r);
}

TEST_CASE("victims sent as full pods (a non-node-cache-capable kube-scheduler) are reduced to their UIDs") {
  auto a = decode_preempt_args(R"({"Pod": {"metadata": {"name": "p", "uid": "u"}},
    "NodeNameToVictims": {"n1": {"Pods": [{"metadata": {"name": "v", "uid": "vu"}}], "NumPDBViolations": 2}}})");
  REQUIRE(a);
  CHECK(a->node_victims.at("n1") == meta_victims{{"vu"}, 2});
}

TEST_CASE("binding arguments and results round-trip") {
  bind_args a{"w-0", "team", "u-1", "node-a"};
  auto back = decode_bind_args(encode(a));
  REQUIRE(back);
  CHECK(*back == a);
  CHECK(encode(bind_result{}) == R"({"Error":""})");
  auto r = decode_bind_result(R"({"Error":"pods \"w-0\" not found"})");
  REQUIRE(r);
  CHECK(r->error == "pods \"w-0\" not found");
}

TEST_CASE("errors are HiveD's code and message object") {
  CHECK(encode_error(400, "bad \"spec\"") == R"({"code":400,"message":"bad \"spec\""})");
}

TEST_CASE("requests are routed by HiveD's paths and methods") {
  CHECK(route_of("POST", "/v1/extender/filter").kind == route_kind::filter);
  CHECK(route_of("POST", "/v1/extender/preempt").kind == route_kind::preempt);
  CHECK(route_of("POST", "/v1/extender/bind?x=1").kind == route_kind::bind);
  CHECK(route_of("GET", "/v1/extender/filter").kind == route_kind::method_not_allowed);
  CHECK(route_of("GET", "/healthz").kind == route_kind::healthz);
  CHECK(route_of("GET", "/metrics").kind == route_kind::metrics);
  CHECK(route_of("GET", "/v1/extender/nope").kind == route_kind::not_found);

  auto q = [](std::string_view target) { return route_of("GET", target).query; };
  CHECK(q("/v1/inspect/affinitygroups/") == inspect_query{inspect_kind::affinity_groups, ""});
  CHECK(q("/v1/inspect/affinitygroups") == inspect_query{inspect_kind::affinity_groups, ""});
  CHECK(q("/v1/inspect/affinitygroups/team%2Fw-0") == inspect_query{inspect_kind::affinity_group, "team/w-0"});
  CHECK(q("/v1/inspect/affinitygroups/team/w-0") == inspect_query{inspect_kind::affinity_group, "team/w-0"});
  CHECK(q("/v1/inspect/clusterstatus") == inspect_query{inspect_kind::cluster_status, ""});
  CHECK(q("/v1/inspect/clusterstatus/physicalcluster") == inspect_query{inspect_kind::physical_cluster, ""});
  CHECK(q("/v1/inspect/clusterstatus/virtualclusters/") == inspect_query{inspect_kind::virtual_clusters, ""});
  CHECK(q("/v1/inspect/clusterstatus/virtualclusters/vc1") == inspect_query{inspect_kind::virtual_cluster, "vc1"});
  CHECK(route_of("POST", "/v1/inspect/clusterstatus").kind == route_kind::method_not_allowed);
  CHECK(route_of("GET", "/v1/inspect/clusterstatus/virtualclusters/a/b").kind == route_kind::not_found);
}
