// The machinery's rounds over a fake cluster: what a user of TaskExecutions notices (phases,
// reasons, attempts, pods, tokens, Events, the finalizer).
#include "fixture.hpp"

using namespace tasks_test;

namespace {

bool has_event(const fake_cluster& c, const std::string& reason, const std::string& text = "") {
  for (const auto& e : c.events)
    if (e.reason == reason && e.message.find(text) != std::string::npos)
      return true;
  return false;
}

} // namespace

TEST_CASE("a container task creates one pod, follows it through its phases and succeeds") {
  fake_cluster c(make_task("hello", container_spec()));
  c.round();
  CHECK(c.has_finalizer());
  CHECK(c.phase() == "Queued");
  REQUIRE(c.pods.size() == 1);
  auto& pod = c.pod_of_attempt(0);
  CHECK(pod.spec.restart_policy == "Never");
  CHECK(pod.metadata.labels.at(keys::task_name) == "hello");
  CHECK(pod.metadata.labels.at(keys::task_attempt) == "0");
  REQUIRE(pod.metadata.controller_ref() != nullptr);
  CHECK(pod.metadata.controller_ref()->kind == "TaskExecution");

  set_waiting(pod, "primary", "ContainerCreating", c.now);
  c.round();
  CHECK(c.phase() == "Initializing");
  set_running(pod);
  c.round();
  CHECK(c.phase() == "Running");
  set_finished(pod, 0);
  c.round();
  CHECK(c.phase() == "Succeeded");
  CHECK(c.status().completion_time.has_value());
  CHECK_FALSE(c.has_finalizer());
  CHECK(c.pods.count("hello-0") == 1); // the last attempt's pod stays for logs
  CHECK(has_event(c, "Queued"));
  CHECK(has_event(c, "Running"));
  CHECK(has_event(c, "Succeeded"));
  // Nothing new: a round decides nothing.
  auto r = c.round();
  CHECK_FALSE(r.status.has_value());
  CHECK(r.creates.empty());
  CHECK(r.deletes.empty());
}

TEST_CASE("a pod OOM-killed on every attempt is retried spec.retries times and ends Failed with OOMKilled") {
  fake_cluster c(make_task("oom", container_spec(R"("retries": 2)")));
  for (int attempt = 0; attempt <= 2; ++attempt) {
    c.round();
    INFO("attempt " << attempt);
    CHECK(c.status().attempt == attempt);
    auto& pod = c.pod_of_attempt(attempt);
    set_finished(pod, 137, "OOMKilled");
    c.round();
  }
  CHECK(c.phase() == "Failed");
  CHECK(c.status().reason == "OOMKilled");
  CHECK(c.status().attempt == 2);
  CHECK(c.status().system_failures == 0);
  CHECK(c.status().message.find("all 2 retries are used") != std::string::npos);
  CHECK(c.created.size() == 3);
  // The earlier attempts' pods are deleted when the task ends; the last one stays.
  CHECK(c.pods.size() == 1);
  CHECK(c.pods.count("oom-2") == 1);
  CHECK(has_event(c, "AttemptFailed", "attempt 0 failed: OOMKilled"));
  CHECK(has_event(c, "Failed"));
  auto st = c.status();
  REQUIRE(st.attempts.size() == 3);
  CHECK(st.attempts[0].phase == "Failed");
  CHECK(st.attempts[0].reason == "OOMKilled");
}

TEST_CASE("an invalid image name fails the task at once, without a retry") {
  fake_cluster c(make_task("bad-image", container_spec(R"("retries": 3)")));
  c.round();
  set_waiting(c.pod_of_attempt(0), "primary", "InvalidImageName", c.now, "couldn't parse image reference");
  c.round();
  CHECK(c.phase() == "Failed");
  CHECK(c.status().reason == "InvalidImageName");
  CHECK(c.created.size() == 1);
  CHECK(c.pods.empty()); // with clean-up: the stuck pod is deleted
}

TEST_CASE("ImagePullBackOff waits for its grace period, then fails with that reason") {
  fake_cluster c(make_task("pull", container_spec()));
  c.config.image_pull_backoff_grace_period = 30s;
  c.round();
  set_waiting(c.pod_of_attempt(0), "primary", "ImagePullBackOff", c.now, "Back-off pulling image");
  c.round();
  CHECK(c.phase() == "Initializing");
  CHECK(c.status().reason == "ImagePullBackOff");
  REQUIRE(c.wake_at.has_value());
  CHECK(*c.wake_at == t0() + 30s);
  c.advance(29s);
  c.round();
  CHECK(c.phase() == "Initializing");
  c.advance(1s);
  c.round();
  CHECK(c.phase() == "Failed");
  CHECK(c.status().reason == "ImagePullBackOff");
  CHECK(c.status().message.find("Grace period [30s] exceeded") != std::string::npos);
}

TEST_CASE("a retried ImagePullBackOff uses a retry, and the next attempt's pod is asked for in the same round") {
  fake_cluster c(make_task("pull2", container_spec(R"("retries": 1)")));
  c.config.image_pull_backoff_grace_period = 10s;
  c.round();
  set_waiting(c.pod_of_attempt(0), "primary", "ImagePullBackOff", c.now);
  c.advance(10s);
  auto r = c.round();
  CHECK(c.phase() == "Queued");
  CHECK(c.status().attempt == 1);
  // One round: the failed pod deleted (clean-up), the next attempt's created, the status saying
  // attempt 1 written first (a plan writes the status before it creates), no other event needed.
  REQUIRE(r.status.has_value());
  CHECK(r.status->attempt == 1);
  REQUIRE(r.creates.size() == 1);
  CHECK(r.creates[0].object.at_path({"metadata"})->get_string("name") == "pull2-1");
  CHECK(c.pods.count("pull2-1") == 1);
  CHECK(c.pods.count("pull2-0") == 0);
}

TEST_CASE("system failures are counted apart and do not use up retries") {
  fake_cluster c(make_task("sys", container_spec()));
  c.config.max_system_failures = 2;
  c.round();
  // The node shut down under the pod: the platform's failure.
  auto& p0 = c.pod_of_attempt(0);
  p0.status.phase = "Failed";
  p0.status.reason = "NodeShutdown";
  c.round();
  CHECK(c.phase() == "Queued");
  CHECK(c.status().system_failures == 1);
  CHECK(c.status().attempt == 1);
  c.round();
  // The pod vanished (a drain): ResourceDeletedExternally, a system failure too.
  c.pods.erase("sys-1");
  c.round();
  CHECK(c.status().system_failures == 2);
  c.round();
  c.pods.erase("sys-2");
  c.round();
  CHECK(c.phase() == "Failed");
  CHECK(c.status().reason == "ResourceDeletedExternally");
  CHECK(c.status().message.find("max-system-failures") != std::string::npos);
}

TEST_CASE("CreateContainerError is the platform's failure and is retried after its grace period") {
  fake_cluster c(make_task("cce", container_spec()));
  c.config.create_container_error_grace_period = 1min;
  c.round();
  set_waiting(c.pod_of_attempt(0), "primary", "CreateContainerError", c.now);
  c.round();
  CHECK(c.phase() == "Initializing");
  c.advance(1min);
  c.round();
  CHECK(c.status().system_failures == 1);
  CHECK(c.status().attempt == 1);
  CHECK(c.phase() == "Queued");
}

TEST_CASE("spec.timeout fails an attempt that runs too long and deletes its pod") {
  fake_cluster c(make_task("slow", container_spec(R"("timeout": "10m")")));
  c.round();
  set_running(c.pod_of_attempt(0));
  c.round();
  REQUIRE(c.wake_at.has_value());
  CHECK(*c.wake_at == t0() + 10min);
  c.advance(10min);
  c.round();
  CHECK(c.phase() == "Failed");
  CHECK(c.status().reason == "Timeout");
  CHECK(c.pods.empty());
}

TEST_CASE("an invalid spec fails at once, naming the field, and creates nothing") {
  fake_cluster c(make_task("broken", R"({"type":"container","container":{"command":["true"]}})"));
  c.round();
  CHECK(c.phase() == "Failed");
  CHECK(c.status().reason == "InvalidSpec");
  CHECK(c.status().message.find("spec.container.image: Required value") != std::string::npos);
  CHECK(c.created.empty());
  CHECK_FALSE(c.has_finalizer());
}

TEST_CASE("an unknown task type names the supported ones") {
  fake_cluster c(make_task("weird", R"({"type":"spark"})"));
  c.round();
  CHECK(c.status().message.find("spec.type: Unsupported value: \"spark\": supported values: \"container\", \"pod\"") !=
        std::string::npos);
}

TEST_CASE("a task on a full pool waits in WaitingForResources until a token is released") {
  fake_cluster a(make_task("a", container_spec(R"("resourcePool": "gpus")")));
  fake_cluster b(make_task("b", container_spec(R"("resourcePool": "gpus")")));
  b.pools = a.pools; // one resource manager
  a.pools->set_pool("gpus", {1, std::nullopt, std::nullopt});
  a.round();
  CHECK(a.status().pool_held);
  b.round();
  CHECK(b.phase() == "WaitingForResources");
  CHECK(b.status().reason == "ResourceExhausted");
  CHECK(b.status().message.find("has all 1 tokens in use") != std::string::npos);
  CHECK(b.pods.empty());
  set_finished(a.pod_of_attempt(0), 0);
  a.round();
  CHECK(a.phase() == "Succeeded");
  // The manager granted b's waiting request when a released its token, and tells b.
  CHECK(a.pools->holds("gpus", "uid-b"));
  b.grant.what = pool_grant::state::granted;
  b.round();
  CHECK(b.status().pool_held);
  CHECK(b.phase() == "Queued");
  CHECK(b.pods.size() == 1);
}

TEST_CASE("the token is held in the status before the pod is asked for, and given back at the end") {
  fake_cluster c(make_task("pooled", container_spec(R"("resourcePool": "p")")));
  c.pools->set_pool("p", {2, std::nullopt, std::nullopt});
  auto r = c.round();
  REQUIRE(r.status.has_value());
  CHECK(r.status->pool_held);
  CHECK(r.creates.size() == 1);
  CHECK(c.pools->usage("p").in_use == 1);
  set_finished(c.pod_of_attempt(0), 0);
  r = c.round();
  CHECK(r.pool == pool_action::release);
  CHECK_FALSE(c.status().pool_held);
  CHECK(c.pools->usage("p").in_use == 0);
}

TEST_CASE("a task naming a pool that does not exist waits and says so") {
  fake_cluster c(make_task("lost", container_spec(R"("resourcePool": "nope")")));
  c.round();
  CHECK(c.phase() == "WaitingForResources");
  CHECK(c.status().reason == "ResourcePoolNotFound");
  CHECK(c.status().message.find("ResourcePool \"nope\" does not exist") != std::string::npos);
  CHECK(c.pods.empty());
}

TEST_CASE("deleting a running task deletes its pod, gives its token back and removes the finalizer") {
  fake_cluster c(make_task("gone", container_spec(R"("resourcePool": "p")")));
  c.pools->set_pool("p", {1, std::nullopt, std::nullopt});
  c.round();
  set_running(c.pod_of_attempt(0));
  c.round();
  REQUIRE(c.has_finalizer());
  c.deleting();
  auto r = c.round();
  CHECK(r.deletes.size() == 1);
  CHECK(c.pods.empty());
  CHECK(c.phase() == "Aborted");
  CHECK(c.pools->usage("p").in_use == 0);
  CHECK_FALSE(c.has_finalizer());
}

TEST_CASE("a pod task succeeds when its primary container exits 0, and its still-running sidecar is stopped") {
  fake_cluster c(make_task("podtask", R"({"type":"pod","pod":{"primaryContainerName":"main","spec":{"containers":[
      {"name":"main","image":"busybox","command":["true"]},{"name":"sidecar","image":"envoy"}]}}})"));
  c.round();
  auto& pod = c.pod_of_attempt(0);
  CHECK(pod.spec.containers.size() == 2);
  pod.status.phase = "Running";
  pod.status.container_statuses = {running_container("main"), running_container("sidecar")};
  c.round();
  CHECK(c.phase() == "Running");
  pod.status.container_statuses = {terminated("main", 0, "Completed"), running_container("sidecar")};
  auto r = c.round();
  CHECK(c.phase() == "Succeeded");
  REQUIRE(r.deletes.size() == 1);
  CHECK(r.deletes[0].name == "podtask-0");
}

TEST_CASE("a pod task whose primary container is missing fails with PrimaryContainerNotFound") {
  fake_cluster c(make_task("noprim", R"({"type":"pod","pod":{"primaryContainerName":"main","spec":{"containers":[
      {"name":"main","image":"busybox"}]}}})"));
  c.round();
  auto& pod = c.pod_of_attempt(0);
  pod.status.phase = "Running";
  pod.status.container_statuses = {running_container("other")};
  c.round();
  CHECK(c.phase() == "Failed");
  CHECK(c.status().reason == "PrimaryContainerNotFound");
}

TEST_CASE("a named pod template is asked for, merged under the pod, and a missing one fails clearly") {
  SECTION("present") {
    fake_cluster c(make_task("templ", container_spec(R"("podTemplateName": "base")")));
    c.templates["base"] = parse_json(R"({"template":{"metadata":{"labels":{"team":"vision"}},
      "spec":{"priorityClassName":"high","containers":[{"name":"default","image":"x","env":[{"name":"FROM","value":"template"}]}]}}})");
    c.round();
    auto& pod = c.pod_of_attempt(0);
    CHECK(pod.metadata.labels.at("team") == "vision");
    CHECK(pod.spec.priority_class_name == "high");
    REQUIRE(pod.spec.containers.size() == 1);
    CHECK(pod.spec.containers[0].image == "busybox:1.36");
    bool from_template = false;
    for (const auto& e : pod.spec.containers[0].env)
      from_template = from_template || (e.name == "FROM" && e.value == "template");
    CHECK(from_template);
  }
  SECTION("missing") {
    fake_cluster c(make_task("templ2", container_spec(R"("podTemplateName": "nope")")));
    c.round();
    CHECK(c.phase() == "Failed");
    CHECK(c.status().reason == "PodTemplateNotFound");
    CHECK(c.pods.empty());
  }
  SECTION("the platform's default template is skipped when the namespace has none") {
    fake_cluster c(make_task("templ3", container_spec()));
    c.config.default_pod_template_name = "platform";
    c.round();
    CHECK(c.phase() == "Queued");
    CHECK(c.pods.size() == 1);
  }
}

TEST_CASE("phase versions rise when the reason changes within a phase, and only new ones are Events") {
  fake_cluster c(make_task("versions", container_spec()));
  c.config.image_pull_backoff_grace_period = 1h;
  c.round();
  auto& pod = c.pod_of_attempt(0);
  set_waiting(pod, "primary", "ContainerCreating", c.now);
  c.round();
  CHECK(c.phase() == "Initializing");
  CHECK(c.status().phase_version == 0);
  auto events = c.events.size();
  c.round();
  CHECK(c.events.size() == events); // same (phase, version): nothing recorded
  set_waiting(pod, "primary", "ImagePullBackOff", c.now);
  c.round();
  CHECK(c.phase() == "Initializing");
  CHECK(c.status().phase_version == 1);
  CHECK(c.events.size() == events + 1);
  CHECK(c.status().history.back().version == 1);
}

TEST_CASE("a task that has ended ignores later pod changes and keeps its outcome") {
  fake_cluster c(make_task("done", container_spec()));
  c.round();
  set_finished(c.pod_of_attempt(0), 1);
  c.round();
  CHECK(c.phase() == "Failed");
  CHECK(c.status().reason == "Error");
  auto r = c.round();
  CHECK_FALSE(r.status.has_value());
}
