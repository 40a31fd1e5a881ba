// The training supervisor and job actors through the embedding API: the embedded API server,
// simulated kubelets, the binder, and the training controller (engine_options::parts.training), seen
// the way a user sees them: GETs of jobs, pods, services and events. The last case runs two
// supervisors one after the other by hand to check that a restart takes over without duplicates.
#include "runtime/crds.hpp"
#include "actors/training/training_supervisor_actor.hpp"
#include "actors/watch/watch_actor.hpp"
#include "k8s/json/yaml.hpp"
#include "k8s/client/client.hpp"
#include "k8s/model/pod.hpp"
#include "runtime/engine_internal.hpp"

#include <caf/all.hpp>
#include "tests/actors/support/api_polling.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <thread>

using namespace kozmo;
using namespace std::chrono_literals;

namespace {

const client::resource_ref pytorchjobs{"kubeflow.org", "v1", "pytorchjobs", "default", "", ""};

struct training_cluster {
  engine e;
  std::shared_ptr<client::client> cli;

  training_cluster() : e(options()) {
    auto st = e.start();
    REQUIRE(st.has_value());
    cli = engine_internal::api(e);
    for (int i = 0; i < 100; ++i) {
      auto list = cli->list({"", "v1", "nodes", "", "", ""});
      if (list && list->find("items")->as_array().size() == 2)
        break;
      std::this_thread::sleep_for(50ms);
    }
    auto crd = cli->list(pytorchjobs);
    INFO("the PyTorchJob CRD is served: " << (crd ? "yes" : crd.err().message));
    REQUIRE(crd.has_value());
  }

  static engine_options options() {
    engine_options o;
    o.api.embedded = true;
    o.parts.nodes = kozmo::uniform_nodes(2, 8);
    o.parts.binder = true;
    o.parts.training = true;
    return o;
  }

  // A PyTorchJob with one master and `workers` workers; `worker_annotations` script the
  // workers' simulated life (kozmo.io/sim-*), `master_annotations` the master's.
  void create_job(const std::string& name, const std::string& master_annotations, int workers,
                  const std::string& worker_annotations, const std::string& run_policy = "{}",
                  const std::string& worker_restart = "OnFailure") {
    auto replica = [](int replicas, const std::string& restart, const std::string& annotations) {
      return R"({"replicas":)" + std::to_string(replicas) + R"(,"restartPolicy":")" + restart +
             R"(","template":{"metadata":{"annotations":{)" + annotations +
             R"(}},"spec":{"containers":[{"name":"pytorch","image":"kozmo/pytorch-mnist:1"}]}}})";
    };
    std::string text = R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":")" + name +
                       R"(","namespace":"default"},"spec":{"runPolicy":)" + run_policy +
                       R"(,"pytorchReplicaSpecs":{"Master":)" + replica(1, "OnFailure", master_annotations);
    if (workers > 0)
      text += R"(,"Worker":)" + replica(workers, worker_restart, worker_annotations);
    text += "}}}";
    create_raw(text);
  }

  void create_raw(const std::string& text) {
    auto body = json::parse(text);
    REQUIRE(body.has_value());
    auto r = cli->create(pytorchjobs, *body);
    INFO((r ? "" : r.err().message));
    REQUIRE(r.has_value());
  }

  expected<json::value> job(const std::string& name) {
    auto ref = pytorchjobs;
    ref.name = name;
    return cli->get(ref);
  }

  // Polls `get` until `pred` holds (up to `timeout`); returns the last answer.
  json::value wait_for(const std::function<expected<json::value>()>& get,
                       const std::function<bool(const json::value&)>& pred, std::chrono::milliseconds timeout = 30s) {
    return test::poll_until(get, pred, timeout);
  }

  json::value wait_job(const std::string& name, const std::function<bool(const json::value&)>& pred,
                       std::chrono::milliseconds timeout = 30s) {
    return wait_for([&] { return job(name); }, pred, timeout);
  }

  // The pods (or services) of a job, by the job-name label.
  expected<json::value> owned(const std::string& resource, const std::string& job_name) {
    client::list_options lo;
    lo.label_selector = "training.kubeflow.org/job-name=" + job_name;
    return cli->list({"", "v1", resource, "default", "", ""}, lo);
  }

  std::vector<std::string> names(const json::value& list) {
    std::vector<std::string> out;
    for (const auto& item : list.find("items")->as_array())
      out.push_back(item.at_path({"metadata"})->get_string("name"));
    std::sort(out.begin(), out.end());
    return out;
  }

  // "type reason: message" for each of the object's events.
  std::string events_of(const std::string& name) { return test::events_text(*cli, "default", name, true); }
};

const json::value* condition(const json::value& job, const std::string& type) {
  const auto* conds = job.at_path({"status", "conditions"});
  if (!conds || !conds->is_array())
    return nullptr;
  for (const auto& c : conds->as_array())
    if (c.get_string("type") == type)
      return &c;
  return nullptr;
}

bool is_true(const json::value& job, const std::string& type) {
  const auto* c = condition(job, type);
  return c && c->get_string("status") == "True";
}

std::string conditions_of(const json::value& job) {
  std::string out;
  if (const auto* conds = job.at_path({"status", "conditions"}); conds && conds->is_array())
    for (const auto& c : conds->as_array())
      out += c.get_string("type") + "=" + c.get_string("status") + " (" + c.get_string("reason") + ": " +
             c.get_string("message") + ")\n";
  return out;
}

bool finished(const json::value& job) { return is_true(job, "Succeeded") || is_true(job, "Failed"); }

} // namespace

TEST_CASE("a PyTorchJob with a master and a worker runs to Succeeded with a pod and a service per replica") {
  training_cluster c;
  const std::string sim = R"("kozmo.io/sim-duration":"2s","kozmo.io/sim-pull-duration":"100ms")";
  c.create_job("mnist", sim, 1, sim);

  auto running = c.wait_job("mnist", [](const json::value& j) { return is_true(j, "Running") || finished(j); });
  INFO(conditions_of(running));
  CHECK(is_true(running, "Created"));
  auto pods = c.owned("pods", "mnist");
  REQUIRE(pods.has_value());
  CHECK(c.names(*pods) == std::vector<std::string>{"mnist-master-0", "mnist-worker-0"});
  auto services = c.owned("services", "mnist");
  REQUIRE(services.has_value());
  CHECK(c.names(*services) == std::vector<std::string>{"mnist-master-0", "mnist-worker-0"});

  auto done = c.wait_job("mnist", finished);
  INFO(conditions_of(done));
  CHECK(is_true(done, "Succeeded"));
  CHECK_FALSE(is_true(done, "Running"));
  const auto* master = done.at_path({"status", "replicaStatuses", "Master"});
  REQUIRE(master);
  CHECK(master->get_int("succeeded", 0) == 1);
  CHECK_FALSE(done.at_path({"status"})->get_string("completionTime").empty());
  CHECK_THAT(c.events_of("mnist"), Catch::Contains("SuccessfulCreatePod"));
}

TEST_CASE("a worker that keeps failing is recreated and the job fails at its backoffLimit") {
  training_cluster c;
  // Exit 137 (killed) is retryable under ExitCode: the pod is deleted and recreated, and each
  // recreation counts against backoffLimit.
  c.create_job("flaky", R"("kozmo.io/sim-duration":"forever")", 1,
               R"("kozmo.io/sim-duration":"300ms","kozmo.io/sim-pull-duration":"100ms","kozmo.io/sim-exit-code":"137")",
               R"({"backoffLimit":2})", "ExitCode");
  auto done = c.wait_job("flaky", finished, 60s);
  INFO(conditions_of(done) << c.events_of("flaky"));
  REQUIRE(is_true(done, "Failed"));
  CHECK(condition(done, "Failed")->get_string("reason") == "PyTorchJobBackoffLimitExceeded");
  auto events = c.events_of("flaky");
  CHECK_THAT(events, Catch::Contains("ExitedWithCode"));
  CHECK_THAT(events, Catch::Contains("exited with code 137"));
  // A job failed by a limit stops its running master.
  auto pods = c.wait_for([&] { return c.owned("pods", "flaky"); }, [](const json::value& l) {
    for (const auto& p : l.find("items")->as_array())
      if (p.at_path({"status"})->get_string("phase") == "Running")
        return false;
    return true;
  });
  for (const auto& p : pods.find("items")->as_array())
    CHECK(p.at_path({"status"})->get_string("phase") != "Running");
}

TEST_CASE("a pod whose image cannot be pulled is reported on its job as Stuck with a Warning event") {
  training_cluster c;
  c.create_job("badimage", R"("kozmo.io/sim-fail":"ImagePullBackOff","kozmo.io/sim-pull-duration":"100ms")", 0, "");
  auto stuck = c.wait_job("badimage", [](const json::value& j) { return is_true(j, "Stuck"); });
  INFO(conditions_of(stuck));
  REQUIRE(is_true(stuck, "Stuck"));
  const auto* cond = condition(stuck, "Stuck");
  CHECK_THAT(cond->get_string("reason"), Catch::Contains("ImagePull") || Catch::Contains("ErrImagePull"));
  CHECK_THAT(cond->get_string("message"), Catch::Contains("badimage-master-0"));
  CHECK_FALSE(is_true(stuck, "Running"));
  CHECK_THAT(c.events_of("badimage"), Catch::Contains("Warning"));
}

TEST_CASE("deleting a running job deletes its pods and services") {
  training_cluster c;
  const std::string sim = R"("kozmo.io/sim-duration":"forever","kozmo.io/sim-pull-duration":"100ms")";
  c.create_job("endless", sim, 2, sim);
  auto running = c.wait_job("endless", [](const json::value& j) { return is_true(j, "Running"); });
  INFO(conditions_of(running));
  REQUIRE(is_true(running, "Running"));
  REQUIRE(c.names(*c.owned("pods", "endless")).size() == 3);
  REQUIRE(c.names(*c.owned("services", "endless")).size() == 3);

  auto ref = pytorchjobs;
  ref.name = "endless";
  REQUIRE(c.cli->remove(ref).has_value());
  auto empty = [](const json::value& l) { return l.find("items")->as_array().empty(); };
  auto pods = c.wait_for([&] { return c.owned("pods", "endless"); }, empty);
  CHECK(c.names(pods).empty());
  auto services = c.wait_for([&] { return c.owned("services", "endless"); }, empty);
  CHECK(c.names(services).empty());
  // No actor recreates them behind the user's back.
  std::this_thread::sleep_for(1s);
  CHECK(c.names(*c.owned("pods", "endless")).empty());
}

TEST_CASE("a malformed job fails with an InvalidSpec condition and event while another job runs to success") {
  training_cluster c;
  c.create_raw(R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"broken","namespace":"default"},
    "spec":{"pytorchReplicaSpecs":{"Worker":{"replicas":1,"template":{"spec":{"containers":[{"name":"pytorch","image":"x",
    "resources":{"limits":{"nvidia.com/gpu":-1}}}]}}}}}})");
  const std::string sim = R"("kozmo.io/sim-duration":"1s","kozmo.io/sim-pull-duration":"100ms")";
  c.create_job("healthy", sim, 1, sim);

  auto broken = c.wait_job("broken", finished);
  INFO(conditions_of(broken));
  REQUIRE(is_true(broken, "Failed"));
  CHECK_THAT(condition(broken, "Failed")->get_string("reason"), Catch::Contains("InvalidSpec"));
  CHECK_THAT(condition(broken, "Failed")->get_string("message"), Catch::Contains("nvidia.com/gpu] is -1"));
  CHECK_THAT(c.events_of("broken"), Catch::Contains("Warning InvalidSpec"));
  CHECK(c.names(*c.owned("pods", "broken")).empty());

  auto healthy = c.wait_job("healthy", finished);
  INFO(conditions_of(healthy));
  CHECK(is_true(healthy, "Succeeded"));
}

// ---- restart safety: a second supervisor takes over what the first one created ----
namespace {

engine_options without_training() {
  auto o = training_cluster::options();
  o.parts.training = false;
  return o;
}

// The embedded CRDs, created through the API as `kubectl apply -f deploy/crds/` would.
void install_crds(client::client& cli) {
  for (const auto& file : embedded_crds()) {
    auto docs = json::parse_yaml_documents(file.text);
    REQUIRE(docs.has_value());
    for (const auto& obj : *docs) {
      if (!obj.is_object())
        continue;
      auto r = cli.create({"apiextensions.k8s.io", "v1", "customresourcedefinitions", "", "", ""}, obj);
      INFO(file.name << ": " << (r ? "" : r.err().message));
      REQUIRE(r.has_value());
    }
  }
}

} // namespace

TEST_CASE("a restarted training controller takes over a running job without recreating its pods") {
  engine e(without_training());
  REQUIRE(e.start().has_value());
  auto cli = engine_internal::api(e);
  install_crds(*cli);
  watch::watch_config wc;
  wc.resource = {"", "v1", "pods", "", "", ""};
  auto pods_watch = watch::spawn_watch<k8s::pod>(engine_internal::system(e), cli, wc);
  training::supervisor_config sc;
  sc.job.cli = cli;
  auto first = training::spawn_training_supervisor(engine_internal::system(e), pods_watch, sc);

  auto job_of = [&](const std::string& name) {
    auto ref = pytorchjobs;
    ref.name = name;
    return cli->get(ref);
  };
  auto pod_uids = [&] {
    client::list_options lo;
    lo.label_selector = "training.kubeflow.org/job-name=resumed";
    std::vector<std::string> out;
    if (auto l = cli->list({"", "v1", "pods", "default", "", ""}, lo))
      for (const auto& p : l->find("items")->as_array())
        out.push_back(p.at_path({"metadata"})->get_string("uid"));
    std::sort(out.begin(), out.end());
    return out;
  };
  auto body = json::parse(R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"resumed","namespace":"default"},
    "spec":{"pytorchReplicaSpecs":{"Master":{"replicas":1,"template":{"metadata":{"annotations":{"kozmo.io/sim-duration":"forever"}},
      "spec":{"containers":[{"name":"pytorch","image":"x"}]}}},
    "Worker":{"replicas":2,"template":{"metadata":{"annotations":{"kozmo.io/sim-duration":"forever"}},
      "spec":{"containers":[{"name":"pytorch","image":"x"}]}}}}}})");
  REQUIRE(body.has_value());
  REQUIRE(cli->create(pytorchjobs, *body).has_value());
  json::value job;
  for (int i = 0; i < 300 && !is_true(job, "Running"); ++i) {
    std::this_thread::sleep_for(100ms);
    if (auto j = job_of("resumed"))
      job = *j;
  }
  INFO(conditions_of(job));
  REQUIRE(is_true(job, "Running"));
  auto before = pod_uids();
  REQUIRE(before.size() == 3);

  caf::anon_send_exit(first, caf::exit_reason::user_shutdown);
  std::this_thread::sleep_for(300ms);
  auto second = training::spawn_training_supervisor(engine_internal::system(e), pods_watch, sc);
  std::this_thread::sleep_for(2s);
  CHECK(pod_uids() == before);
  CHECK(is_true(*job_of("resumed"), "Running"));

  // The new controller is in charge: a pod deleted by hand comes back.
  REQUIRE(cli->remove({"", "v1", "pods", "default", "resumed-worker-1", ""}).has_value());
  std::vector<std::string> after;
  for (int i = 0; i < 100; ++i) {
    std::this_thread::sleep_for(100ms);
    after = pod_uids();
    if (after.size() == 3 && after != before)
      break;
  }
  CHECK(after.size() == 3);
  CHECK(after != before);

  caf::anon_send_exit(second, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(pods_watch, caf::exit_reason::user_shutdown);
}
