// The supervisor's referenced kinds (actors/controller/supervisor_actor.hpp, rules 1-4), over
// real sockets to the embedded API server: Widgets are the primaries, ConfigMaps a namespaced
// referenced kind and Profiles (a cluster-scoped CRD) a cluster-scoped one. Each child writes down
// what it was spawned with and every owned_event it receives; the tests read that journal.
#include "actors/controller/supervisor_actor.hpp"
#include "k8s/apiserver/server.hpp"
#include "k8s/client/client.hpp"
#include "messages/atoms.hpp"
#include "messages/watch_messages.hpp"
#include "tests/actors/controller/served_system.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <mutex>
#include <thread>

using namespace kozmo;
using namespace std::chrono_literals;

namespace {

const client::resource_ref crds{"apiextensions.k8s.io", "v1", "customresourcedefinitions", "", "", ""};

client::resource_ref widgets(const std::string& ns) { return {"kitref.test", "v1", "widgets", ns, "", ""}; }
client::resource_ref profiles(const std::string& name = {}) { return {"kitref.test", "v1", "profiles", "", name, ""}; }
client::resource_ref configmaps(const std::string& ns, const std::string& name = {}) {
  return {"", "v1", "configmaps", ns, name, ""};
}

json::value crd(const std::string& plural, const std::string& kind, const std::string& scope) {
  return *json::parse(R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":")" + plural + R"(.kitref.test"},
    "spec":{"group":"kitref.test","scope":")" + scope + R"(","names":{"plural":")" + plural + R"(","kind":")" + kind +
                      R"("},
      "versions":[{"name":"v1","served":true,"storage":true,
        "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}})");
}

// An object whose label `v` says which version of it a child saw.
json::value object(const std::string& api_version, const std::string& kind, const std::string& name,
                   const std::string& v = "1") {
  return *json::parse(R"({"apiVersion":")" + api_version + R"(","kind":")" + kind + R"(","metadata":{"name":")" + name +
                      R"(","labels":{"v":")" + v + R"("}}})");
}

json::value label_v(const std::string& v) {
  json::value p;
  p["metadata"]["labels"]["v"] = v;
  return p;
}

const char* type_name(watch::event_type t) {
  switch (t) {
  case watch::event_type::added:
    return "added";
  case watch::event_type::modified:
    return "modified";
  case watch::event_type::deleted:
    return "deleted";
  default:
    return "other";
  }
}

// "modified configmaps default/cm-a ConfigMap v1 v=2"
std::string describe(const controller::owned_event& e) {
  const auto& o = *e.object;
  const auto* v = o.document.at_path({"metadata", "labels"});
  return std::string(type_name(e.type)) + " " + e.resource + " " + o.metadata.namespace_ + "/" + o.metadata.name + " " +
         o.kind + " " + o.api_version + " v=" + (v ? v->get_string("v") : "?");
}

// What every child saw, by its primary's "ns/name", one line per spawn, view item and event.
struct journal {
  std::mutex m;
  std::map<std::string, std::vector<std::string>> lines;

  void add(const std::string& who, std::vector<std::string> more) {
    std::lock_guard<std::mutex> lock(m);
    auto& l = lines[who];
    l.insert(l.end(), more.begin(), more.end());
  }
  std::vector<std::string> of(const std::string& who) {
    std::lock_guard<std::mutex> lock(m);
    return lines[who];
  }
};

caf::behavior probe_child(caf::event_based_actor*, std::string who, controller::owned_view view,
                          std::shared_ptr<journal> j) {
  std::vector<std::string> first{"spawned"}; // written at once: a reader sees all of it or none
  for (const auto& e : view.others)
    first.push_back("view " + describe(e));
  j->add(who, std::move(first));
  return {
      [who, j](controller::owned_event& e) { j->add(who, {describe(e)}); },
      [](object_event<k8s::custom_object>&) {}, // its primary's changes: not what these tests read
  };
}

// The lines of `lines` after the first (the spawn and the view) that name `resource`.
std::vector<std::string> events_of(const std::vector<std::string>& lines, const std::string& resource) {
  std::vector<std::string> out;
  for (const auto& l : lines)
    if (l.rfind("view ", 0) != 0 && l != "spawned" && l.find(" " + resource + " ") != std::string::npos)
      out.push_back(l);
  return out;
}

struct fixture : test::served_system {
  std::shared_ptr<journal> seen = std::make_shared<journal>();
  caf::actor supervisor;

  fixture() {
    REQUIRE(cli->create(crds, crd("widgets", "Widget", "Namespaced")).has_value());
    REQUIRE(cli->create(crds, crd("profiles", "Profile", "Cluster")).has_value());
    REQUIRE(cli->create({"", "v1", "namespaces", "", "", ""}, object("v1", "Namespace", "other")).has_value());
  }
  ~fixture() {
    if (supervisor)
      caf::anon_send_exit(supervisor, caf::exit_reason::user_shutdown);
  }

  void create(const client::resource_ref& ref, json::value body) { REQUIRE(cli->create(ref, body).has_value()); }
  void widget(const std::string& ns, const std::string& name) {
    create(widgets(ns), object("kitref.test/v1", "Widget", name));
  }
  void configmap(const std::string& ns, const std::string& name) {
    create(configmaps(ns), object("v1", "ConfigMap", name));
  }
  void profile(const std::string& name) { create(profiles(), object("kitref.test/v1", "Profile", name)); }

  void start(const std::string& ns) {
    controller::supervisor_config sc;
    sc.name = "kitref-test";
    sc.cli = cli;
    sc.ns = ns;
    sc.primaries.push_back({widgets(""), "Widget", "kitref.test/v1"});
    sc.referenced.push_back({configmaps(""), "ConfigMap", "v1", false});
    sc.referenced.push_back({profiles(), "Profile", "kitref.test/v1", true});
    sc.spawn_child = [j = seen](caf::event_based_actor* parent, const controller::child_tools&,
                                std::shared_ptr<const k8s::custom_object> primary, controller::owned_view view) {
      auto who = primary->metadata.namespace_ + "/" + primary->metadata.name;
      return parent->spawn<caf::linked>(probe_child, who, std::move(view), j);
    };
    supervisor = controller::spawn_supervisor(*sys, std::move(sc));
  }

  // The child's journal once `done` holds for it (or as it is when that takes too long).
  std::vector<std::string> when(const std::string& who, const std::function<bool(const std::vector<std::string>&)>& done) {
    std::vector<std::string> lines;
    for (int i = 0; i < 200; ++i) {
      lines = seen->of(who);
      if (done(lines))
        break;
      std::this_thread::sleep_for(50ms);
    }
    return lines;
  }
  std::vector<std::string> spawned(const std::string& who) {
    return when(who, [](const auto& l) { return !l.empty(); });
  }
  std::vector<std::string> when_has(const std::string& who, const std::string& line) {
    return when(who, [&](const auto& l) { return std::find(l.begin(), l.end(), line) != l.end(); });
  }

  std::uint64_t children() {
    std::uint64_t n = 0;
    caf::scoped_actor self{*sys};
    self->request(supervisor, 10s, atoms::stats_atom::value)
        .receive([&](std::uint64_t count) { n = count; }, [&](caf::error& e) { FAIL(sys->render(e)); });
    return n;
  }
};

using lines = std::vector<std::string>;

} // namespace

TEST_CASE("referenced objects reach the children that can see them: in the view at spawn, then every change",
          "[controller][supervisor]") {
  fixture f;
  f.configmap("default", "cm-a");
  f.configmap("other", "cm-b");
  f.profile("p1");
  f.widget("default", "w1");
  f.widget("other", "w2");
  f.start(""); // all namespaces

  // Rule 2: the child's own namespace's config maps and every profile, kind and apiVersion filled in.
  CHECK(f.spawned("default/w1") == lines{"spawned", "view added configmaps default/cm-a ConfigMap v1 v=1",
                                         "view added profiles /p1 Profile kitref.test/v1 v=1"});
  CHECK(f.spawned("other/w2") == lines{"spawned", "view added configmaps other/cm-b ConfigMap v1 v=1",
                                       "view added profiles /p1 Profile kitref.test/v1 v=1"});

  // Rule 3. The config map of "other" is written before cm-a's changes: one watch delivers both in
  // order, so once w1 has cm-a's deletion it would have had cm-c too.
  f.configmap("other", "cm-c");
  REQUIRE(f.cli->patch(configmaps("default", "cm-a"), client::patch_type::merge, label_v("2")).has_value());
  f.profile("p2");
  REQUIRE(f.cli->patch(profiles("p1"), client::patch_type::merge, label_v("2")).has_value());
  REQUIRE(f.cli->remove(configmaps("default", "cm-a")).has_value());
  REQUIRE(f.cli->remove(profiles("p2")).has_value());

  const std::string p2_gone = "deleted profiles /p2 Profile kitref.test/v1 v=1";
  const lines profile_changes{"added profiles /p2 Profile kitref.test/v1 v=1",
                              "modified profiles /p1 Profile kitref.test/v1 v=2", p2_gone};
  auto w1 = f.when("default/w1", [&](const lines& l) {
    return std::count(l.begin(), l.end(), p2_gone) &&
           std::count(l.begin(), l.end(), "deleted configmaps default/cm-a ConfigMap v1 v=2");
  });
  CHECK(events_of(w1, "configmaps") == lines{"modified configmaps default/cm-a ConfigMap v1 v=2",
                                             "deleted configmaps default/cm-a ConfigMap v1 v=2"});
  CHECK(events_of(w1, "profiles") == profile_changes);

  auto w2 = f.when("other/w2", [&](const lines& l) {
    return std::count(l.begin(), l.end(), p2_gone) &&
           std::count(l.begin(), l.end(), "added configmaps other/cm-c ConfigMap v1 v=1");
  });
  CHECK(events_of(w2, "configmaps") == lines{"added configmaps other/cm-c ConfigMap v1 v=1"});
  CHECK(events_of(w2, "profiles") == profile_changes);

  // A child spawned now sees the objects as they are: cm-a and p2 gone, p1 changed.
  f.widget("default", "w3");
  CHECK(f.spawned("default/w3") == lines{"spawned", "view added profiles /p1 Profile kitref.test/v1 v=2"});
  CHECK(f.children() == 3);
}

TEST_CASE("a supervisor of one namespace reads referenced objects of that namespace and every cluster-scoped one",
          "[controller][supervisor]") {
  fixture f;
  f.configmap("default", "cm-a");
  f.configmap("other", "cm-b");
  f.profile("p1");
  f.widget("default", "w1");
  f.start("default");

  CHECK(f.spawned("default/w1") == lines{"spawned", "view added configmaps default/cm-a ConfigMap v1 v=1",
                                         "view added profiles /p1 Profile kitref.test/v1 v=1"});
  // cm-b's namespace is not watched; the profile watch, cluster-wide, still sees new profiles.
  f.configmap("other", "cm-c");
  f.configmap("default", "cm-d");
  f.profile("p2");
  auto w1 = f.when_has("default/w1", "added profiles /p2 Profile kitref.test/v1 v=1");
  w1 = f.when_has("default/w1", "added configmaps default/cm-d ConfigMap v1 v=1");
  CHECK(events_of(w1, "configmaps") == lines{"added configmaps default/cm-d ConfigMap v1 v=1"});
  CHECK(events_of(w1, "profiles") == lines{"added profiles /p2 Profile kitref.test/v1 v=1"});
}

TEST_CASE("a primary that exists before a referenced kind is listed is spawned once it is, with what it lists",
          "[controller][supervisor]") {
  fixture f;
  f.configmap("default", "cm-a");
  f.profile("p1");
  f.widget("default", "w1");
  // The profiles' LIST is answered 500 three times (each with Retry-After: 1); the widgets' is not.
  f.server.faults().fail_next(3, 500, "/apis/kitref.test/v1/profiles");
  f.start("");

  // While the profiles are not listed, no child runs: asked while a failure was still to come, the
  // supervisor has none (the widget watch lists at once, so a missing gate would show here).
  for (int i = 0; i < 100 && f.server.faults().failures_left() == 3; ++i)
    std::this_thread::sleep_for(20ms);
  std::this_thread::sleep_for(200ms); // time for the widget to reach the supervisor
  auto early = f.children();
  if (f.server.faults().failures_left() > 0)
    CHECK(early == 0);

  // Spawned once, after the listing, with the profile it lists in its view.
  CHECK(f.spawned("default/w1") == lines{"spawned", "view added configmaps default/cm-a ConfigMap v1 v=1",
                                         "view added profiles /p1 Profile kitref.test/v1 v=1"});
  CHECK(f.server.faults().failures_left() == 0);
  f.profile("p2");
  auto w1 = f.when_has("default/w1", "added profiles /p2 Profile kitref.test/v1 v=1");
  CHECK(std::count(w1.begin(), w1.end(), "spawned") == 1);
}
