// What each REST verb puts on the wire, and list paging, checked at a scripted server.
#include "k8s/client/client.hpp"
#include "tests/client/support/scripted_server.hpp"
#include "tests/client/support/waiting.hpp"

#include <catch2/catch.hpp>

using namespace kozmo;
using namespace kozmo::client;
using kozmo::test::received_request;
using kozmo::test::scripted_server;
using kozmo::test::server_connection;

namespace {

config fast_config(const std::string& url) {
  config cfg;
  cfg.server = url;
  cfg.retry_backoff_base = std::chrono::milliseconds(1);
  cfg.retry_backoff_cap = std::chrono::milliseconds(10);
  return cfg;
}

// Echoes the request back as JSON so the test can look at what was sent.
void echo(const received_request& r, server_connection& c) {
  json::value out = json::object{{"method", r.method},
                                 {"target", r.target},
                                 {"contentType", r.headers.count("content-type") ? r.headers.at("content-type") : ""},
                                 {"body", r.body}};
  c.respond(r.method == "POST" ? 201 : 200, json::dump(out));
}

json::value sent_body(const json::value& echoed) {
  auto parsed = json::parse(echoed.get_string("body"));
  return parsed ? *parsed : json::value();
}

} // namespace

TEST_CASE("create, update, patch and delete send the method, path and body the API expects",
          "[verbs]") {
  scripted_server server(echo);
  kozmo::client::client k(fast_config(server.url()));
  resource_ref pod{"", "v1", "pods", "team-a", "p1"};
  json::value manifest = json::object{{"apiVersion", "v1"}, {"kind", "Pod"},
                                      {"metadata", json::object{{"name", "p1"}}}};

  auto created = k.create(pod, manifest);
  REQUIRE(created);
  CHECK(created->get_string("method") == "POST");
  CHECK(created->get_string("target") == "/api/v1/namespaces/team-a/pods");
  CHECK(created->get_string("contentType") == "application/json");
  CHECK(sent_body(*created) == manifest);

  auto updated = k.update(pod, manifest);
  REQUIRE(updated);
  CHECK(updated->get_string("method") == "PUT");
  CHECK(updated->get_string("target") == "/api/v1/namespaces/team-a/pods/p1");

  auto merged = k.patch(pod, patch_type::merge, json::object{{"metadata", json::object{{"labels", json::object{{"a", "b"}}}}}});
  REQUIRE(merged);
  CHECK(merged->get_string("method") == "PATCH");
  CHECK(merged->get_string("contentType") == "application/merge-patch+json");
  CHECK(merged->get_string("target") == "/api/v1/namespaces/team-a/pods/p1");

  auto applied = k.patch(pod, patch_type::apply, manifest, {"kozmo-scheduler", true});
  REQUIRE(applied);
  CHECK(applied->get_string("contentType") == "application/apply-patch+yaml");
  CHECK(applied->get_string("target") ==
        "/api/v1/namespaces/team-a/pods/p1?fieldManager=kozmo-scheduler&force=true");

  auto status = k.patch_status(pod, patch_type::strategic,
                               json::object{{"status", json::object{{"phase", "Running"}}}});
  REQUIRE(status);
  CHECK(status->get_string("target") == "/api/v1/namespaces/team-a/pods/p1/status");
  CHECK(status->get_string("contentType") == "application/strategic-merge-patch+json");

  auto put_status = k.update_status(pod, manifest);
  REQUIRE(put_status);
  CHECK(put_status->get_string("method") == "PUT");
  CHECK(put_status->get_string("target") == "/api/v1/namespaces/team-a/pods/p1/status");

  delete_options opts;
  opts.grace_period_seconds = 0;
  opts.propagation_policy = "Background";
  opts.precondition_uid = "u-1";
  auto removed = k.remove(pod, opts);
  REQUIRE(removed);
  CHECK(removed->get_string("method") == "DELETE");
  CHECK(removed->get_string("target") == "/api/v1/namespaces/team-a/pods/p1");
  auto del_body = sent_body(*removed);
  CHECK(del_body.get_string("kind") == "DeleteOptions");
  CHECK(del_body.get_int("gracePeriodSeconds", -1) == 0);
  CHECK(del_body.get_string("propagationPolicy") == "Background");
  REQUIRE(del_body.at_path({"preconditions", "uid"}));
  CHECK(del_body.at_path({"preconditions", "uid"})->as_string() == "u-1");

  auto plain_delete = k.remove({"", "v1", "configmaps", "team-a", "cm"});
  REQUIRE(plain_delete);
  CHECK(plain_delete->get_string("body").empty());
}

TEST_CASE("bind posts a v1 Binding carrying the node, pod uid and annotations", "[verbs]") {
  scripted_server server(echo);
  kozmo::client::client k(fast_config(server.url()));
  binding b;
  b.ns = "ml";
  b.pod = "worker-0";
  b.node = "gpu-node-3";
  b.pod_uid = "uid-7";
  b.annotations["kozmo.io/bind-info"] = "{\"cells\":[1,2]}";
  auto r = k.bind(b);
  REQUIRE(r);
  CHECK(r->get_string("method") == "POST");
  CHECK(r->get_string("target") == "/api/v1/namespaces/ml/pods/worker-0/binding");
  auto body = sent_body(*r);
  CHECK(body.get_string("kind") == "Binding");
  CHECK(body.at_path({"metadata", "name"})->as_string() == "worker-0");
  CHECK(body.at_path({"metadata", "uid"})->as_string() == "uid-7");
  CHECK(body.at_path({"metadata", "annotations", "kozmo.io/bind-info"})->as_string() ==
        "{\"cells\":[1,2]}");
  CHECK(body.at_path({"target", "kind"})->as_string() == "Node");
  CHECK(body.at_path({"target", "name"})->as_string() == "gpu-node-3");
}

TEST_CASE("events go to their own namespace, or the default one", "[verbs]") {
  scripted_server server(echo);
  auto cfg = fast_config(server.url());
  cfg.default_namespace = "kozmo-system";
  kozmo::client::client k(cfg);
  auto in_ns = k.create_event(json::object{{"kind", "Event"}, {"metadata", json::object{{"namespace", "ml"}}}});
  REQUIRE(in_ns);
  CHECK(in_ns->get_string("target") == "/api/v1/namespaces/ml/events");
  auto defaulted = k.create_event(json::object{{"kind", "Event"}});
  REQUIRE(defaulted);
  CHECK(defaulted->get_string("target") == "/api/v1/namespaces/kozmo-system/events");
}

TEST_CASE("list_all follows continue tokens and returns every item in one list", "[paging]") {
  scripted_server server([](const received_request& r, server_connection& c) {
    if (r.target == "/api/v1/namespaces/a/pods?labelSelector=app%3Dx&limit=2")
      c.respond(200, R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"442","continue":"t1","remainingItemCount":1},"items":[{"metadata":{"name":"p1"}},{"metadata":{"name":"p2"}}]})");
    else if (r.target == "/api/v1/namespaces/a/pods?labelSelector=app%3Dx&limit=2&continue=t1")
      c.respond(200, R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"442"},"items":[{"metadata":{"name":"p3"}}]})");
    else
      c.respond(400, R"({"kind":"Status","message":"unexpected )" + r.target + R"(","code":400})");
  });
  kozmo::client::client k(fast_config(server.url()));
  list_options opts;
  opts.label_selector = "app=x";
  opts.limit = 2;
  auto all = k.list_all({"", "v1", "pods", "a"}, opts);
  REQUIRE(all);
  CHECK(all->get_string("kind") == "PodList");
  REQUIRE(all->find("items"));
  const auto& items = all->find("items")->as_array();
  REQUIRE(items.size() == 3);
  CHECK(items[2].at_path({"metadata", "name"})->as_string() == "p3");
  CHECK(all->at_path({"metadata", "resourceVersion"})->as_string() == "442");
  CHECK_FALSE(all->at_path({"metadata", "continue"}));
  CHECK_FALSE(all->at_path({"metadata", "remainingItemCount"}));

  auto page = k.list({"", "v1", "pods", "a"}, opts);
  REQUIRE(page);
  CHECK(page->at_path({"metadata", "continue"})->as_string() == "t1");
}

TEST_CASE("an expired continue token restarts the listing as one unpaged list", "[paging]") {
  scripted_server server([](const received_request& r, server_connection& c) {
    if (r.target == "/api/v1/pods?limit=1")
      c.respond(200, R"({"kind":"PodList","metadata":{"resourceVersion":"5","continue":"old"},"items":[{"metadata":{"name":"p1"}}]})");
    else if (r.target == "/api/v1/pods?limit=1&continue=old")
      c.respond(410, R"({"kind":"Status","message":"The provided continue parameter is too old","reason":"Expired","code":410})");
    else if (r.target == "/api/v1/pods")
      c.respond(200, R"({"kind":"PodList","metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"p1"}},{"metadata":{"name":"p2"}}]})");
    else
      c.respond(400, R"({"kind":"Status","message":"unexpected","code":400})");
  });
  kozmo::client::client k(fast_config(server.url()));
  list_options opts;
  opts.limit = 1;
  auto all = k.list_all({"", "v1", "pods"}, opts);
  REQUIRE(all);
  CHECK(all->find("items")->as_array().size() == 2);
  CHECK(all->at_path({"metadata", "resourceVersion"})->as_string() == "9");
}

TEST_CASE("async verbs deliver the decoded body to the callback", "[verbs]") {
  scripted_server server(echo);
  kozmo::client::client k(fast_config(server.url()));
  kozmo::test::mailbox<std::string> out;
  k.get({"apps", "v1", "deployments", "a", "d"}, [&](expected<json::value> v) {
    out.put(v ? v->get_string("target") : v.err().message);
  });
  auto target = out.take();
  REQUIRE(target);
  CHECK(*target == "/apis/apps/v1/namespaces/a/deployments/d");
}
