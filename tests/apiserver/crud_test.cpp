#include "tests/apiserver/fixture.hpp"

using namespace kozmo;
using namespace kozmo::test;

TEST_CASE("a created pod gets identity, defaults and a Pending status") {
  running_server s;
  auto res = s.http->post(pods + "?fieldManager=kubectl-create&fieldValidation=Strict", pod("p1"));
  REQUIRE(res.status == 201);
  json::value p = res.json();
  CHECK(p.get_string("kind") == "Pod");
  CHECK(p.get_string("apiVersion") == "v1");
  CHECK(str(p, {"metadata", "namespace"}) == "default");
  CHECK(str(p, {"metadata", "uid"}).size() == 36);
  CHECK_FALSE(str(p, {"metadata", "resourceVersion"}).empty());
  CHECK(str(p, {"metadata", "creationTimestamp"}).back() == 'Z');
  CHECK(str(p, {"spec", "restartPolicy"}) == "Always");
  CHECK(str(p, {"spec", "dnsPolicy"}) == "ClusterFirst");
  CHECK(str(p, {"spec", "schedulerName"}) == "default-scheduler");
  CHECK(p.at_path({"spec", "terminationGracePeriodSeconds"})->as_int() == 30);
  CHECK(p.at_path({"spec", "priority"})->as_int() == 0);
  CHECK(str(p, {"status", "phase"}) == "Pending");
  CHECK(str(p, {"status", "qosClass"}) == "BestEffort");

  auto got = s.http->get(pods + "/p1");
  CHECK(got.status == 200);
  CHECK(str(got.json(), {"metadata", "uid"}) == str(p, {"metadata", "uid"}));
}

TEST_CASE("resource versions grow with every write and lists report the latest") {
  running_server s;
  auto a = s.http->post(configmaps, configmap("a")).json();
  auto b = s.http->post(configmaps, configmap("b")).json();
  long rv_a = std::stol(str(a, {"metadata", "resourceVersion"}));
  long rv_b = std::stol(str(b, {"metadata", "resourceVersion"}));
  CHECK(rv_b > rv_a);
  auto list = s.http->get(configmaps).json();
  CHECK(list.get_string("kind") == "ConfigMapList");
  CHECK(std::stol(str(list, {"metadata", "resourceVersion"})) >= rv_b);
  REQUIRE(list.find("items")->as_array().size() == 2);
  CHECK(list.find("items")->as_array()[0].find("kind") == nullptr);  // typed list items carry no kind
}

TEST_CASE("creating an existing name is a 409 AlreadyExists") {
  running_server s;
  REQUIRE(s.http->post(pods, pod("dup")).status == 201);
  auto again = s.http->post(pods, pod("dup"));
  CHECK(again.status == 409);
  CHECK(again.json().get_string("reason") == "AlreadyExists");
  CHECK(again.json().get_string("message") == "pods \"dup\" already exists");
  CHECK(str(again.json(), {"details", "kind"}) == "pods");
}

TEST_CASE("generateName appends five random characters") {
  running_server s;
  auto res = s.http->post(configmaps, R"({"metadata":{"generateName":"job-"},"data":{}})");
  REQUIRE(res.status == 201);
  std::string name = str(res.json(), {"metadata", "name"});
  CHECK(name.size() == 9);
  CHECK(name.rfind("job-", 0) == 0);
  auto other = s.http->post(configmaps, R"({"metadata":{"generateName":"job-"},"data":{}})");
  CHECK(str(other.json(), {"metadata", "name"}) != name);
}

TEST_CASE("an update with a stale resourceVersion is a 409 Conflict") {
  running_server s;
  auto created = s.http->post(configmaps, configmap("cm")).json();
  std::string rv = str(created, {"metadata", "resourceVersion"});
  auto first = s.http->put(configmaps + "/cm", R"({"metadata":{"name":"cm","resourceVersion":")" + rv +
                                                   R"("},"data":{"k":"v2"}})");
  REQUIRE(first.status == 200);
  CHECK(str(first.json(), {"data", "k"}) == "v2");
  auto stale = s.http->put(configmaps + "/cm", R"({"metadata":{"name":"cm","resourceVersion":")" + rv +
                                                   R"("},"data":{"k":"v3"}})");
  CHECK(stale.status == 409);
  CHECK(stale.json().get_string("reason") == "Conflict");
  CHECK(stale.json().get_string("message") ==
        "Operation cannot be fulfilled on configmaps \"cm\": the object has been modified; please apply your changes "
        "to the latest version and try again");
  CHECK(str(s.http->get(configmaps + "/cm").json(), {"data", "k"}) == "v2");
}

TEST_CASE("an update that changes nothing keeps the resourceVersion") {
  running_server s;
  auto created = s.http->post(configmaps, configmap("same")).json();
  auto again = s.http->put(configmaps + "/same", configmap("same")).json();
  CHECK(str(again, {"metadata", "resourceVersion"}) == str(created, {"metadata", "resourceVersion"}));
}

TEST_CASE("label and field selectors filter lists") {
  running_server s;
  s.http->post(pods, pod("a", R"("labels":{"app":"web","tier":"front"})"));
  s.http->post(pods, pod("b", R"("labels":{"app":"web","tier":"back"})"));
  s.http->post(pods, pod("c", R"("labels":{"app":"db"})", R"("nodeName":"n1")"));
  auto names = [&](const std::string& query) {
    std::vector<std::string> out;
    json::value list = s.http->get(pods + "?" + query).json();
    for (const auto& item : list.find("items")->as_array())
      out.push_back(str(item, {"metadata", "name"}));
    return out;
  };
  CHECK(names("labelSelector=app%3Dweb") == std::vector<std::string>{"a", "b"});
  CHECK(names("labelSelector=app+in+%28db%2Cweb%29,tier!%3Dback") == std::vector<std::string>{"a", "c"});
  CHECK(names("labelSelector=!tier") == std::vector<std::string>{"c"});
  CHECK(names("fieldSelector=spec.nodeName%3Dn1") == std::vector<std::string>{"c"});
  CHECK(names("fieldSelector=spec.nodeName%3D") == std::vector<std::string>{"a", "b"});
  CHECK(names("fieldSelector=metadata.name%3Db,status.phase%3DPending") == std::vector<std::string>{"b"});
  auto bad = s.http->get(pods + "?fieldSelector=spec.foo%3Dx");
  CHECK(bad.status == 400);
  CHECK(bad.json().get_string("message") == "field label not supported: spec.foo");
}

TEST_CASE("limit and continue page through a list at one resourceVersion") {
  running_server s;
  for (auto n : {"p1", "p2", "p3", "p4", "p5"})
    REQUIRE(s.http->post(configmaps, configmap(n)).status == 201);
  auto first = s.http->get(configmaps + "?limit=2").json();
  REQUIRE(first.find("items")->as_array().size() == 2);
  std::string token = str(first, {"metadata", "continue"});
  REQUIRE_FALSE(token.empty());
  CHECK(first.at_path({"metadata", "remainingItemCount"})->as_int() == 3);
  std::vector<std::string> seen;
  json::value page = first;
  while (true) {
    for (const auto& item : page.find("items")->as_array())
      seen.push_back(str(item, {"metadata", "name"}));
    CHECK(str(page, {"metadata", "resourceVersion"}) == str(first, {"metadata", "resourceVersion"}));
    std::string next = str(page, {"metadata", "continue"});
    if (next.empty())
      break;
    page = s.http->get(configmaps + "?limit=2&continue=" + next).json();
  }
  CHECK(seen == std::vector<std::string>{"p1", "p2", "p3", "p4", "p5"});
  CHECK(s.http->get(configmaps + "?limit=2&resourceVersion=0").json().find("items")->as_array().size() == 5);
  auto bad = s.http->get(configmaps + "?limit=2&continue=bm90LWpzb24");
  CHECK(bad.status == 400);
  CHECK(bad.json().get_string("message").rfind("invalid continue token", 0) == 0);
}

TEST_CASE("list resourceVersion semantics: too large is 504, too old with limit is 410") {
  running_server s(apiserver::server::options{.watch_history = 2});
  for (auto n : {"a", "b", "c", "d"})
    s.http->post(configmaps, configmap(n));
  auto future = s.http->get(configmaps + "?resourceVersion=999999");
  CHECK(future.status == 504);
  CHECK(future.header("Retry-After") == "1");
  CHECK(future.json().get_string("reason") == "Timeout");
  auto old = s.http->get(configmaps + "?resourceVersion=1&limit=1");
  CHECK(old.status == 410);
  CHECK(old.json().get_string("message") == "The resourceVersion for the provided list is too old.");
  CHECK(s.http->get(configmaps + "?resourceVersion=1").status == 200);
}

TEST_CASE("the status subresource changes status only, the main resource ignores status") {
  running_server s;
  REQUIRE(s.http->post(pods, pod("st")).status == 201);
  auto patched = s.http->patch(pods + "/st/status",
                               R"({"metadata":{"labels":{"seen":"yes"}},"spec":{"nodeName":"ignored"},
                                   "status":{"phase":"Running","podIP":"10.1.2.3"}})",
                               "application/merge-patch+json");
  REQUIRE(patched.status == 200);
  json::value p = patched.json();
  CHECK(str(p, {"status", "phase"}) == "Running");
  CHECK(p.at_path({"status", "podIPs"})->as_array().at(0).get_string("ip") == "10.1.2.3");
  CHECK(str(p, {"spec", "nodeName"}).empty());
  CHECK(str(p, {"metadata", "labels", "seen"}) == "yes");

  auto main = s.http->patch(pods + "/st", R"({"status":{"phase":"Failed"}})", "application/merge-patch+json");
  REQUIRE(main.status == 200);
  CHECK(str(main.json(), {"status", "phase"}) == "Running");
}

TEST_CASE("binding assigns a node once and reports a conflict the second time") {
  running_server s;
  REQUIRE(s.http->post(pods, pod("b1")).status == 201);
  std::string binding =
      R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"b1","annotations":{"kozmo.io/cells":"0-1"}},
          "target":{"apiVersion":"v1","kind":"Node","name":"node-1"}})";
  auto bound = s.http->post(pods + "/b1/binding", binding);
  CHECK(bound.status == 201);
  CHECK(bound.json().get_string("status") == "Success");
  json::value p = s.http->get(pods + "/b1").json();
  CHECK(str(p, {"spec", "nodeName"}) == "node-1");
  CHECK(str(p, {"metadata", "annotations", "kozmo.io/cells"}) == "0-1");
  bool scheduled = false;
  for (const auto& c : p.at_path({"status", "conditions"})->as_array())
    scheduled = scheduled || (c.get_string("type") == "PodScheduled" && c.get_string("status") == "True");
  CHECK(scheduled);

  auto again = s.http->post(pods + "/b1/binding", binding);
  CHECK(again.status == 409);
  CHECK(again.json().get_string("message") ==
        "Operation cannot be fulfilled on pods/binding \"b1\": pod b1 is already assigned to node \"node-1\"");
  CHECK(str(again.json(), {"details", "kind"}) == "pods/binding");

  REQUIRE(s.http->post(pods, pod("b2")).status == 201);
  auto legacy = s.http->post("/api/v1/namespaces/default/bindings",
                             R"({"metadata":{"name":"b2"},"target":{"kind":"Node","name":"node-2"}})");
  CHECK(legacy.status == 201);
  CHECK(str(s.http->get(pods + "/b2").json(), {"spec", "nodeName"}) == "node-2");
}

TEST_CASE("services get a cluster IP from 10.96.0.0/12 and headless ones keep None") {
  running_server s;
  auto svc = s.http->post("/api/v1/namespaces/default/services",
                          R"({"metadata":{"name":"web"},"spec":{"selector":{"app":"web"},"ports":[{"port":80}]}})");
  REQUIRE(svc.status == 201);
  std::string ip = str(svc.json(), {"spec", "clusterIP"});
  CHECK(ip.rfind("10.", 0) == 0);
  int second = std::stoi(ip.substr(3, ip.find('.', 3) - 3));
  CHECK(second >= 96);
  CHECK(second <= 111);
  CHECK(str(svc.json(), {"spec", "type"}) == "ClusterIP");
  auto headless = s.http->post("/api/v1/namespaces/default/services",
                               R"({"metadata":{"name":"h"},"spec":{"clusterIP":"None","selector":{"app":"x"}}})");
  REQUIRE(headless.status == 201);
  CHECK(str(headless.json(), {"spec", "clusterIP"}) == "None");
}

TEST_CASE("bad requests get Kubernetes Status errors") {
  running_server s;
  SECTION("malformed JSON") {
    auto res = s.http->post(pods, R"({"apiVersion":"v1","kind":"Pod")");
    CHECK(res.status == 400);
    CHECK(res.json().get_string("reason") == "BadRequest");
    CHECK(res.json().get_string("message").rfind(
              "the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error", 0) == 0);
  }
  SECTION("wrong kind") {
    auto res = s.http->post(pods, configmap("x"));
    CHECK(res.status == 400);
    CHECK(res.json().get_string("message") ==
          "ConfigMap in version \"v1\" cannot be handled as a Pod: converting (v1.ConfigMap) to (core.Pod): unknown conversion");
  }
  SECTION("a pod without containers") {
    auto res = s.http->post(pods, R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"bad"},"spec":{}})");
    CHECK(res.status == 422);
    CHECK(res.json().get_string("reason") == "Invalid");
    CHECK(res.json().get_string("message") == "Pod \"bad\" is invalid: spec.containers: Required value");
    CHECK(res.json().at_path({"details", "causes"})->as_array().at(0).get_string("field") == "spec.containers");
  }
  SECTION("no name and no generateName") {
    auto res = s.http->post(configmaps, R"({"data":{}})");
    CHECK(res.status == 422);
    CHECK(res.json().get_string("message").find("metadata.name: Required value") != std::string::npos);
  }
  SECTION("an invalid name") {
    auto res = s.http->post(configmaps, configmap("Bad_Name"));
    CHECK(res.status == 422);
    CHECK(res.json().get_string("message").find("a lowercase RFC 1123 subdomain") != std::string::npos);
  }
  SECTION("a missing namespace") {
    auto res = s.http->post("/api/v1/namespaces/nope/configmaps", configmap("x"));
    CHECK(res.status == 404);
    CHECK(res.json().get_string("message") == "namespaces \"nope\" not found");
  }
  SECTION("a missing object") {
    auto res = s.http->get(pods + "/nope");
    CHECK(res.status == 404);
    CHECK(res.json().get_string("message") == "pods \"nope\" not found");
    CHECK(str(res.json(), {"details", "name"}) == "nope");
  }
  SECTION("an unsupported media type") {
    auto post = s.http->post(configmaps, "k: v", "text/plain");
    CHECK(post.status == 415);
    CHECK(post.json().get_string("reason") == "UnsupportedMediaType");
    s.http->post(configmaps, configmap("m"));
    auto patch = s.http->patch(configmaps + "/m", "{}", "application/json");
    CHECK(patch.status == 415);
    CHECK(patch.json().get_string("message") == "415: Unsupported Media Type");
  }
  SECTION("an oversized body") {
    std::string big(4 * 1024 * 1024, 'x');
    auto res = s.http->post(configmaps, R"({"metadata":{"name":"big"},"data":{"k":")" + big + "\"}}");
    CHECK(res.status == 413);
    CHECK(res.json().get_string("reason") == "RequestEntityTooLarge");
    CHECK(s.http->get("/version").status == 200);  // and the server carries on
  }
}

TEST_CASE("YAML bodies are accepted like JSON") {
  running_server s;
  auto res = s.http->post(configmaps, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  n: \"1\"\n",
                          "application/yaml");
  REQUIRE(res.status == 201);
  CHECK(str(res.json(), {"data", "n"}) == "1");
}

TEST_CASE("in-process apply creates then merges, with the same validation as HTTP") {
  running_server s;
  auto created = s.srv.apply_object(*json::parse(configmap("inproc")));
  REQUIRE(created.has_value());
  CHECK(str(*created, {"data", "k"}) == "v");
  auto merged = s.srv.apply_object(*json::parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"inproc"},"data":{"k2":"v2"}})"));
  REQUIRE(merged.has_value());
  CHECK(str(*merged, {"data", "k"}) == "v");
  CHECK(str(*merged, {"data", "k2"}) == "v2");
  auto bad = s.srv.apply_object(*json::parse(R"({"apiVersion":"v1","kind":"Nope","metadata":{"name":"x"}})"));
  CHECK_FALSE(bad.has_value());
}

TEST_CASE("a pod spec accepts image updates and refuses other changes, even from a minimal PUT") {
  running_server s;
  REQUIRE(s.http->post(pods, pod("imm")).status == 201);
  std::string rv = str(s.http->get(pods + "/imm").json(), {"metadata", "resourceVersion"});
  // A client that sends back only what it knows (no defaulted fields) is not changing the spec.
  auto image = s.http->put(pods + "/imm", R"({"metadata":{"name":"imm","resourceVersion":")" + rv +
                                              R"("},"spec":{"containers":[{"name":"c","image":"busybox:1.37"}]}})");
  REQUIRE(image.status == 200);
  CHECK(image.json().at_path({"spec", "containers"})->as_array().at(0).get_string("image") == "busybox:1.37");
  CHECK(str(image.json(), {"spec", "serviceAccountName"}) == "default");
  CHECK(str(image.json(), {"status", "phase"}) == "Pending");
  auto command = s.http->patch(pods + "/imm", R"({"spec":{"containers":[{"name":"c","command":["sleep"]}]}})",
                               "application/strategic-merge-patch+json");
  CHECK(command.status == 422);
  CHECK(command.json().get_string("message").find("pod updates may not change fields") != std::string::npos);
}
