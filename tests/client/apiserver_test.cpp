// The client against the embedded API server over a real socket: CRUD, paging, watch from a
// list's resourceVersion, subresources, and retries through injected faults.
#include "k8s/apiserver/server.hpp"
#include "k8s/client/client.hpp"
#include "tests/client/support/waiting.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace kozmo;
using namespace kozmo::client;

namespace {

struct running_server {
  apiserver::server srv;
  running_server() {
    auto port = srv.start();
    REQUIRE(port);
  }
  config cfg() const {
    config c;
    c.server = const_cast<apiserver::server&>(srv).url();
    c.retry_backoff_base = std::chrono::milliseconds(1);
    c.retry_backoff_cap = std::chrono::milliseconds(10);
    return c;
  }
};

resource_ref configmap(std::string name = "") {
  return resource_ref{"", "v1", "configmaps", "default", std::move(name)};
}

json::value configmap_body(const std::string& name, const std::string& value) {
  return json::object{{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata", json::object{{"name", name}, {"labels", json::object{{"app", "kozmo"}}}}},
                      {"data", json::object{{"k", value}}}};
}

std::string data_k(const json::value& cm) {
  const json::value* v = cm.at_path({"data", "k"});
  return v && v->is_string() ? v->as_string() : "";
}

} // namespace

TEST_CASE("an object survives a create, get, update, patch and delete round trip",
          "[apiserver]") {
  running_server s;
  kozmo::client::client k(s.cfg());

  auto created = k.create(configmap(), configmap_body("cm1", "v1"));
  REQUIRE(created);
  CHECK(created->at_path({"metadata", "uid"}));
  auto dup = k.create(configmap(), configmap_body("cm1", "v1"));
  REQUIRE_FALSE(dup);
  CHECK(dup.err().code == 409);
  CHECK(dup.err().reason == "AlreadyExists");

  auto got = k.get(configmap("cm1"));
  REQUIRE(got);
  CHECK(data_k(*got) == "v1");

  json::value changed = *got;
  changed["data"]["k"] = "v2";
  auto updated = k.update(configmap("cm1"), changed);
  REQUIRE(updated);
  CHECK(data_k(*updated) == "v2");
  // The old resourceVersion is stale now: a second PUT with it conflicts.
  auto stale = k.update(configmap("cm1"), changed);
  REQUIRE_FALSE(stale);
  CHECK(stale.err().code == 409);
  CHECK(stale.err().reason == "Conflict");

  auto patched = k.patch(configmap("cm1"), patch_type::merge,
                         json::object{{"data", json::object{{"k", "v3"}}}});
  REQUIRE(patched);
  CHECK(data_k(*patched) == "v3");
  auto jpatched = k.patch(configmap("cm1"), patch_type::json,
                          json::array{json::object{{"op", "replace"}, {"path", "/data/k"}, {"value", "v4"}}});
  REQUIRE(jpatched);
  CHECK(data_k(*jpatched) == "v4");

  REQUIRE(k.remove(configmap("cm1")));
  auto gone = k.get(configmap("cm1"));
  REQUIRE_FALSE(gone);
  CHECK(gone.err().code == 404);
  CHECK(gone.err().reason == "NotFound");
  CHECK(gone.err().message == "configmaps \"cm1\" not found");
}

TEST_CASE("a paged list hands out continue tokens and list_all gathers every page",
          "[apiserver]") {
  running_server s;
  kozmo::client::client k(s.cfg());
  for (int i = 0; i < 5; ++i)
    REQUIRE(k.create(configmap(), configmap_body("page-" + std::to_string(i), "x")));

  list_options opts;
  opts.limit = 2;
  auto first = k.list(configmap(), opts);
  REQUIRE(first);
  CHECK(first->find("items")->as_array().size() == 2);
  const json::value* token = first->at_path({"metadata", "continue"});
  REQUIRE(token);
  CHECK_FALSE(token->as_string().empty());

  auto all = k.list_all(configmap(), opts);
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
  running_server s;
  kozmo::client::client k(s.cfg());
  REQUIRE(k.create(configmap(), configmap_body("before", "0")));
  auto listed = k.list(configmap());
  REQUIRE(listed);
  std::string rv = listed->at_path({"metadata", "resourceVersion"})->as_string();

  kozmo::test::mailbox<std::string> events;
  kozmo::test::mailbox<bool> ended;
  watch_options opts;
  opts.resource_version = rv;
  auto h = k.watch(configmap(), opts, [&](std::string_view line) {
    auto ev = json::parse(line);
    if (!ev) return events.put("undecodable: " + std::string(line));
    std::string type = ev->get_string("type");
    if (type == "BOOKMARK") return;
    const json::value* name = ev->at_path({"object", "metadata", "name"});
    events.put(type + " " + (name ? name->as_string() : "?"));
  }, [&](expected<ok_t> how) { ended.put(how.has_value()); });

  REQUIRE(k.create(configmap(), configmap_body("w", "1")));
  REQUIRE(k.patch(configmap("w"), patch_type::merge, json::object{{"data", json::object{{"k", "2"}}}}));
  REQUIRE(k.remove(configmap("w")));

  CHECK(events.take() == std::string("ADDED w"));
  CHECK(events.take() == std::string("MODIFIED w"));
  CHECK(events.take() == std::string("DELETED w"));
  h.cancel();
  auto clean = ended.take();
  REQUIRE(clean);
  CHECK(*clean);
}

TEST_CASE("injected 429 and 500 answers are retried until the request succeeds", "[apiserver]") {
  running_server s;
  kozmo::client::client k(s.cfg());
  REQUIRE(k.create(configmap(), configmap_body("flaky", "1")));

  s.srv.faults().fail_next(2, 500, "/api/v1/namespaces/default/configmaps");
  auto got = k.get(configmap("flaky"));
  REQUIRE(got);
  CHECK(data_k(*got) == "1");

  s.srv.faults().fail_next(1, 429, "/api/v1/namespaces/default/configmaps", 1);
  auto created = k.create(configmap(), configmap_body("after-429", "2"));
  REQUIRE(created);

  // A POST answered 500 may have been applied: it is reported, not repeated.
  s.srv.faults().fail_next(1, 500, "/api/v1/namespaces/default/configmaps");
  auto refused = k.create(configmap(), configmap_body("after-500", "3"));
  REQUIRE_FALSE(refused);
  CHECK(refused.err().code == 500);
  auto absent = k.get(configmap("after-500"));
  REQUIRE_FALSE(absent);
  CHECK(absent.err().code == 404);
}

TEST_CASE("a watch the server drops ends, and a new one resumes from the last version",
          "[apiserver]") {
  running_server s;
  kozmo::client::client k(s.cfg());
  auto listed = k.list(configmap());
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
  k.watch(configmap(), opts, on_line, [&](expected<ok_t>) { ended.put(true); });
  REQUIRE(k.create(configmap(), configmap_body("d1", "1")));
  auto last = rvs.take();
  REQUIRE(last);
  s.srv.faults().drop_watches_now();
  REQUIRE(ended.take());

  REQUIRE(k.create(configmap(), configmap_body("d2", "2")));
  opts.resource_version = *last;
  auto h = k.watch(configmap(), opts, on_line, [&](expected<ok_t>) { ended.put(true); });
  auto next = rvs.take();
  REQUIRE(next);
  CHECK(std::stoll(*next) > std::stoll(*last));
  h.cancel();
  REQUIRE(ended.take());
}

TEST_CASE("binding a pod and patching its status go through their subresources", "[apiserver]") {
  running_server s;
  kozmo::client::client k(s.cfg());
  resource_ref pod{"", "v1", "pods", "default", "p1"};
  json::value manifest = json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", json::object{{"name", "p1"}}},
      {"spec", json::object{{"schedulerName", "kozmo"},
                            {"containers", json::array{json::object{{"name", "c"}, {"image", "busybox"}}}}}}};
  auto created = k.create(pod, manifest);
  REQUIRE(created);
  std::string uid = created->at_path({"metadata", "uid"})->as_string();

  binding b{"default", "p1", "gpu-node-1", uid, {{"kozmo.io/bind-info", "cells=1"}}};
  auto bound = k.bind(b);
  REQUIRE(bound);
  auto after = k.get(pod);
  REQUIRE(after);
  CHECK(after->at_path({"spec", "nodeName"})->as_string() == "gpu-node-1");

  auto again = k.bind(b);
  REQUIRE_FALSE(again);
  CHECK(again.err().code == 409);

  auto running = k.patch_status(pod, patch_type::merge,
                                json::object{{"status", json::object{{"phase", "Running"}}}});
  REQUIRE(running);
  CHECK(running->at_path({"status", "phase"})->as_string() == "Running");
}
