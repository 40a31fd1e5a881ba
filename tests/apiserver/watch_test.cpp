#include "tests/apiserver/fixture.hpp"

#include <thread>

using namespace kozmo;
using namespace kozmo::test;
using namespace std::chrono_literals;

namespace {
std::string event_name(const json::value& ev) { return str(ev, {"object", "metadata", "name"}); }
std::string rv_of(const json::value& obj) { return str(obj, {"metadata", "resourceVersion"}); }
} // namespace

TEST_CASE("a watch without resourceVersion starts with the existing objects, then live events") {
  running_server s;
  s.http->post(configmaps, configmap("old"));
  auto w = s.watch(configmaps + "?watch=true");
  REQUIRE(w->status() == 200);
  CHECK(w->header("Transfer-Encoding") == "chunked");
  CHECK(w->header("X-Kubernetes-Pf-Flowschema-Uid").empty());
  auto first = w->next_event();
  REQUIRE(first);
  CHECK(first->get_string("type") == "ADDED");
  CHECK(event_name(*first) == "old");
  CHECK(str(*first, {"object", "kind"}) == "ConfigMap");

  s.http->post(configmaps, configmap("new"));
  s.http->patch(configmaps + "/new", R"({"data":{"k":"v2"}})", "application/merge-patch+json");
  s.http->del(configmaps + "/new");
  std::vector<std::string> types;
  for (int i = 0; i < 3; ++i) {
    auto ev = w->next_event();
    REQUIRE(ev);
    CHECK(event_name(*ev) == "new");
    types.push_back(ev->get_string("type"));
  }
  CHECK(types == std::vector<std::string>{"ADDED", "MODIFIED", "DELETED"});
}

TEST_CASE("a watch resumes from a resourceVersion and replays what it missed") {
  running_server s;
  auto a = s.http->post(configmaps, configmap("a")).json();
  s.http->post(configmaps, configmap("b"));
  s.http->patch(configmaps + "/a", R"({"data":{"k":"x"}})", "application/merge-patch+json");
  auto w = s.watch(configmaps + "?watch=1&resourceVersion=" + rv_of(a));
  auto e1 = w->next_event();
  auto e2 = w->next_event();
  REQUIRE(e1);
  REQUIRE(e2);
  CHECK(e1->get_string("type") == "ADDED");
  CHECK(event_name(*e1) == "b");
  CHECK(e2->get_string("type") == "MODIFIED");
  CHECK(event_name(*e2) == "a");
  CHECK_FALSE(w->next_line(200ms));
}

TEST_CASE("resuming from a resourceVersion older than the history gives one 410 ERROR event") {
  running_server s(apiserver::server::options{.watch_history = 3});
  auto first = s.http->post(configmaps, configmap("a")).json();
  for (auto n : {"b", "c", "d", "e"})
    s.http->post(configmaps, configmap(n));
  auto w = s.watch(configmaps + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + rv_of(first));
  CHECK(w->status() == 200);
  auto ev = w->next_event();
  REQUIRE(ev);
  CHECK(ev->get_string("type") == "ERROR");
  CHECK(str(*ev, {"object", "reason"}) == "Expired");
  CHECK(ev->at_path({"object", "code"})->as_int() == 410);
  CHECK(str(*ev, {"object", "message"}).rfind("too old resource version: " + rv_of(first), 0) == 0);
  CHECK_FALSE(w->next_line(2s));
  CHECK(w->ended_cleanly());
}

TEST_CASE("bookmarks arrive on the interval and just before the timeout closes the stream") {
  running_server s(apiserver::server::options{.bookmark_interval = std::chrono::seconds(1)});
  auto cm = s.http->post(configmaps, configmap("a")).json();
  auto w = s.watch(configmaps + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=4&resourceVersion=" + rv_of(cm));
  s.http->post("/api/v1/namespaces/default/secrets", R"({"metadata":{"name":"s"}})");  // moves the RV on
  auto ev = w->next_event(3s);
  REQUIRE(ev);
  CHECK(ev->get_string("type") == "BOOKMARK");
  CHECK(str(*ev, {"object", "kind"}) == "ConfigMap");
  CHECK(std::stol(str(*ev, {"object", "metadata", "resourceVersion"})) > std::stol(rv_of(cm)));
  // No further bookmark while nothing changes; then the stream ends cleanly at the timeout.
  CHECK_FALSE(w->next_line(6s));
  CHECK(w->ended_cleanly());
}

TEST_CASE("a label-selected watch sees objects move in and out of the selection") {
  running_server s;
  s.http->post(configmaps, configmap("x", R"("labels":{"app":"web"})"));
  auto w = s.watch(configmaps + "?watch=1&labelSelector=app%3Dweb&resourceVersion=" +
                   rv_of(s.http->get(configmaps).json()));
  s.http->patch(configmaps + "/x", R"({"metadata":{"labels":{"app":"db"}}})", "application/merge-patch+json");
  s.http->patch(configmaps + "/x", R"({"metadata":{"labels":{"app":"web"}}})", "application/merge-patch+json");
  auto out = w->next_event();
  auto in = w->next_event();
  REQUIRE(out);
  REQUIRE(in);
  CHECK(out->get_string("type") == "DELETED");
  CHECK(in->get_string("type") == "ADDED");
}

TEST_CASE("a field-selected watch on one pod sees its graceful deletion end in DELETED") {
  running_server s;
  s.http->post(pods, pod("p6", {}, R"("nodeName":"n1")"));
  s.http->post(pods, pod("other", {}, R"("nodeName":"n1")"));
  auto deleted = s.http->del(pods + "/p6", R"({"propagationPolicy":"Background"})").json();
  CHECK_FALSE(str(deleted, {"metadata", "deletionTimestamp"}).empty());
  auto w = s.watch(pods + "?allowWatchBookmarks=true&fieldSelector=metadata.name%3Dp6&resourceVersion=" +
                   rv_of(deleted) + "&timeoutSeconds=374&watch=true");
  s.http->del(pods + "/other?gracePeriodSeconds=0");
  s.http->del(pods + "/p6", R"({"gracePeriodSeconds":0})");
  auto ev = w->next_event();
  REQUIRE(ev);
  CHECK(ev->get_string("type") == "DELETED");
  CHECK(event_name(*ev) == "p6");
}

TEST_CASE("a Table watch sends column definitions with the first event only") {
  running_server s;
  s.http->post(pods, pod("t1"));
  auto w = s.watch(pods + "?watch=true", {{"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}});
  auto first = w->next_event();
  REQUIRE(first);
  CHECK(str(*first, {"object", "kind"}) == "Table");
  CHECK(first->at_path({"object", "columnDefinitions"})->is_array());
  CHECK(first->at_path({"object", "rows"})->as_array().at(0).find("cells")->as_array().at(0).as_string() == "t1");
  s.http->post(pods, pod("t2"));
  auto second = w->next_event();
  REQUIRE(second);
  CHECK(second->at_path({"object", "columnDefinitions"})->is_null());
  CHECK(str(second->at_path({"object", "rows"})->as_array().at(0), {"object", "kind"}) == "PartialObjectMetadata");
}

TEST_CASE("sendInitialEvents streams the current objects then marks their end with a bookmark") {
  running_server s;
  s.http->post(configmaps, configmap("i1"));
  auto w = s.watch(configmaps + "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true");
  auto added = w->next_event();
  auto mark = w->next_event();
  REQUIRE(added);
  REQUIRE(mark);
  CHECK(added->get_string("type") == "ADDED");
  CHECK(mark->get_string("type") == "BOOKMARK");
  CHECK(str(*mark, {"object", "metadata", "annotations", "k8s.io/initial-events-end"}) == "true");
}

TEST_CASE("a watch on a custom resource streams its events with the CR's kind") {
  running_server s;
  REQUIRE(s.http->post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                       R"({"metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","scope":"Namespaced",
                           "names":{"plural":"widgets","kind":"Widget"},
                           "versions":[{"name":"v1","served":true,"storage":true,
                             "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}})")
              .status == 201);
  std::string path = "/apis/example.com/v1/namespaces/default/widgets";
  auto w = s.watch(path + "?watch=1");
  REQUIRE(s.http->post(path, R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"n":1}})").status == 201);
  auto ev = w->next_event();
  REQUIRE(ev);
  CHECK(str(*ev, {"object", "kind"}) == "Widget");
  CHECK(str(*ev, {"object", "apiVersion"}) == "example.com/v1");
}

TEST_CASE("concurrent writers and watchers: every watcher sees every event, in resourceVersion order") {
  running_server s;
  std::string start = rv_of(s.http->get(configmaps).json());
  std::vector<std::unique_ptr<watch_reader>> watchers;
  for (int i = 0; i < 3; ++i)
    watchers.push_back(s.watch(configmaps + "?watch=1&resourceVersion=" + start));
  constexpr int writers = 4, per_writer = 25;
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w)
    threads.emplace_back([&, w] {
      for (int i = 0; i < per_writer; ++i) {
        std::string name = "w" + std::to_string(w) + "-" + std::to_string(i);
        s.http->post(configmaps, configmap(name));
        s.http->patch(configmaps + "/" + name, R"({"data":{"k":"2"}})", "application/merge-patch+json");
        s.http->del(configmaps + "/" + name);
      }
    });
  for (auto& t : threads)
    t.join();
  for (auto& w : watchers) {
    long last = std::stol(start);
    int seen = 0;
    bool ordered = true;
    while (auto ev = w->next_event(2s)) {
      long rv = std::stol(str(*ev, {"object", "metadata", "resourceVersion"}));
      ordered = ordered && rv > last;
      last = rv;
      ++seen;
    }
    CHECK(seen == writers * per_writer * 3);
    CHECK(ordered);
  }
}
