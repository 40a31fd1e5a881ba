#include "tests/apiserver/fixture.hpp"
#include "k8s/apiserver/fault_route.hpp"

#include <thread>

using namespace kozmo;
using namespace kozmo::test;
using namespace std::chrono_literals;

TEST_CASE("injected 429s carry Retry-After and stop after the requested count") {
  running_server s;
  s.srv.faults().fail_next(2, 429, "/api/v1/namespaces/default/pods", 3);
  CHECK(s.http->get("/api/v1/namespaces/default/configmaps").status == 200);  // other paths unaffected
  auto first = s.http->get(pods);
  CHECK(first.status == 429);
  CHECK(first.header("Retry-After") == "3");
  CHECK(first.json().get_string("reason") == "TooManyRequests");
  CHECK(s.http->get(pods).status == 429);
  CHECK(s.http->get(pods).status == 200);
}

TEST_CASE("a prefix with a query fails only the requests that send that query") {
  running_server s;
  s.srv.faults().fail_next(1, 429, "/api/v1/pods?fieldSelector=spec.nodeName%3D");
  CHECK(s.http->get("/api/v1/pods").status == 200);
  CHECK(s.http->get("/api/v1/pods?labelSelector=a%3Db").status == 200);
  CHECK(s.srv.faults().failures_left() == 1);
  CHECK(s.http->get("/api/v1/pods?fieldSelector=spec.nodeName%3Dn1").status == 429);
  CHECK(s.srv.faults().failures_left() == 0);
  CHECK(s.http->get("/api/v1/pods?fieldSelector=spec.nodeName%3Dn1").status == 200);
}

TEST_CASE("injected 500s answer an InternalError Status") {
  running_server s;
  s.srv.faults().fail_next(1, 500);
  auto res = s.http->post(configmaps, configmap("x"));
  CHECK(res.status == 500);
  CHECK(res.json().get_string("reason") == "InternalError");
  CHECK(s.http->get(configmaps + "/x").status == 404);  // the failed request did nothing
}

TEST_CASE("open watches can be dropped now or after a number of events") {
  running_server s;
  SECTION("now") {
    auto w = s.watch(configmaps + "?watch=1");
    std::this_thread::sleep_for(100ms);
    s.srv.faults().drop_watches_now();
    CHECK_FALSE(w->next_line(3s));
    CHECK(w->ended());
    CHECK_FALSE(w->ended_cleanly());
  }
  SECTION("after two events") {
    s.srv.faults().drop_watches_after(2);
    auto w = s.watch(configmaps + "?watch=1");
    for (auto n : {"a", "b", "c"})
      s.http->post(configmaps, configmap(n));
    CHECK(w->next_event());
    CHECK(w->next_event());
    CHECK_FALSE(w->next_line(2s));
    CHECK(w->ended());
  }
}

TEST_CASE("watch resumes can be forced to expire with a 410 ERROR event") {
  running_server s;
  auto cm = s.http->post(configmaps, configmap("a")).json();
  s.srv.faults().expire_watch_resumes(true);
  auto w = s.watch(configmaps + "?watch=1&resourceVersion=" + str(cm, {"metadata", "resourceVersion"}));
  auto ev = w->next_event();
  REQUIRE(ev);
  CHECK(ev->get_string("type") == "ERROR");
  CHECK(ev->at_path({"object", "code"})->as_int() == 410);
  s.srv.faults().clear();
  auto again = s.watch(configmaps + "?watch=1&resourceVersion=" + str(cm, {"metadata", "resourceVersion"}));
  s.http->post(configmaps, configmap("b"));
  auto added = again->next_event();
  REQUIRE(added);
  CHECK(added->get_string("type") == "ADDED");
}

TEST_CASE("latency can be added to every response") {
  running_server s;
  s.srv.faults().set_latency(300ms);
  auto start = std::chrono::steady_clock::now();
  CHECK(s.http->get("/version").status == 200);
  CHECK(std::chrono::steady_clock::now() - start >= 300ms);
}

TEST_CASE("POST /debug/faults switches faults on and refuses what it cannot read") {
  apiserver::fault_injector f;
  auto post = [&](const std::string& body) { return apiserver::fault_route(f, "POST", body); };
  CHECK(post(R"({"action":"failNext","count":2,"status":429,"prefix":"/api/v1/pods"})").status == 200);
  CHECK(f.failures_left() == 2);
  CHECK(post(R"({"action":"latency","ms":50})").status == 200);
  CHECK(f.latency() == std::chrono::milliseconds(50));
  CHECK(post(R"({"action":"expireResumes"})").status == 200);
  CHECK(f.expire_resumes());
  CHECK(post(R"({"action":"clear"})").status == 200);
  CHECK(f.failures_left() == 0);
  CHECK_FALSE(f.expire_resumes());
  // Bad input: a 4xx that says what to send, and nothing switched on.
  CHECK(apiserver::fault_route(f, "GET", "").status == 405);
  CHECK(post("not json").status == 400);
  CHECK(post("[1]").status == 400);
  auto unknown = post(R"({"action":"explode"})");
  CHECK(unknown.status == 422);
  CHECK_THAT(unknown.body, Catch::Contains("use dropWatches, dropWatchesAfter"));
  CHECK(post(R"({"action":"latency","ms":99999999})").status == 422);
  CHECK(post(R"({"action":"failNext","count":0})").status == 422);
  CHECK(post(R"({"action":"failNext","status":200})").status == 422);
  CHECK(f.failures_left() == 0);
  CHECK(f.latency() == std::chrono::milliseconds(0));
}
