// A controller's actor whose object was deleted under it writes once, hears 404 and stops: no
// retry loop (a bench teardown of 1,000 jobs used to log hundreds of "status write failed: ...
// not found (retrying in 250 ms)"). Each actor is spawned alone, without a supervisor (whose
// watch would stop it), for an object the embedded API server created and then deleted; the
// test counts the PATCHes answered 404 on the wire (the client's request metric).
#include "tests/support/json_doc.hpp"
#include "actors/controller/event_recorder_actor.hpp"
#include "actors/controller/executor_actor.hpp"
#include "actors/tasks/plugin.hpp"
#include "actors/tasks/task_actor.hpp"
#include "actors/training/job_model.hpp"
#include "actors/training/pod_builder.hpp"
#include "actors/training/training_job_actor.hpp"
#include "k8s/client/client.hpp"
#include "k8s/metrics/registry.hpp"
#include "k8s/model/codec.hpp"

#include "tests/actors/support/server_with_crds.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <thread>

using namespace kozmo;
using test::doc;
using namespace std::chrono_literals;

namespace {

// PATCH requests this process's clients saw answered with a 4xx.
double patches_refused() {
  const std::string series = R"(kozmo_client_requests_total{code="4xx",method="PATCH"} )";
  std::string text = metrics::render();
  auto at = text.find(series);
  return at == std::string::npos ? 0 : std::strtod(text.c_str() + at + series.size(), nullptr);
}

struct fixture : test::server_with_crds {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  controller::child_tools tools;
  std::vector<caf::actor> actors;

  fixture() {
    sys = std::make_unique<caf::actor_system>(cfg);
    auto recorder = controller::spawn_event_recorder(*sys, cli);
    auto executor = controller::spawn_executor(*sys, cli, recorder);
    actors = {recorder, executor};
    tools = {executor, recorder, controller::real_clock()};
  }
  ~fixture() {
    for (auto& a : actors)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    sys.reset();
  }

  // Creates the object, deletes it, and returns it as it was created (what a controller's
  // cache still holds when the delete has not reached it yet).
  std::shared_ptr<const k8s::custom_object> created_then_deleted(const client::resource_ref& where,
                                                                 const std::string& text) {
    auto created = cli->create(where, doc(text));
    REQUIRE(created.has_value());
    auto ref = where;
    ref.name = created->at_path({"metadata"})->get_string("name");
    REQUIRE(cli->remove(ref).has_value());
    auto object = k8s::from_json<k8s::custom_object>(*created);
    REQUIRE(object.has_value());
    return std::make_shared<const k8s::custom_object>(std::move(*object));
  }

  // The 404 PATCHes over `window` after `spawn` ran.
  double refused_during(const std::function<caf::actor()>& spawn, std::chrono::milliseconds window) {
    double before = patches_refused();
    actors.push_back(spawn());
    std::this_thread::sleep_for(window);
    return patches_refused() - before;
  }
};

} // namespace

TEST_CASE("a training job actor whose job was deleted writes its status once and does not retry",
          "[controller][deleted]") {
  fixture f;
  auto job = f.created_then_deleted({"kubeflow.org", "v1", "pytorchjobs", "default", "", ""},
                                    R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"gone"},
      "spec":{"pytorchReplicaSpecs":{"Master":{"replicas":1,"template":{"spec":{"containers":[{"name":"pytorch","image":"x"}]}}}}}})");
  // Its pod and service exist (the supervisor's view holds them), so the pass only writes the
  // status: no create, whose guard would have found the job gone.
  auto decoded = training::decode_job(*job);
  REQUIRE(decoded.has_value());
  const auto& master = decoded->replicas.front();
  auto gang = training::plan_gang(*decoded, {});
  controller::owned_view view;
  auto pod = k8s::from_json<k8s::pod>(training::build_pod(*decoded, master, 0, gang, {}));
  auto service = k8s::from_json<k8s::service>(training::build_service(*decoded, master, 0));
  REQUIRE((pod && service));
  view.pods.push_back(std::make_shared<const k8s::pod>(std::move(*pod)));
  view.services.push_back(std::make_shared<const k8s::service>(std::move(*service)));
  auto cfg = std::make_shared<training::job_actor_config>();
  cfg->cli = f.cli;
  cfg->min_backoff = 100ms; // a retry loop would write again at 100, 300 and 700 ms
  double refused = f.refused_during([&] { return training::spawn_training_job(*f.sys, nullptr, cfg, f.tools, job, view); },
                                    1500ms);
  CHECK(refused == 1);
}

TEST_CASE("a task actor whose TaskExecution was deleted writes once and does not retry", "[controller][deleted]") {
  fixture f;
  auto task = f.created_then_deleted({"kozmo.io", "v1alpha1", "taskexecutions", "default", "", ""},
                                     R"({"apiVersion":"kozmo.io/v1alpha1","kind":"TaskExecution","metadata":{"name":"gone"},
      "spec":{"type":"container","container":{"image":"busybox"}}})");
  auto cfg = std::make_shared<tasks::task_actor_config>();
  cfg->platform = std::make_shared<const tasks::platform_config>();
  cfg->plugins = std::make_shared<const tasks::plugin_registry>(tasks::plugin_registry::with_builtins());
  cfg->min_backoff = 100ms;
  double refused =
      f.refused_during([&] { return tasks::spawn_task_actor(*f.sys, nullptr, cfg, f.tools, task); }, 1500ms);
  CHECK(refused == 1);
}
