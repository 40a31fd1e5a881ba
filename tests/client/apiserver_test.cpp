// The client against a Kubernetes API server over a real socket: CRUD, paging, watch from a
// list's resourceVersion, subresources, errors decoded from Status, and retries through
// injected faults.
//
// The server is the embedded one, or, when KOZMO_CONFORMANCE_KUBECONFIG names a kubeconfig, that
// real cluster (tests/conformance): then the client also goes through TLS with CA verification
// and a client certificate from the kubeconfig. Each test works in a fresh namespace; the tests
// that need injected faults run only against the embedded server.
#include "k8s/apiserver/server.hpp"
#include "k8s/client/client.hpp"
#include "k8s/client/config.hpp"
#include "tests/client/support/waiting.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

using namespace kozmo;
using namespace kozmo::client;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

std::string random_suffix() {
  static std::mt19937 rng{std::random_device{}()};
  return std::to_string(rng() % 1000000);
}

// The server under test and a client for it, with a fresh namespace.
struct target {
  std::unique_ptr<apiserver::server> embedded;
  std::unique_ptr<kozmo::client::client> k;
  std::string ns = "client-test-" + random_suffix();

  target() {
    config c;
    const char* kc = std::getenv("KOZMO_CONFORMANCE_KUBECONFIG");
    if (kc && *kc) {
      auto loaded = load_kubeconfig(kc);
      INFO("kubeconfig " << kc << ": " << (loaded ? "" : loaded.err().message));
      REQUIRE(loaded);
      c = *loaded;
    } else {
      embedded = std::make_unique<apiserver::server>();
      REQUIRE(embedded->start());
      c.server = embedded->url();
    }
    c.retry_backoff_base = std::chrono::milliseconds(1);
    c.retry_backoff_cap = std::chrono::milliseconds(10);
    k = std::make_unique<kozmo::client::client>(c);
    // A real server refuses objects in a namespace that does not exist.
    auto created = k->create({"", "v1", "namespaces", "", "", ""},
                             json::object{{"apiVersion", "v1"},
                                          {"kind", "Namespace"},
                                          {"metadata", json::object{{"name", ns}}}});
    INFO("namespace " << ns << ": " << (created ? "" : created.err().message));
    REQUIRE(created);
  }

  // Without a controller-manager the namespace stays Terminating; the cluster is thrown away
  // after the suite, and a fresh name keeps the next test apart.
  ~target() { (void)k->remove({"", "v1", "namespaces", "", ns, ""}); }

  bool has_faults() const { return embedded != nullptr; }

  resource_ref configmap(std::string name = "") const {
    return resource_ref{"", "v1", "configmaps", ns, std::move(name)};
  }
  resource_ref pod(std::string name = "") const { return resource_ref{"", "v1", "pods", ns, std::move(name)}; }
  std::string configmaps_path() const { return "/api/v1/namespaces/" + ns + "/configmaps"; }
};

json::value configmap_body(const std::string& name, const std::string& value) {
  return json::object{{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata", json::object{{"name", name}, {"labels", json::object{{"app", "kozmo"}}}}},
                      {"data", json::object{{"k", value}}}};
}

json::value pod_body(const std::string& name) {
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", json::object{{"name", name}}},
      {"spec", json::object{{"schedulerName", "kozmo"},
                            {"containers", json::array{json::object{{"name", "c"}, {"image", "busybox"}}}}}}};
}

std::string data_k(const json::value& cm) {
  const json::value* v = cm.at_path({"data", "k"});
  return v && v->is_string() ? v->as_string() : "";
}

std::string string_at(const json::value& obj, std::initializer_list<std::string_view> path) {
  const json::value* v = obj.at_path(path);
  return v && v->is_string() ? v->as_string() : "";
}

} // namespace

TEST_CASE("an object survives a create, get, update, patch and delete round trip",
          "[apiserver]") {
  target t;
  auto& k = *t.k;

  auto created = k.create(t.configmap(), configmap_body("cm1", "v1"));
  REQUIRE(created);
  CHECK(created->at_path({"metadata", "uid"}));
  auto dup = k.create(t.configmap(), configmap_body("cm1", "v1"));
  REQUIRE_FALSE(dup);
  CHECK(dup.err().code == 409);
  CHECK(dup.err().reason == "AlreadyExists");
  CHECK(dup.err().message == "configmaps \"cm1\" already exists");

  auto got = k.get(t.configmap("cm1"));
  REQUIRE(got);
  CHECK(data_k(*got) == "v1");

  json::value changed = *got;
  changed["data"]["k"] = "v2";
  auto updated = k.update(t.configmap("cm1"), changed);
  REQUIRE(updated);
  CHECK(data_k(*updated) == "v2");
  // The old resourceVersion is stale now: a second PUT with it conflicts.
  auto stale = k.update(t.configmap("cm1"), changed);
  REQUIRE_FALSE(stale);
  CHECK(stale.err().code == 409);
  CHECK(stale.err().reason == "Conflict");
  CHECK_THAT(stale.err().message, StartsWith("Operation cannot be fulfilled on configmaps \"cm1\": the object has "
                                             "been modified"));

  auto patched = k.patch(t.configmap("cm1"), patch_type::merge,
                         json::object{{"data", json::object{{"k", "v3"}}}});
  REQUIRE(patched);
  CHECK(data_k(*patched) == "v3");
  auto jpatched = k.patch(t.configmap("cm1"), patch_type::json,
                          json::array{json::object{{"op", "replace"}, {"path", "/data/k"}, {"value", "v4"}}});
  REQUIRE(jpatched);
  CHECK(data_k(*jpatched) == "v4");
  auto spatched = k.patch(t.configmap("cm1"), patch_type::strategic,
                          json::object{{"data", json::object{{"k", "v5"}}}});
  REQUIRE(spatched);
  CHECK(data_k(*spatched) == "v5");

  REQUIRE(k.remove(t.configmap("cm1")));
  auto gone = k.get(t.configmap("cm1"));
  REQUIRE_FALSE(gone);
  CHECK(gone.err().code == 404);
  CHECK(gone.err().reason == "NotFound");
  CHECK(gone.err().message == "configmaps \"cm1\" not found");
}

TEST_CASE("a paged list hands out continue tokens and list_all gathers every page",
          "[apiserver]") {
  target t;
  auto& k = *t.k;
  for (int i = 0; i < 5; ++i)
    REQUIRE(k.create(t.configmap(), configmap_body("page-" + std::to_string(i), "x")));

  // The label keeps out what a real cluster may add to a namespace (kube-root-ca.crt).
  list_options opts;
  opts.limit = 2;
  opts.label_selector = "app=kozmo";
  auto first = k.list(t.configmap(), opts);
  REQUIRE(first);
  CHECK(first->find("items")->as_array().size() == 2);
  const json::value* token = first->at_path({"metadata", "continue"});
  REQUIRE(token);
  CHECK_FALSE(token->as_string().empty());

  list_options next = opts;
  next.continue_token = token->as_string();
  auto second = k.list(t.configmap(), next);
  REQUIRE(second);
  REQUIRE(second->find("items")->as_array().size() == 2);
  CHECK(string_at(second->find("items")->as_array()[0], {"metadata", "name"}) == "page-2");

  auto all = k.list_all(t.configmap(), opts);
  REQUIRE(all);
  const auto& items = all->find("items")->as_array();
  CHECK(items.size() == 5);
  std::vector<std::string> names;
  for (const auto& item : items) names.push_back(item.at_path({"metadata", "name"})->as_string());
  CHECK(names == std::vector<std::string>{"page-0", "page-1", "page-2", "page-3", "page-4"});
  CHECK_FALSE(all->at_path({"metadata", "continue"}));
  CHECK(all->at_path({"metadata", "resourceVersion"}));
}

TEST_CASE("a watch from a list's resourceVersion sees ADDED, MODIFIED and DELETED",
          "[apiserver]") {
  target t;
  auto& k = *t.k;
  REQUIRE(k.create(t.configmap(), configmap_body("before", "0")));
  auto listed = k.list(t.configmap());
  REQUIRE(listed);
  std::string rv = listed->at_path({"metadata", "resourceVersion"})->as_string();

  kozmo::test::mailbox<std::string> events;
  kozmo::test::mailbox<bool> ended;
  watch_options opts;
  opts.resource_version = rv;
  auto h = k.watch(t.configmap(), opts, [&](std::string_view line) {
    auto ev = json::parse(line);
    if (!ev) return events.put("undecodable: " + std::string(line));
    std::string type = ev->get_string("type");
    if (type == "BOOKMARK") return;
    const json::value* name = ev->at_path({"object", "metadata", "name"});
    events.put(type + " " + (name ? name->as_string() : "?"));
  }, [&](expected<ok_t> how) { ended.put(how.has_value()); });

  REQUIRE(k.create(t.configmap(), configmap_body("w", "1")));
  REQUIRE(k.patch(t.configmap("w"), patch_type::merge, json::object{{"data", json::object{{"k", "2"}}}}));
  REQUIRE(k.remove(t.configmap("w")));

  // Nothing before the list's version is replayed: "before" never shows up.
  CHECK(events.take() == std::string("ADDED w"));
  CHECK(events.take() == std::string("MODIFIED w"));
  CHECK(events.take() == std::string("DELETED w"));
  h.cancel();
  auto clean = ended.take();
  REQUIRE(clean);
  CHECK(*clean);
}

TEST_CASE("injected 429 and 500 answers are retried until the request succeeds", "[apiserver]") {
  target t;
  if (!t.has_faults()) {
    SUCCEED("fault injection needs the embedded server");
    return;
  }
  auto& k = *t.k;
  REQUIRE(k.create(t.configmap(), configmap_body("flaky", "1")));

  t.embedded->faults().fail_next(2, 500, t.configmaps_path());
  auto got = k.get(t.configmap("flaky"));
  REQUIRE(got);
  CHECK(data_k(*got) == "1");

  t.embedded->faults().fail_next(1, 429, t.configmaps_path(), 1);
  auto created = k.create(t.configmap(), configmap_body("after-429", "2"));
  REQUIRE(created);

  // A POST answered 500 may have been applied: it is reported, not repeated.
  t.embedded->faults().fail_next(1, 500, t.configmaps_path());
  auto refused = k.create(t.configmap(), configmap_body("after-500", "3"));
  REQUIRE_FALSE(refused);
  CHECK(refused.err().code == 500);
  auto absent = k.get(t.configmap("after-500"));
  REQUIRE_FALSE(absent);
  CHECK(absent.err().code == 404);
}

TEST_CASE("a watch the server ends, and a new one resumes from the last version",
          "[apiserver]") {
  target t;
  auto& k = *t.k;
  auto listed = k.list(t.configmap());
  REQUIRE(listed);
  std::string rv = listed->at_path({"metadata", "resourceVersion"})->as_string();

  kozmo::test::mailbox<std::string> rvs;
  kozmo::test::mailbox<bool> ended;
  auto on_line = [&](std::string_view line) {
    auto ev = json::parse(line);
    if (ev && ev->get_string("type") == "ADDED")
      rvs.put(ev->at_path({"object", "metadata", "resourceVersion"})->as_string());
  };
  watch_options opts;
  opts.resource_version = rv;
  // The embedded server drops the stream on request; a real one ends it at timeoutSeconds.
  if (!t.has_faults())
    opts.timeout_seconds = 2;
  k.watch(t.configmap(), opts, on_line, [&](expected<ok_t> how) { ended.put(how.has_value()); });
  REQUIRE(k.create(t.configmap(), configmap_body("d1", "1")));
  auto last = rvs.take();
  REQUIRE(last);
  if (t.has_faults())
    t.embedded->faults().drop_watches_now();
  auto first_end = ended.take();
  REQUIRE(first_end);
  if (!t.has_faults())
    CHECK(*first_end); // a timeoutSeconds end is clean, with no final event

  REQUIRE(k.create(t.configmap(), configmap_body("d2", "2")));
  opts.resource_version = *last;
  opts.timeout_seconds = 0;
  auto h = k.watch(t.configmap(), opts, on_line, [&](expected<ok_t>) { ended.put(true); });
  auto next = rvs.take();
  REQUIRE(next);
  CHECK(std::stoll(*next) > std::stoll(*last));
  h.cancel();
  REQUIRE(ended.take());
}

TEST_CASE("binding a pod and patching its status go through their subresources", "[apiserver]") {
  target t;
  auto& k = *t.k;
  // A real cluster has no nodes but the ones a test creates.
  std::string node = "client-test-node-" + random_suffix();
  resource_ref node_ref{"", "v1", "nodes", "", node};
  REQUIRE(k.create(node_ref, json::object{{"apiVersion", "v1"},
                                          {"kind", "Node"},
                                          {"metadata", json::object{{"name", node}}}}));

  auto created = k.create(t.pod(), pod_body("p1"));
  REQUIRE(created);
  std::string uid = created->at_path({"metadata", "uid"})->as_string();

  binding b{t.ns, "p1", node, uid, {{"kozmo.io/bind-info", "cells=1"}}};
  auto bound = k.bind(b);
  REQUIRE(bound);
  auto after = k.get(t.pod("p1"));
  REQUIRE(after);
  CHECK(string_at(*after, {"spec", "nodeName"}) == node);
  CHECK(string_at(*after, {"metadata", "annotations", "kozmo.io/bind-info"}) == "cells=1");

  auto again = k.bind(b);
  REQUIRE_FALSE(again);
  CHECK(again.err().code == 409);
  CHECK(again.err().reason == "Conflict");
  CHECK_THAT(again.err().message, Contains("is already assigned to node"));

  auto running = k.patch_status(t.pod("p1"), patch_type::merge,
                                json::object{{"status", json::object{{"phase", "Running"}}}});
  REQUIRE(running);
  CHECK(string_at(*running, {"status", "phase"}) == "Running");

  // A bound pod is deleted gracefully: it lingers, marked, until its kubelet confirms.
  auto marked = k.remove(t.pod("p1"));
  REQUIRE(marked);
  auto lingering = k.get(t.pod("p1"));
  REQUIRE(lingering);
  CHECK(lingering->at_path({"metadata", "deletionTimestamp"}));
  CHECK(lingering->at_path({"metadata", "deletionGracePeriodSeconds"}));
  delete_options now;
  now.grace_period_seconds = 0;
  REQUIRE(k.remove(t.pod("p1"), now));
  auto gone = k.get(t.pod("p1"));
  REQUIRE_FALSE(gone);
  CHECK(gone.err().code == 404);
  (void)k.remove(node_ref);
}

TEST_CASE("errors carry the code, reason and message of the server's Status", "[apiserver]") {
  target t;
  auto& k = *t.k;

  SECTION("an object that does not exist") {
    auto missing = k.get(t.pod("nope"));
    REQUIRE_FALSE(missing);
    CHECK(missing.err().code == 404);
    CHECK(missing.err().reason == "NotFound");
    CHECK(missing.err().message == "pods \"nope\" not found");
  }
  SECTION("an invalid object") {
    json::value bad = pod_body("bad");
    bad["spec"]["containers"] = json::array{};
    auto refused = k.create(t.pod(), bad);
    REQUIRE_FALSE(refused);
    CHECK(refused.err().code == 422);
    CHECK(refused.err().reason == "Invalid");
    CHECK_THAT(refused.err().message, StartsWith("Pod \"bad\" is invalid: spec.containers: Required value"));
  }
  SECTION("a field selector on a field that pods do not index") {
    list_options opts;
    opts.field_selector = "spec.foo=x";
    auto refused = k.list(t.pod(), opts);
    REQUIRE_FALSE(refused);
    CHECK(refused.err().code == 400);
    CHECK(refused.err().reason == "BadRequest");
    CHECK_THAT(refused.err().message, Contains("field label not supported: spec.foo"));
  }
  SECTION("a namespace that does not exist") {
    resource_ref elsewhere{"", "v1", "configmaps", t.ns + "-missing", ""};
    auto refused = k.create(elsewhere, configmap_body("cm", "x"));
    REQUIRE_FALSE(refused);
    CHECK(refused.err().code == 404);
    CHECK(refused.err().reason == "NotFound");
    CHECK(refused.err().message == "namespaces \"" + t.ns + "-missing\" not found");
  }
  SECTION("a stale resourceVersion precondition on delete") {
    auto created = k.create(t.configmap(), configmap_body("pre", "1"));
    REQUIRE(created);
    REQUIRE(k.patch(t.configmap("pre"), patch_type::merge, json::object{{"data", json::object{{"k", "2"}}}}));
    delete_options opts;
    opts.precondition_resource_version = created->at_path({"metadata", "resourceVersion"})->as_string();
    auto refused = k.remove(t.configmap("pre"), opts);
    REQUIRE_FALSE(refused);
    CHECK(refused.err().code == 409);
    CHECK(refused.err().reason == "Conflict");
    CHECK(k.get(t.configmap("pre")));
  }
}
