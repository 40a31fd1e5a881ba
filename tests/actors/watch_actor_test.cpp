// The watch actor over real sockets: against the embedded API server (with injected faults),
// or, when KOZMO_CONFORMANCE_KUBECONFIG names a kubeconfig, against that real cluster.
//
// What a user would notice if it broke: a controller that misses a pod, sees it twice, or
// keeps a deleted one after its watch connection dropped or its resourceVersion expired.
#include "actors/watch/object_traits.hpp"
#include "actors/watch/watch_actor.hpp"
#include "k8s/apiserver/server.hpp"
#include "k8s/client/client.hpp"
#include "k8s/client/config.hpp"
#include "k8s/metrics/registry.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <random>
#include <sstream>

using namespace kozmo;
using namespace std::chrono_literals;

namespace {

// Either the embedded server (faults available) or a real cluster from the environment.
struct target {
  std::unique_ptr<apiserver::server> embedded;
  std::shared_ptr<client::client> cli;
  std::string ns;

  target() {
    const char* kc = std::getenv("KOZMO_CONFORMANCE_KUBECONFIG");
    client::config cfg;
    if (kc && *kc) {
      auto loaded = client::load_kubeconfig(kc);
      REQUIRE(loaded.has_value());
      cfg = *loaded;
    } else {
      embedded = std::make_unique<apiserver::server>();
      REQUIRE(embedded->start().has_value());
      cfg.server = embedded->url();
    }
    cfg.qps = 500;
    cfg.burst = 1000;
    cli = std::make_shared<client::client>(cfg);
    static std::mt19937 rng{std::random_device{}()};
    ns = "watch-test-" + std::to_string(rng() % 1000000);
    json::value nsobj;
    nsobj["apiVersion"] = "v1";
    nsobj["kind"] = "Namespace";
    nsobj["metadata"]["name"] = ns;
    REQUIRE(cli->create({"", "v1", "namespaces", "", "", ""}, nsobj).has_value());
  }

  ~target() {
    if (!embedded)
      (void)cli->remove({"", "v1", "namespaces", "", ns, ""});
  }

  bool has_faults() const { return embedded != nullptr; }

  client::resource_ref pods(const std::string& name = {}) const { return {"", "v1", "pods", ns, name, ""}; }

  void create_pod(const std::string& name, const std::string& label = "a",
                  const std::string& scheduler = "default-scheduler") {
    auto body = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                            R"(","labels":{"group":")" + label + R"("}},"spec":{"schedulerName":")" + scheduler +
                            R"(","containers":[{"name":"c","image":"busybox"}]}})");
    REQUIRE(body.has_value());
    auto r = cli->create(pods(), *body);
    INFO(name << ": " << (r ? "" : r.err().message));
    REQUIRE(r.has_value());
  }

  void relabel(const std::string& name, const std::string& value) {
    json::value patch;
    patch["metadata"]["labels"]["step"] = value;
    auto r = cli->patch(pods(name), client::patch_type::merge, patch);
    REQUIRE(r.has_value());
  }

  void remove_pod(const std::string& name) {
    client::delete_options opts;
    opts.grace_period_seconds = 0;
    auto r = cli->remove(pods(name), opts);
    REQUIRE(r.has_value());
  }

  // What the server holds now: name → resourceVersion.
  std::map<std::string, std::string> server_state() {
    auto list = cli->list_all(pods());
    REQUIRE(list.has_value());
    std::map<std::string, std::string> out;
    for (const auto& item : list->find("items")->as_array())
      out[item.at_path({"metadata", "name"})->as_string()] = item.at_path({"metadata", "resourceVersion"})->as_string();
    return out;
  }
};

// A subscriber's view, built only from the events it receives.
struct view {
  std::map<std::string, std::string> items; // name → resourceVersion
  int duplicates = 0;

  void see(const object_event<k8s::pod>& ev) {
    const auto& name = ev.object->metadata.name;
    const auto& rv = ev.object->metadata.resource_version;
    switch (ev.type) {
    case watch::event_type::added:
      if (items.count(name))
        ++duplicates;
      items[name] = rv;
      break;
    case watch::event_type::modified:
      if (items.count(name) && items[name] == rv)
        ++duplicates;
      items[name] = rv;
      break;
    case watch::event_type::deleted:
      if (!items.erase(name))
        ++duplicates;
      break;
    }
  }
};

// Receives events until the view equals `want` or `timeout` passes.
bool converge(caf::scoped_actor& self, view& v, const std::map<std::string, std::string>& want,
              std::chrono::milliseconds timeout = 15s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (v.items != want && std::chrono::steady_clock::now() < deadline) {
    self->receive([&](const object_event<k8s::pod>& ev) { v.see(ev); },
                  caf::after(100ms) >> [] {});
  }
  return v.items == want;
}

// A watch of the target's pods (those `field_selector` selects, when given).
caf::actor spawn_pods_watch(caf::actor_system& sys, const target& t, std::string field_selector = {}) {
  watch::watch_config wc;
  wc.resource = t.pods();
  wc.field_selector = std::move(field_selector);
  return watch::spawn_watch<k8s::pod>(sys, t.cli, wc);
}

// Waits until the watch has listed (its first LIST applied).
void await_synced(caf::scoped_actor& self, const caf::actor& w, std::chrono::seconds timeout) {
  self->request(w, timeout, atoms::synced_atom::value).receive([](caf::ok_atom) {}, [](caf::error& e) {
    FAIL("watch never synced: " << caf::to_string(e));
  });
}

watch_stats stats_of(caf::scoped_actor& self, const caf::actor& w) {
  watch_stats out;
  self->request(w, 5s, atoms::stats_atom::value).receive([&](watch_stats& s) { out = s; }, [](caf::error&) {});
  return out;
}

} // namespace

TEST_CASE("a subscriber sees every pod that exists and every change after it subscribed") {
  target t;
  t.create_pod("before-1");
  t.create_pod("before-2");
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  {
    caf::scoped_actor self{sys};
    auto w = spawn_pods_watch(sys, t);
    await_synced(self, w, 10s);
    self->send(w, atoms::subscribe_atom::value, watch::index_kind::all, std::string(), caf::actor_cast<caf::actor>(self));
    view v;
    t.create_pod("after-1");
    t.relabel("before-1", "1");
    t.remove_pod("before-2");
    CHECK(converge(self, v, t.server_state()));
    CHECK(v.duplicates == 0);
    CHECK(v.items.count("after-1") == 1);
    CHECK(v.items.count("before-2") == 0);
    caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  }
}

TEST_CASE("a subscription by label delivers only matching pods, and a pod leaving the label is reported gone") {
  target t;
  t.create_pod("red-1", "red");
  t.create_pod("blue-1", "blue");
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  {
    caf::scoped_actor self{sys};
    auto w = spawn_pods_watch(sys, t);
    self->send(w, atoms::subscribe_atom::value, watch::index_kind::label, std::string("group=red"),
               caf::actor_cast<caf::actor>(self));
    view v;
    auto state = t.server_state();
    CHECK(converge(self, v, {{"red-1", state.at("red-1")}}));
    json::value patch;
    patch["metadata"]["labels"]["group"] = "blue";
    REQUIRE(t.cli->patch(t.pods("red-1"), client::patch_type::merge, patch).has_value());
    CHECK(converge(self, v, {}));
    CHECK(v.duplicates == 0);
    caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  }
}

TEST_CASE("a LIST of many batches' worth of pods is read whole, each pod once") {
  // Its items reach the watch in batches of about 256 KiB while the answer arrives: 600 pods of
  // about 1.2 KiB are three of them.
  target t;
  const std::string pad(1000, 'x');
  for (int i = 0; i < 600; ++i) {
    auto body = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"big-)" + std::to_string(i) +
                            R"(","annotations":{"pad":")" + pad + R"("}},"spec":{"containers":[{"name":"c","image":"busybox"}]}})");
    REQUIRE(body.has_value());
    REQUIRE(t.cli->create(t.pods(), *body).has_value());
  }
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  {
    caf::scoped_actor self{sys};
    auto w = spawn_pods_watch(sys, t);
    await_synced(self, w, 30s);
    CHECK(stats_of(self, w).objects == 600);
    self->send(w, atoms::subscribe_atom::value, watch::index_kind::all, std::string(), caf::actor_cast<caf::actor>(self));
    view v;
    CHECK(converge(self, v, t.server_state()));
    CHECK(v.items.size() == 600);
    CHECK(v.duplicates == 0);
    caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  }
}

TEST_CASE("a watch with a field selector on spec.schedulerName lists and follows only that scheduler's pods") {
  target t;
  t.create_pod("ours-1", "a", "kozmo-test");
  t.create_pod("theirs-1");
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  {
    caf::scoped_actor self{sys};
    auto w = spawn_pods_watch(sys, t, "spec.schedulerName=kozmo-test");
    self->send(w, atoms::subscribe_atom::value, watch::index_kind::all, std::string(), caf::actor_cast<caf::actor>(self));
    view v;
    CHECK(converge(self, v, {{"ours-1", t.server_state().at("ours-1")}}));
    t.create_pod("theirs-2");
    t.create_pod("ours-2", "a", "kozmo-test");
    t.remove_pod("theirs-1");
    auto state = t.server_state();
    CHECK(converge(self, v, {{"ours-1", state.at("ours-1")}, {"ours-2", state.at("ours-2")}}));
    CHECK(v.duplicates == 0);
    CHECK(stats_of(self, w).objects == 2); // the other scheduler's pods are not even held
    caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  }
}

// kozmo_watch_relists_total{resource=...} as /metrics shows it (0 before the first relist).
static double relists_of(const std::string& resource) {
  std::istringstream in(kozmo::metrics::render());
  const std::string series = "kozmo_watch_relists_total{resource=\"" + resource + "\"} ";
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(series, 0) == 0)
      return std::stod(line.substr(series.size()));
  return 0;
}

TEST_CASE("the watch converges through dropped connections, 410 relists, 429s and 500s without losing or repeating") {
  target t;
  if (!t.has_faults()) {
    // A real cluster cannot be told to misbehave; its streams still end on their own
    // (timeoutSeconds) and the watch must carry on from the last version.
    SUCCEED("fault injection needs the embedded server; see the next test for the real cluster");
    return;
  }
  auto& faults = t.embedded->faults();
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  {
    caf::scoped_actor self{sys};
    watch::watch_config wc;
    wc.resource = t.pods();
    wc.min_backoff = 20ms;
    wc.max_backoff = 200ms;
    auto w = watch::spawn_watch<k8s::pod>(sys, t.cli, wc);
    self->send(w, atoms::subscribe_atom::value, watch::index_kind::all, std::string(), caf::actor_cast<caf::actor>(self));
    view v;
    for (int i = 0; i < 5; ++i)
      t.create_pod("p" + std::to_string(i));
    REQUIRE(converge(self, v, t.server_state()));

    SECTION("connections dropped while pods change") {
      for (int round = 0; round < 5; ++round) {
        faults.drop_watches_now();
        t.create_pod("drop-" + std::to_string(round));
        t.relabel("p" + std::to_string(round), "r" + std::to_string(round));
        t.remove_pod("p" + std::to_string(round));
      }
      CHECK(converge(self, v, t.server_state()));
      CHECK(stats_of(self, w).rewatches >= 1);
    }
    SECTION("every resume answered with 410 Gone forces relists") {
      faults.expire_watch_resumes(true);
      faults.drop_watches_now();
      t.create_pod("during-410");
      t.remove_pod("p1");
      t.relabel("p2", "x");
      CHECK(converge(self, v, t.server_state()));
      CHECK(stats_of(self, w).lists >= 2);
      // What an operator graphs: kozmo_watch_relists_total{resource="pods"} moved.
      CHECK(relists_of("pods") >= 1);
      faults.expire_watch_resumes(false);
    }
    SECTION("the relist itself meets 429 with Retry-After and 500s") {
      // Changes first, then the faults: the test's own writes share the path.
      t.remove_pod("p3");
      t.create_pod("after-429");
      faults.expire_watch_resumes(true);
      faults.fail_next(2, 429, "/api/v1/namespaces/" + t.ns + "/pods", 1);
      faults.drop_watches_now();
      CHECK(converge(self, v, t.server_state()));
      t.create_pod("after-500");
      faults.fail_next(3, 500, "/api/v1/namespaces/" + t.ns + "/pods");
      faults.drop_watches_now();
      CHECK(converge(self, v, t.server_state()));
      faults.expire_watch_resumes(false);
    }
    SECTION("streams that end every few events") {
      faults.drop_watches_after(2);
      for (int i = 0; i < 12; ++i)
        t.relabel("p" + std::to_string(i % 5), std::to_string(i));
      CHECK(converge(self, v, t.server_state()));
      faults.drop_watches_after(0);
    }
    CHECK(v.duplicates == 0);
    caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  }
}

TEST_CASE("streams that the server ends on timeout are resumed from the last version") {
  target t;
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  {
    caf::scoped_actor self{sys};
    watch::watch_config wc;
    wc.resource = t.pods();
    wc.watch_timeout_seconds = 1;
    auto w = watch::spawn_watch<k8s::pod>(sys, t.cli, wc);
    self->send(w, atoms::subscribe_atom::value, watch::index_kind::all, std::string(), caf::actor_cast<caf::actor>(self));
    view v;
    t.create_pod("t1");
    REQUIRE(converge(self, v, t.server_state()));
    std::this_thread::sleep_for(2500ms); // at least two server-side timeouts
    t.create_pod("t2");
    t.remove_pod("t1");
    CHECK(converge(self, v, t.server_state()));
    CHECK(v.duplicates == 0);
    CHECK(stats_of(self, w).rewatches >= 2);
    caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  }
}
