#include "tests/apiserver/fixture.hpp"

#include <chrono>
#include <thread>

using namespace kozmo;
using namespace kozmo::test;

namespace {

std::string owner_ref(const json::value& owner, const std::string& kind, bool block = false) {
  return R"("ownerReferences":[{"apiVersion":"v1","kind":")" + kind + R"(","name":")" +
         str(owner, {"metadata", "name"}) + R"(","uid":")" + str(owner, {"metadata", "uid"}) + "\"" +
         (block ? R"(,"blockOwnerDeletion":true)" : "") + "}]";
}

int status_of(running_server& s, const std::string& path) { return s.http->get(path).status; }

} // namespace

TEST_CASE("deleting an unbound pod removes it at once and returns the pod") {
  running_server s;
  s.http->post(pods, pod("p1"));
  auto res = s.http->del(pods + "/p1", R"({"propagationPolicy":"Background"})");
  CHECK(res.status == 200);
  CHECK(res.json().get_string("kind") == "Pod");
  CHECK(res.json().at_path({"metadata", "deletionGracePeriodSeconds"})->as_int() == 0);
  CHECK(status_of(s, pods + "/p1") == 404);
}

TEST_CASE("deleting a bound pod is graceful until its kubelet confirms with grace 0") {
  running_server s;
  s.http->post(pods, pod("p6", {}, R"("nodeName":"n1","terminationGracePeriodSeconds":45)"));
  auto first = s.http->del(pods + "/p6");
  CHECK(first.status == 200);
  CHECK(first.json().at_path({"metadata", "deletionGracePeriodSeconds"})->as_int() == 45);
  CHECK_FALSE(str(first.json(), {"metadata", "deletionTimestamp"}).empty());
  CHECK(status_of(s, pods + "/p6") == 200);
  auto again = s.http->del(pods + "/p6");
  CHECK(str(again.json(), {"metadata", "resourceVersion"}) == str(first.json(), {"metadata", "resourceVersion"}));
  auto shorter = s.http->del(pods + "/p6?gracePeriodSeconds=5");
  CHECK(shorter.json().at_path({"metadata", "deletionGracePeriodSeconds"})->as_int() == 5);
  CHECK(status_of(s, pods + "/p6") == 200);
  auto forced = s.http->del(pods + "/p6", R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0})");
  CHECK(forced.status == 200);
  CHECK(status_of(s, pods + "/p6") == 404);
}

TEST_CASE("other kinds answer a delete with a Success Status naming the object") {
  running_server s;
  auto cm = s.http->post(configmaps, configmap("gone")).json();
  auto res = s.http->del(configmaps + "/gone");
  CHECK(res.status == 200);
  json::value st = res.json();
  CHECK(st.get_string("kind") == "Status");
  CHECK(st.get_string("status") == "Success");
  CHECK(str(st, {"details", "name"}) == "gone");
  CHECK(str(st, {"details", "kind"}) == "configmaps");
  CHECK(str(st, {"details", "uid"}) == str(cm, {"metadata", "uid"}));
  CHECK(s.http->del(configmaps + "/gone").status == 404);
}

TEST_CASE("delete preconditions on uid and resourceVersion are enforced") {
  running_server s;
  s.http->post(configmaps, configmap("pre"));
  auto res = s.http->del(configmaps + "/pre", R"({"preconditions":{"uid":"not-the-uid"}})");
  CHECK(res.status == 409);
  CHECK(res.json().get_string("message").rfind("Precondition failed: UID in precondition: not-the-uid", 0) == 0);
  CHECK(status_of(s, configmaps + "/pre") == 200);
}

TEST_CASE("an object with finalizers stays until the last finalizer is removed") {
  running_server s;
  s.http->post(configmaps, configmap("fin", R"("finalizers":["example.com/hold"])"));
  auto res = s.http->del(configmaps + "/fin");
  CHECK(res.status == 200);
  CHECK(res.json().get_string("kind") == "ConfigMap");
  CHECK_FALSE(str(res.json(), {"metadata", "deletionTimestamp"}).empty());
  CHECK(status_of(s, configmaps + "/fin") == 200);
  auto add = s.http->patch(configmaps + "/fin", R"({"metadata":{"finalizers":["example.com/hold","other"]}})",
                           "application/merge-patch+json");
  CHECK(add.status == 422);
  auto release = s.http->patch(configmaps + "/fin", R"({"metadata":{"finalizers":null}})", "application/merge-patch+json");
  CHECK(release.status == 200);
  CHECK(status_of(s, configmaps + "/fin") == 404);
}

TEST_CASE("background garbage collection deletes dependents whose every owner is gone") {
  running_server s;
  auto owner1 = s.http->post(configmaps, configmap("owner1")).json();
  auto owner2 = s.http->post(configmaps, configmap("owner2")).json();
  s.http->post(pods, pod("child", owner_ref(owner1, "ConfigMap")));
  std::string two_owners = R"("ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner1","uid":")" +
                           str(owner1, {"metadata", "uid"}) +
                           R"("},{"apiVersion":"v1","kind":"ConfigMap","name":"owner2","uid":")" +
                           str(owner2, {"metadata", "uid"}) + R"("}])";
  s.http->post(configmaps, configmap("shared", two_owners));
  s.http->del(configmaps + "/owner1", R"({"propagationPolicy":"Background"})");
  CHECK(status_of(s, pods + "/child") == 404);
  CHECK(status_of(s, configmaps + "/shared") == 200);
  s.http->del(configmaps + "/owner2");
  CHECK(status_of(s, configmaps + "/shared") == 404);
}

TEST_CASE("an object created for an owner that is already gone is garbage collected") {
  // A controller's create racing its owner's deletion: kube's garbage collector deletes such a
  // dependent (its owner is absent); left, it would be an orphan nobody owns.
  running_server s;
  auto owner = s.http->post(configmaps, configmap("job")).json();
  REQUIRE(s.http->del(configmaps + "/job").status == 200);
  CHECK(s.http->post(pods, pod("late", owner_ref(owner, "ConfigMap"))).status == 201);
  CHECK(status_of(s, pods + "/late") == 404);
  // An owner that exists keeps its dependent.
  auto alive = s.http->post(configmaps, configmap("alive")).json();
  CHECK(s.http->post(pods, pod("kept", owner_ref(alive, "ConfigMap"))).status == 201);
  CHECK(status_of(s, pods + "/kept") == 200);
}

TEST_CASE("foreground deletion removes blocking dependents before the owner") {
  running_server s;
  auto owner = s.http->post(configmaps, configmap("fg")).json();
  s.http->post(pods, pod("bound-child", owner_ref(owner, "ConfigMap", true), R"("nodeName":"n1")"));
  auto res = s.http->del(configmaps + "/fg", R"({"propagationPolicy":"Foreground"})");
  CHECK(res.status == 200);
  // The child is bound, so it terminates gracefully; the owner waits for it.
  auto waiting = s.http->get(configmaps + "/fg").json();
  CHECK_FALSE(str(waiting, {"metadata", "deletionTimestamp"}).empty());
  CHECK(waiting.at_path({"metadata", "finalizers"})->as_array().at(0).as_string() == "foregroundDeletion");
  CHECK_FALSE(str(s.http->get(pods + "/bound-child").json(), {"metadata", "deletionTimestamp"}).empty());
  s.http->del(pods + "/bound-child?gracePeriodSeconds=0");
  CHECK(status_of(s, pods + "/bound-child") == 404);
  CHECK(status_of(s, configmaps + "/fg") == 404);
}

TEST_CASE("orphan deletion keeps dependents and strips their owner references") {
  running_server s;
  auto owner = s.http->post(configmaps, configmap("orph")).json();
  s.http->post(pods, pod("kept", owner_ref(owner, "ConfigMap")));
  s.http->del(configmaps + "/orph", R"({"propagationPolicy":"Orphan"})");
  CHECK(status_of(s, configmaps + "/orph") == 404);
  auto kept = s.http->get(pods + "/kept");
  CHECK(kept.status == 200);
  CHECK(kept.json().at_path({"metadata", "ownerReferences"}) == nullptr);
}

TEST_CASE("the initial namespaces exist and a deleted namespace takes its contents with it") {
  running_server s;
  for (auto ns : {"default", "kube-system", "kube-public", "kube-node-lease"})
    CHECK(status_of(s, std::string("/api/v1/namespaces/") + ns) == 200);
  auto ns = s.http->post("/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}})");
  REQUIRE(ns.status == 201);
  CHECK(str(ns.json(), {"status", "phase"}) == "Active");
  s.http->post("/api/v1/namespaces/team/configmaps", configmap("c"));
  s.http->post("/api/v1/namespaces/team/pods", pod("running", {}, R"("nodeName":"n1")"));

  auto res = s.http->del("/api/v1/namespaces/team");
  CHECK(res.status == 200);
  CHECK(str(res.json(), {"status", "phase"}) == "Terminating");
  CHECK(status_of(s, "/api/v1/namespaces/team/configmaps/c") == 404);
  // The bound pod terminates gracefully; the namespace waits for it.
  CHECK(str(s.http->get("/api/v1/namespaces/team").json(), {"status", "phase"}) == "Terminating");
  auto refused = s.http->post("/api/v1/namespaces/team/configmaps", configmap("late"));
  CHECK(refused.status == 403);
  s.http->del("/api/v1/namespaces/team/pods/running?gracePeriodSeconds=0");
  CHECK(status_of(s, "/api/v1/namespaces/team") == 404);
}

TEST_CASE("deleting a CRD removes its custom resources and its API") {
  running_server s;
  s.http->post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
               R"({"metadata":{"name":"things.example.com"},"spec":{"group":"example.com","scope":"Cluster",
                   "names":{"plural":"things","kind":"Thing"},"versions":[{"name":"v1","served":true,"storage":true}]}})");
  REQUIRE(s.http->post("/apis/example.com/v1/things", R"({"kind":"Thing","apiVersion":"example.com/v1","metadata":{"name":"t"}})").status == 201);
  auto del = s.http->del("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.example.com");
  CHECK(del.status == 200);
  CHECK(status_of(s, "/apis/example.com/v1/things") == 404);
  CHECK(status_of(s, "/apis/example.com/v1") == 404);
}

TEST_CASE("deletecollection deletes what the selector matches") {
  running_server s;
  s.http->post(configmaps, configmap("a", R"("labels":{"x":"1"})"));
  s.http->post(configmaps, configmap("b", R"("labels":{"x":"1"})"));
  s.http->post(configmaps, configmap("c"));
  auto res = s.http->del(configmaps + "?labelSelector=x%3D1");
  CHECK(res.status == 200);
  CHECK(res.json().find("items")->as_array().size() == 2);
  CHECK(s.http->get(configmaps).json().find("items")->as_array().size() == 1);
}

TEST_CASE("a CRD must be named after its plural and group") {
  running_server s;
  auto res = s.http->post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                          R"({"metadata":{"name":"wrong.example.com"},"spec":{"group":"example.com","scope":"Cluster",
                              "names":{"plural":"things","kind":"Thing"},"versions":[{"name":"v1","served":true,"storage":true}]}})");
  CHECK(res.status == 422);
  CHECK(res.json().get_string("message").find("must be spec.names.plural+\".\"+spec.group") != std::string::npos);
  CHECK(s.http->get("/apis/example.com/v1").status == 404);
}

TEST_CASE("an Event expires event_ttl after its last write: gone from lists, DELETED for watchers") {
  apiserver::server::options o;
  o.event_ttl = std::chrono::seconds(3); // margins of a second or more: CI machines are shared
  running_server s(o);
  const std::string events = "/api/v1/namespaces/default/events";
  auto event = [](const std::string& name, int count) {
    return R"({"apiVersion":"v1","kind":"Event","metadata":{"name":")" + name +
           R"("},"involvedObject":{"kind":"Pod","namespace":"default","name":"p"},"reason":"Pulled","message":"m","count":)" +
           std::to_string(count) + "}";
  };
  REQUIRE(s.http->post(events, event("old", 1)).status == 201);
  REQUIRE(s.http->post(events, event("refreshed", 1)).status == 201);
  auto w = s.watch(events + "?watch=true&resourceVersion=" +
                   str(s.http->get(events).json(), {"metadata", "resourceVersion"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  // A write resets the clock, as kube-apiserver's lease does for an updated Event.
  REQUIRE(s.http->put(events + "/refreshed", event("refreshed", 2)).status == 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(1800));
  // Expiry happens with the next write of anything.
  REQUIRE(s.http->post(configmaps, configmap("tick")).status == 201);
  CHECK(s.http->get(events + "/old").status == 404);
  CHECK(s.http->get(events + "/refreshed").status == 200);
  bool saw_deleted = false;
  while (auto ev = w->next_event(std::chrono::seconds(2))) {
    if (ev->get_string("type") == "DELETED" && str(*ev, {"object", "metadata", "name"}) == "old")
      saw_deleted = true;
    if (saw_deleted)
      break;
  }
  CHECK(saw_deleted);
  // With a TTL of 0 Events are kept for ever.
  apiserver::server::options keep;
  keep.event_ttl = std::chrono::seconds(0);
  running_server forever(keep);
  REQUIRE(forever.http->post(events, event("kept", 1)).status == 201);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  REQUIRE(forever.http->post(configmaps, configmap("tick")).status == 201);
  CHECK(forever.http->get(events + "/kept").status == 200);
}
