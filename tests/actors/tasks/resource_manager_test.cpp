// The resource manager over real sockets to the embedded API server: it holds again the tokens
// the tasks' statuses say are held before it grants any, answers the tasks that asked before it
// was ready, tells a waiting task when its token comes, and shows the pool's use in its status.
#include "tests/support/json_doc.hpp"
#include "actors/controller/event_recorder_actor.hpp"
#include "actors/controller/executor_actor.hpp"
#include "actors/tasks/resource_manager_actor.hpp"
#include "k8s/client/client.hpp"
#include "messages/task_messages.hpp"

#include "tests/actors/support/api_polling.hpp"

#include "tests/actors/support/server_with_crds.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

using namespace kozmo;
using test::doc;
using namespace std::chrono_literals;

namespace {

struct fixture : test::server_with_crds {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::vector<caf::actor> actors;

  fixture() {
    REQUIRE(cli->create({"", "v1", "namespaces", "", "", ""},
                        doc(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ml"}})"))
                .has_value());
    sys = std::make_unique<caf::actor_system>(cfg);
  }
  ~fixture() {
    for (auto& a : actors)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    sys.reset();
  }

  caf::actor start_manager() {
    auto recorder = controller::spawn_event_recorder(*sys, cli);
    auto executor = controller::spawn_executor(*sys, cli, recorder);
    auto rm = tasks::spawn_resource_manager(*sys, {cli, executor, 50ms});
    actors.insert(actors.end(), {recorder, executor, rm});
    return rm;
  }

  // A TaskExecution in namespace ml; with `held`, its status says it holds a token of `pool`.
  std::string task(const std::string& name, const std::string& pool, bool held) {
    auto created = cli->create({"kozmo.io", "v1alpha1", "taskexecutions", "ml", "", ""},
                               doc(R"({"apiVersion":"kozmo.io/v1alpha1","kind":"TaskExecution","metadata":{"name":")" +
                                   name + R"("},"spec":{"type":"container","resourcePool":")" + pool +
                                   R"(","container":{"image":"busybox"}}})"));
    REQUIRE(created.has_value());
    if (held) {
      auto st = cli->patch_status({"kozmo.io", "v1alpha1", "taskexecutions", "ml", name, ""}, client::patch_type::merge,
                                  doc(R"({"status":{"phase":"Running","pool":{"name":")" + pool + R"(","held":true}}})"));
      REQUIRE(st.has_value());
    }
    return created->at_path({"metadata"})->get_string("uid");
  }
};

} // namespace

TEST_CASE("the resource manager restores held tokens before it grants, and hands a released token to the "
          "task that waited",
          "[tasks][resource-manager]") {
  fixture f;
  REQUIRE(f.cli->create({"kozmo.io", "v1alpha1", "resourcepools", "", "", ""},
                        doc(R"({"apiVersion":"kozmo.io/v1alpha1","kind":"ResourcePool","metadata":{"name":"p"},"spec":{"quota":1}})"))
              .has_value());
  auto a = f.task("a", "p", true); // held its token before "the restart"
  auto b = f.task("b", "p", false);
  auto rm = f.start_manager();

  // b asks at once, most likely before the manager has listed the tasks: it must still wait.
  caf::scoped_actor task_b{*f.sys};
  std::optional<pool_answer> answer;
  task_b->request(rm, 20s, pool_acquire{"p", b, "ml", "ml", "ml/b", 0})
      .receive([&](pool_answer& x) { answer = x; }, [&](caf::error& e) { FAIL(f.sys->render(e)); });
  REQUIRE(answer.has_value());
  CHECK_FALSE(answer->granted);
  CHECK_THAT(answer->message, Catch::Contains("ResourcePool \"p\" has all 1 tokens in use"));

  // a gives its token back: b is told, without asking again.
  caf::anon_send(rm, pool_release{"p", a});
  bool granted = false;
  task_b->receive([&](pool_granted& g) { granted = g.token == b; }, caf::after(10s) >> [] {});
  CHECK(granted);

  auto pool = test::poll_until([&] { return f.cli->get({"kozmo.io", "v1alpha1", "resourcepools", "", "p", ""}); },
                               [](const json::value& p) {
                                 const auto* h = p.at_path({"status", "holders"});
                                 return h && h->is_array() && h->as_array().size() == 1 &&
                                        h->as_array()[0].as_string() == "ml/b";
                               },
                               10s);
  CHECK(pool.at_path({"status"})->get_int("inUse") == 1);
  CHECK(pool.at_path({"status"})->get_int("waiting") == 0);
}

TEST_CASE("a task asking for a pool that does not exist waits, and gets its token when the pool is created",
          "[tasks][resource-manager]") {
  fixture f;
  auto t = f.task("early", "later", false);
  auto rm = f.start_manager();
  caf::scoped_actor task{*f.sys};
  std::optional<pool_answer> answer;
  task->request(rm, 20s, pool_acquire{"later", t, "ml", "ml", "ml/early", 0})
      .receive([&](pool_answer& x) { answer = x; }, [&](caf::error& e) { FAIL(f.sys->render(e)); });
  REQUIRE(answer.has_value());
  CHECK_FALSE(answer->granted);
  CHECK(answer->no_pool);
  REQUIRE(f.cli->create({"kozmo.io", "v1alpha1", "resourcepools", "", "", ""},
                        doc(R"({"apiVersion":"kozmo.io/v1alpha1","kind":"ResourcePool","metadata":{"name":"later"},"spec":{"quota":3}})"))
              .has_value());
  bool granted = false;
  task->receive([&](pool_granted& g) { granted = g.token == t; }, caf::after(10s) >> [] {});
  CHECK(granted);
}
