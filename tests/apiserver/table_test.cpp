#include "tests/apiserver/fixture.hpp"

#include "k8s/apiserver/table.hpp"

using namespace kozmo;
using namespace kozmo::test;

namespace {

const header_list table_accept = {
    {"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"}};

std::vector<std::string> column_names(const json::value& table) {
  std::vector<std::string> out;
  for (const auto& c : table.find("columnDefinitions")->as_array())
    out.push_back(c.get_string("name"));
  return out;
}

const json::array& first_cells(const json::value& table) {
  return table.find("rows")->as_array().at(0).find("cells")->as_array();
}

} // namespace

TEST_CASE("kubectl get pods gets a Table with the pod columns and PartialObjectMetadata rows") {
  running_server s;
  s.http->post(pods, pod("p2"));
  auto res = s.http->get(pods + "?limit=500", table_accept);
  REQUIRE(res.status == 200);
  json::value table = res.json();
  CHECK(table.get_string("kind") == "Table");
  CHECK(table.get_string("apiVersion") == "meta.k8s.io/v1");
  CHECK(column_names(table) == std::vector<std::string>{"Name", "Ready", "Status", "Restarts", "Age", "IP", "Node",
                                                        "Nominated Node", "Readiness Gates"});
  const auto& cells = first_cells(table);
  CHECK(cells[0].as_string() == "p2");
  CHECK(cells[1].as_string() == "0/1");
  CHECK(cells[2].as_string() == "Pending");
  CHECK(cells[5].as_string() == "<none>");
  CHECK(res.body.find("\\u003cnone\\u003e") != std::string::npos);  // Go's escaping of '<'
  CHECK(str(table.find("rows")->as_array().at(0), {"object", "kind"}) == "PartialObjectMetadata");
}

TEST_CASE("the pod Status column reads like kubectl's") {
  running_server s;
  auto status_of = [&](const std::string& name, const std::string& status_json, bool deleting = false) {
    s.http->post(pods, pod(name, {}, R"("nodeName":"n1")"));
    s.http->patch(pods + "/" + name + "/status", R"({"status":)" + status_json + "}", "application/merge-patch+json");
    if (deleting)
      s.http->del(pods + "/" + name);
    auto table = s.http->get(pods + "/" + name, table_accept).json();
    return first_cells(table)[2].as_string();
  };
  CHECK(status_of("creating", R"({"phase":"Pending","containerStatuses":[{"name":"c","ready":false,"restartCount":0,
        "state":{"waiting":{"reason":"ContainerCreating"}}}]})") == "ContainerCreating");
  CHECK(status_of("running", R"({"phase":"Running","containerStatuses":[{"name":"c","ready":true,"restartCount":0,
        "state":{"running":{"startedAt":"2026-01-01T00:00:00Z"}}}]})") == "Running");
  CHECK(status_of("done", R"({"phase":"Succeeded","containerStatuses":[{"name":"c","ready":false,"restartCount":0,
        "state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]})") == "Completed");
  CHECK(status_of("oom", R"({"phase":"Failed","containerStatuses":[{"name":"c","ready":false,"restartCount":0,
        "state":{"terminated":{"exitCode":137,"reason":"OOMKilled"}}}]})") == "OOMKilled");
  CHECK(status_of("pull", R"({"phase":"Pending","containerStatuses":[{"name":"c","ready":false,"restartCount":0,
        "state":{"waiting":{"reason":"ImagePullBackOff"}}}]})") == "ImagePullBackOff");
  CHECK(status_of("exit", R"({"phase":"Failed","containerStatuses":[{"name":"c","ready":false,"restartCount":0,
        "state":{"terminated":{"exitCode":3}}}]})") == "ExitCode:3");
  CHECK(status_of("term", R"({"phase":"Running"})", true) == "Terminating");
}

TEST_CASE("node rows show Ready, SchedulingDisabled, roles and version") {
  running_server s;
  s.http->post("/api/v1/nodes", R"({"metadata":{"name":"gpu-1","labels":{"node-role.kubernetes.io/worker":""}},
    "spec":{"unschedulable":true},
    "status":{"conditions":[{"type":"Ready","status":"True"}],"nodeInfo":{"kubeletVersion":"v1.32.0-kozmo"},
              "addresses":[{"type":"InternalIP","address":"10.0.0.7"}]}})");
  auto table = s.http->get("/api/v1/nodes?limit=500", table_accept).json();
  CHECK(column_names(table) == std::vector<std::string>{"Name", "Status", "Roles", "Age", "Version", "Internal-IP",
                                                        "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"});
  const auto& cells = first_cells(table);
  CHECK(cells[1].as_string() == "Ready,SchedulingDisabled");
  CHECK(cells[2].as_string() == "worker");
  CHECK(cells[4].as_string() == "v1.32.0-kozmo");
  CHECK(cells[5].as_string() == "10.0.0.7");
}

TEST_CASE("custom resources print their additional printer columns, or Age when none") {
  running_server s;
  s.http->post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
               R"({"metadata":{"name":"gizmos.wire.example.com"},"spec":{"group":"wire.example.com","scope":"Namespaced",
                   "names":{"plural":"gizmos","kind":"Gizmo"},
                   "versions":[{"name":"v1","served":true,"storage":true,
                     "additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"},
                                                 {"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}],
                     "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}})");
  s.http->post("/apis/wire.example.com/v1/namespaces/default/gizmos",
               R"({"kind":"Gizmo","apiVersion":"wire.example.com/v1","metadata":{"name":"g"},"spec":{"size":2},
                   "status":{"conditions":[{"type":"Ready","status":"True"}]}})");
  auto table = s.http->get("/apis/wire.example.com/v1/namespaces/default/gizmos?limit=500", table_accept).json();
  CHECK(column_names(table) == std::vector<std::string>{"Name", "Size", "Ready"});
  const auto& cells = first_cells(table);
  CHECK(cells[1].as_int() == 2);
  CHECK(cells[2].as_string() == "True");

  auto crds = s.http->get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", table_accept).json();
  CHECK(column_names(crds) == std::vector<std::string>{"Name", "Created At"});
}

TEST_CASE("configmaps, namespaces, services and events have their own columns") {
  running_server s;
  s.http->post(configmaps, configmap("c"));
  CHECK(column_names(s.http->get(configmaps, table_accept).json()) == std::vector<std::string>{"Name", "Data", "Age"});
  CHECK(first_cells(s.http->get(configmaps, table_accept).json())[1].as_int() == 1);
  CHECK(column_names(s.http->get("/api/v1/namespaces", table_accept).json()) ==
        std::vector<std::string>{"Name", "Status", "Age"});
  s.http->post("/api/v1/namespaces/default/services",
               R"({"metadata":{"name":"s"},"spec":{"ports":[{"port":80,"protocol":"TCP"}]}})");
  auto svc = first_cells(s.http->get("/api/v1/namespaces/default/services", table_accept).json());
  CHECK(svc[1].as_string() == "ClusterIP");
  CHECK(svc[4].as_string() == "80/TCP");
  s.http->post("/api/v1/namespaces/default/events",
               R"({"metadata":{"name":"e1"},"involvedObject":{"kind":"Pod","name":"p1","namespace":"default"},
                   "reason":"Scheduled","message":"assigned","type":"Normal","count":1,
                   "firstTimestamp":"2026-01-01T00:00:00Z","lastTimestamp":"2026-01-01T00:00:00Z"})");
  auto ev = s.http->get("/api/v1/namespaces/default/events", table_accept).json();
  CHECK(column_names(ev).at(0) == "Last Seen");
  CHECK(first_cells(ev)[3].as_string() == "pod/p1");
}

TEST_CASE("ages read as kubectl prints them") {
  using apiserver::human_duration;
  CHECK(human_duration(5) == "5s");
  CHECK(human_duration(174) == "2m54s");
  CHECK(human_duration(600) == "10m");
  CHECK(human_duration(3 * 3600 + 60) == "3h1m");
  CHECK(human_duration(30 * 3600) == "30h");
  CHECK(human_duration(3 * 86400 + 3600) == "3d1h");
  CHECK(human_duration(400 * 86400) == "400d");
}
