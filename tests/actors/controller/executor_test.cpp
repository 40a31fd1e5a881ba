// The controller kit's actors over real sockets to the embedded API server: the executor
// carries out plans by the rules of actors/controller/plan.hpp, and the event recorder turns
// repeated notes into one Event with a count, as `kubectl describe` shows them.
#include "actors/controller/event_recorder_actor.hpp"
#include "actors/controller/executor_actor.hpp"
#include "k8s/apiserver/server.hpp"
#include "k8s/client/client.hpp"

#include "tests/actors/controller/served_system.hpp"
#include "tests/actors/support/api_polling.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

using namespace kozmo;
using namespace kozmo::controller;
using namespace std::chrono_literals;

namespace {

struct fixture : test::served_system {
  caf::actor recorder;
  caf::actor executor;

  fixture() {
    recorder = spawn_event_recorder(*sys, cli);
    executor = spawn_executor(*sys, cli, recorder);
  }
  ~fixture() {
    caf::anon_send_exit(executor, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(recorder, caf::exit_reason::user_shutdown);
  }

  plan_outcome run(plan p) {
    plan_outcome out;
    caf::scoped_actor self{*sys};
    self->request(executor, 20s, run_plan{std::move(p)})
        .receive([&](plan_outcome& o) { out = std::move(o); }, [&](caf::error& e) { FAIL(sys->render(e)); });
    return out;
  }

  static client::resource_ref pods(const std::string& name = {}) { return {"", "v1", "pods", "default", name, ""}; }
  static json::value pod(const std::string& name) {
    return *json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                        R"("},"spec":{"containers":[{"name":"c","image":"busybox"}]}})");
  }
  bool exists(const std::string& name) { return cli->get(pods(name)).has_value(); }
  std::string uid_of(const std::string& name) { return cli->get(pods(name))->at_path({"metadata"})->get_string("uid"); }
};

json::value label(const std::string& value) {
  json::value p;
  p["metadata"]["labels"]["step"] = value;
  return p;
}

} // namespace

TEST_CASE("a plan runs in order and answers each step with what the server returned", "[controller][executor]") {
  fixture f;
  plan p;
  p.steps.push_back(create_step{fixture::pods(), fixture::pod("a")});
  p.steps.push_back(create_step{fixture::pods(), fixture::pod("b")});
  p.steps.push_back(patch_step{fixture::pods("a"), client::patch_type::merge, label("one")});
  auto out = f.run(std::move(p));
  REQUIRE(out.what == plan_outcome::result::done);
  REQUIRE(out.answers.size() == 3);
  CHECK(out.answers[0]->at_path({"metadata"})->get_string("name") == "a");
  CHECK(out.answers[1]->at_path({"metadata"})->get_string("name") == "b");
  CHECK(out.answers[2]->at_path({"metadata", "labels"})->get_string("step") == "one");
  CHECK(f.exists("a"));
  CHECK(f.exists("b"));
}

TEST_CASE("the first failure drops the rest of the plan and says which step failed and why",
          "[controller][executor]") {
  fixture f;
  plan p;
  p.steps.push_back(create_step{fixture::pods(), fixture::pod("first")});
  p.steps.push_back(patch_step{fixture::pods("missing"), client::patch_type::merge, label("x")});
  p.steps.push_back(create_step{fixture::pods(), fixture::pod("never")});
  auto out = f.run(std::move(p));
  CHECK(out.what == plan_outcome::result::failed);
  CHECK(out.failed_step == 1);
  CHECK(out.code == 404);
  CHECK_THAT(out.failure, Catch::StartsWith("patch pods missing: "));
  CHECK(out.answers[0].has_value());
  CHECK_FALSE(out.answers[2].has_value());
  CHECK(f.exists("first"));
  CHECK_FALSE(f.exists("never"));
}

TEST_CASE("a conflict re-reads the object so the caller's view catches up", "[controller][executor]") {
  fixture f;
  REQUIRE(f.cli->create(fixture::pods(), fixture::pod("taken")).has_value());
  auto uid = f.uid_of("taken");
  plan p;
  p.steps.push_back(create_step{fixture::pods(), fixture::pod("taken")});
  auto out = f.run(std::move(p));
  CHECK(out.what == plan_outcome::result::failed);
  CHECK(out.code == 409);
  REQUIRE(out.reread.has_value());
  CHECK(out.reread->at_path({"metadata"})->get_string("uid") == uid);
}

TEST_CASE("a chained patch takes its resourceVersion precondition from the plan's previous write",
          "[controller][executor]") {
  fixture f;
  auto created = f.cli->create(fixture::pods(), fixture::pod("chained"));
  REQUIRE(created.has_value());
  std::string rv = created->at_path({"metadata"})->get_string("resourceVersion");
  auto guarded = [&](const std::string& value) {
    json::value p = label(value);
    p["metadata"]["resourceVersion"] = rv; // the version this controller last saw
    return p;
  };
  SECTION("chained: the second write names the version the first one made") {
    plan p;
    p.steps.push_back(patch_step{fixture::pods("chained"), client::patch_type::merge, guarded("one")});
    p.steps.push_back(patch_step{fixture::pods("chained"), client::patch_type::merge, guarded("two"), true});
    auto out = f.run(std::move(p));
    REQUIRE(out.what == plan_outcome::result::done);
    CHECK(f.cli->get(fixture::pods("chained"))->at_path({"metadata", "labels"})->get_string("step") == "two");
  }
  SECTION("not chained: the second write is refused as stale (409), nothing is lost") {
    plan p;
    p.steps.push_back(patch_step{fixture::pods("chained"), client::patch_type::merge, guarded("one")});
    p.steps.push_back(patch_step{fixture::pods("chained"), client::patch_type::merge, guarded("two")});
    auto out = f.run(std::move(p));
    CHECK(out.what == plan_outcome::result::failed);
    CHECK(out.code == 409);
    CHECK(f.cli->get(fixture::pods("chained"))->at_path({"metadata", "labels"})->get_string("step") == "one");
  }
}

TEST_CASE("deleting what is already gone succeeds; a uid precondition spares a namesake", "[controller][executor]") {
  fixture f;
  REQUIRE(f.cli->create(fixture::pods(), fixture::pod("namesake")).has_value());
  plan p;
  p.steps.push_back(delete_step{fixture::pods("gone"), "", ""});
  p.steps.push_back(delete_step{fixture::pods("namesake"), "some-older-uid", ""});
  auto out = f.run(std::move(p));
  CHECK(out.what == plan_outcome::result::failed); // the precondition holds the namesake
  CHECK(out.failed_step == 1);
  CHECK(out.code == 409);
  CHECK(f.exists("namesake"));
}

TEST_CASE("a guard stops the plan when its owner is gone: quietly, or as a failure when asked",
          "[controller][executor]") {
  fixture f;
  REQUIRE(f.cli->create(fixture::pods(), fixture::pod("owner")).has_value());
  auto uid = f.uid_of("owner");
  SECTION("the owner is still there: the plan goes on") {
    plan p;
    p.steps.push_back(guard_step{fixture::pods("owner"), uid, false, ""});
    p.steps.push_back(create_step{fixture::pods(), fixture::pod("child")});
    CHECK(f.run(std::move(p)).what == plan_outcome::result::done);
    CHECK(f.exists("child"));
  }
  SECTION("a namesake replaced it: nothing more is written") {
    plan p;
    p.steps.push_back(guard_step{fixture::pods("owner"), "the-old-uid", false, ""});
    p.steps.push_back(create_step{fixture::pods(), fixture::pod("child")});
    CHECK(f.run(std::move(p)).what == plan_outcome::result::stopped);
    CHECK_FALSE(f.exists("child"));
  }
  SECTION("the owner was deleted and the guard must fail") {
    REQUIRE(f.cli->remove(fixture::pods("owner")).has_value());
    plan p;
    p.steps.push_back(guard_step{fixture::pods("owner"), uid, true, "adopt pods child"});
    p.steps.push_back(create_step{fixture::pods(), fixture::pod("child")});
    auto out = f.run(std::move(p));
    CHECK(out.what == plan_outcome::result::failed);
    CHECK_THAT(out.failure, Catch::StartsWith("adopt pods child: "));
    CHECK_FALSE(f.exists("child"));
  }
}

TEST_CASE("events go out once the steps before them succeeded, and a repeat counts on the same Event",
          "[controller][executor][events]") {
  fixture f;
  REQUIRE(f.cli->create(fixture::pods(), fixture::pod("subject")).has_value());
  auto uid = f.uid_of("subject");
  auto said = pod_note("default", "subject", uid, {"kozmo-test", ""}, "Normal", "Checked", "all good");
  for (int i = 0; i < 3; ++i) {
    plan p;
    p.steps.push_back(patch_step{fixture::pods("subject"), client::patch_type::merge, label(std::to_string(i))});
    p.steps.push_back(event_step{said});
    CHECK(f.run(std::move(p)).what == plan_outcome::result::done);
  }
  plan failing;
  failing.steps.push_back(patch_step{fixture::pods("missing"), client::patch_type::merge, label("x")});
  failing.steps.push_back(event_step{pod_note("default", "subject", uid, {"kozmo-test", ""}, "Warning", "Never",
                                              "not after a failure")});
  CHECK(f.run(std::move(failing)).what == plan_outcome::result::failed);

  auto counted = test::poll_until(
      [&]() -> expected<json::value> {
        client::list_options lo;
        lo.field_selector = "involvedObject.name=subject";
        return f.cli->list({"", "v1", "events", "default", "", ""}, lo);
      },
      [](const json::value& l) {
        const auto& items = l.find("items")->as_array();
        return items.size() == 1 && items[0].get_int("count") == 3;
      },
      10s);
  const auto& items = counted.find("items")->as_array();
  REQUIRE(items.size() == 1); // one Event, counted three times; the failed plan's never posted
  CHECK(items[0].get_string("reason") == "Checked");
  CHECK(items[0].get_int("count") == 3);
  CHECK(items[0].at_path({"source"})->get_string("component") == "kozmo-test");
}
