// Demystify: the peer's DemystifyPending / DemystifyFailure / DemystifySuccess /
// primary-container cases, with Kozmo's grace periods.
#include "actors/demystify/demystify.hpp"
#include "fixture.hpp"

using namespace tasks_test;
using namespace kozmo::demystify;

namespace {

k8s::pod pending_pod() {
  k8s::pod p;
  p.metadata.name = "p";
  p.metadata.creation_timestamp = t0();
  p.status.phase = "Pending";
  return p;
}

// A pod scheduled, not ready, its container waiting for `reason` since t0.
k8s::pod waiting_pod(const std::string& reason, const std::string& message = "") {
  auto p = pending_pod();
  set_waiting(p, "primary", reason, t0(), message);
  return p;
}

grace_periods grace() {
  grace_periods g;
  g.create_container_error = 3min;
  g.create_container_config_error = 2min;
  g.image_pull_backoff = 3min;
  return g;
}

} // namespace

TEST_CASE("DemystifyPending: a pod without conditions is queued, scheduling") {
  auto v = pending(pending_pod(), grace(), t0());
  CHECK(v.what == outcome::queued);
  CHECK(v.code == "Scheduling");
}

TEST_CASE("DemystifyPending: PodScheduled=False is queued with the scheduler's reason and message") {
  auto p = pending_pod();
  p.status.conditions = {cond("PodScheduled", "False", t0(), "Unschedulable", "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.")};
  auto v = pending(p, grace(), t0() + 1h);
  CHECK(v.what == outcome::queued);
  CHECK(v.code == "Unschedulable");
  CHECK(v.message == "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.");
}

TEST_CASE("DemystifyPending: ContainerCreating, PodInitializing and ErrImagePull are initializing") {
  for (const char* reason : {"ContainerCreating", "PodInitializing", "ErrImagePull"}) {
    INFO(reason);
    auto v = pending(waiting_pod(reason), grace(), t0() + 1h);
    CHECK(v.what == outcome::initializing);
    CHECK(v.code == reason);
  }
}

TEST_CASE("DemystifyPending: ImagePullBackOff is initializing within its grace period, a retryable user failure after") {
  auto p = waiting_pod("ImagePullBackOff", "Back-off pulling image \"nope:1\"");
  auto within = pending(p, grace(), t0() + 2min);
  CHECK(within.what == outcome::initializing);
  CHECK(within.code == "ImagePullBackOff");
  REQUIRE(within.deadline.has_value());
  CHECK(*within.deadline == t0() + 3min);
  auto after = pending(p, grace(), t0() + 3min);
  CHECK(after.what == outcome::retryable_failure);
  CHECK(after.whose == fault::user);
  CHECK(after.cleanup);
  CHECK(after.code == "ImagePullBackOff");
  CHECK(after.message.rfind("Grace period [3m0s] exceeded|", 0) == 0);
  CHECK(after.message.find("Back-off pulling image \"nope:1\"") != std::string::npos);
}

TEST_CASE("DemystifyPending: InvalidImageName is a permanent failure at once") {
  auto v = pending(waiting_pod("InvalidImageName", "couldn't parse image reference"), grace(), t0());
  CHECK(v.what == outcome::permanent_failure);
  CHECK(v.code == "InvalidImageName");
  CHECK(v.cleanup);
  CHECK(v.message.find("[primary] InvalidImageName: couldn't parse image reference") != std::string::npos);
}

TEST_CASE("DemystifyPending: CreateContainerError waits its grace period, then is a retryable system failure") {
  auto p = waiting_pod("CreateContainerError", "failed to reserve container name");
  CHECK(pending(p, grace(), t0() + 1min).what == outcome::initializing);
  auto v = pending(p, grace(), t0() + 3min);
  CHECK(v.what == outcome::retryable_failure);
  CHECK(v.whose == fault::system);
  CHECK(v.message.rfind("Grace period [3m0s] exceeded|", 0) == 0);
}

TEST_CASE("DemystifyPending: CreateContainerConfigError has its own grace period, then fails for good") {
  auto p = waiting_pod("CreateContainerConfigError", "failed to sync secret cache: timed out waiting for the condition");
  CHECK(pending(p, grace(), t0() + 1min).what == outcome::initializing); // a transient secret sync
  auto v = pending(p, grace(), t0() + 2min);
  CHECK(v.what == outcome::permanent_failure);
  CHECK(v.whose == fault::user);
  CHECK(v.message.find("Grace period [2m0s] exceeded|") != std::string::npos);
}

TEST_CASE("DemystifyPending: any other waiting reason is a retryable system failure at once") {
  auto v = pending(waiting_pod("RunContainerError"), grace(), t0());
  CHECK(v.what == outcome::retryable_failure);
  CHECK(v.whose == fault::system);
  CHECK(v.code == "RunContainerError");
}

TEST_CASE("DemystifyPending: init containers are looked at first") {
  auto p = pending_pod();
  p.status.conditions = {cond("PodScheduled", "True", t0()), cond("Ready", "False", t0(), "ContainersNotReady")};
  p.status.init_container_statuses = {waiting("fetch", "InvalidImageName")};
  p.status.container_statuses = {waiting("primary", "PodInitializing")};
  auto v = pending(p, grace(), t0());
  CHECK(v.what == outcome::permanent_failure);
  CHECK(v.message.find("[fetch]") != std::string::npos);
}

TEST_CASE("DemystifyPending: a ready container is not what holds the pod up") {
  auto p = pending_pod();
  p.status.conditions = {cond("PodScheduled", "True", t0()), cond("Ready", "False", t0(), "ContainersNotReady")};
  auto ready = waiting("sidecar", "ImagePullBackOff");
  ready.ready = true;
  p.status.container_statuses = {ready, waiting("primary", "ContainerCreating")};
  CHECK(pending(p, grace(), t0() + 1h).what == outcome::initializing);
}

TEST_CASE("the pending timeout fails a pod pending too long, from its creation, with clean-up") {
  auto g = grace();
  g.pending_timeout = 5min;
  auto p = pending_pod();
  auto before = pending(p, g, t0() + 4min);
  CHECK(before.what == outcome::queued);
  REQUIRE(before.deadline.has_value());
  CHECK(*before.deadline == t0() + 5min);
  auto v = pending(p, g, t0() + 5min);
  CHECK(v.what == outcome::retryable_failure);
  CHECK(v.code == "PodPendingTimeout");
  CHECK(v.cleanup);
  CHECK(v.message.find("Scheduling") != std::string::npos);
}

TEST_CASE("DemystifyFailure: the pod's reason and message, each terminated container appended") {
  k8s::pod p;
  p.status.phase = "Failed";
  p.status.reason = "Evicted";
  p.status.message = "The node was low on resource: memory.";
  p.status.container_statuses = {terminated("primary", 2, "Error", "boom")};
  auto v = failed(p, "primary");
  CHECK(v.what == outcome::retryable_failure);
  CHECK(v.whose == fault::user);
  CHECK(v.code == "Evicted");
  CHECK(v.message == "The node was low on resource: memory.\r\n[primary] terminated with exit code (2). Reason [Error]. "
                     "Message: \nboom.");
}

TEST_CASE("DemystifyFailure: no reason and no container that says why is the platform's (Interrupted)") {
  k8s::pod p;
  p.status.phase = "Failed";
  auto v = failed(p, "primary");
  CHECK(v.code == "Interrupted");
  CHECK(v.whose == fault::system);
  CHECK(v.message == "Pod failed. No message received from kubernetes.");
  // The peer's failNoCondition: the primary still running, an init container done.
  p.status.init_container_statuses = {terminated("init", 0, "Completed")};
  p.status.container_statuses = {running_container("primary")};
  auto w = failed(p, "primary");
  CHECK(w.code == "Interrupted");
  CHECK(w.message == "Pod failed. No message received from kubernetes.\r\n[init] terminated with ExitCode 0.");
}

TEST_CASE("DemystifyFailure: a program that exits non-zero is the user's failure, with its reason") {
  k8s::pod p;
  p.status.phase = "Failed";
  p.status.container_statuses = {terminated("primary", 1, "Error", "stack trace")};
  auto v = failed(p, "primary");
  CHECK(v.code == "Error");
  CHECK(v.whose == fault::user);
  CHECK(v.message.find("[primary] terminated with exit code (1). Reason [Error]. Message: \nstack trace.") !=
        std::string::npos);
  p.status.reason = "hello";
  CHECK(failed(p, "primary").code == "hello");
}

TEST_CASE("DemystifyFailure: node shutdowns are the platform's failures, shown as Interrupted") {
  for (const char* reason : {"Shutdown", "Terminated", "NodeShutdown", "NodeAffinity"}) {
    INFO(reason);
    k8s::pod p;
    p.status.phase = "Failed";
    p.status.reason = reason;
    p.status.message = "Pod Node is in progress of shutting down, not admitting any new pods";
    p.status.container_statuses = {terminated("primary", 137, "some reason")};
    auto v = failed(p, "primary");
    CHECK(v.whose == fault::system);
    CHECK(v.code == "Interrupted");
    CHECK(v.message.find("some reason") != std::string::npos);
  }
}

TEST_CASE("DemystifyFailure: OOMKilled is the user's, whatever the exit code") {
  k8s::pod p;
  p.status.phase = "Failed";
  p.status.container_statuses = {terminated("primary", 137, "OOMKilled")};
  auto v = failed(p, "primary");
  CHECK(v.code == "OOMKilled");
  CHECK(v.whose == fault::user);
}

TEST_CASE("DemystifyFailure: SIGKILL of the primary container is an interruption, of a sidecar the user's") {
  for (int code : {137, 247}) {
    k8s::pod p;
    p.status.phase = "Failed";
    p.status.reason = "Error";
    p.status.container_statuses = {terminated("primary", code, "Error")};
    auto v = failed(p, "primary");
    CHECK(v.code == "Interrupted");
    CHECK(v.whose == fault::system);
    p.status.container_statuses = {terminated("sidecar", code, "Error")};
    auto s = failed(p, "primary");
    CHECK(s.code == "Interrupted");
    CHECK(s.whose == fault::user);
  }
}

TEST_CASE("DemystifyFailure: the last termination state counts before the current one") {
  k8s::pod p;
  p.status.phase = "Failed";
  p.status.reason = "Error";
  auto s = terminated("primary", 1, "Error");
  s.last_state.terminated = k8s::container_state_terminated{};
  s.last_state.terminated->exit_code = 137;
  s.last_state.terminated->reason = "OOMKilled";
  p.status.container_statuses = {s};
  CHECK(failed(p, "primary").code == "OOMKilled");
}

TEST_CASE("DemystifySuccess: success, unless a container was OOM-killed") {
  k8s::pod p;
  p.status.phase = "Succeeded";
  p.status.container_statuses = {terminated("primary", 0, "Completed")};
  CHECK(succeeded(p, "primary").what == outcome::succeeded);
  p.status.container_statuses = {terminated("primary", 0, "OOMKilled")};
  auto v = succeeded(p, "primary");
  CHECK(v.what == outcome::retryable_failure);
  CHECK(v.code == "OOMKilled");
  CHECK(v.message.rfind("Pod reported success despite being OOMKilled", 0) == 0);
}

TEST_CASE("primary container: running while it waits or runs, then its exit decides") {
  k8s::pod p;
  p.status.phase = "Running";
  p.status.container_statuses = {waiting("main", "ContainerCreating"), running_container("side")};
  CHECK(primary_container(p, "main").what == outcome::running);
  p.status.container_statuses = {running_container("main")};
  CHECK(primary_container(p, "main").what == outcome::running);
  p.status.container_statuses = {terminated("main", 0, "Completed"), running_container("side")};
  CHECK(primary_container(p, "main").what == outcome::succeeded);
  p.status.container_statuses = {terminated("main", 1, "Error")};
  auto e = primary_container(p, "main");
  CHECK(e.what == outcome::retryable_failure);
  CHECK(e.whose == fault::user);
  CHECK(e.code == "Error");
  CHECK(e.message == "\r\n[main] terminated with exit code (1). Reason [Error]. Message: \n.");
  p.status.container_statuses = {terminated("main", 137, "OOMKilled")};
  CHECK(primary_container(p, "main").code == "OOMKilled");
  CHECK(primary_container(p, "main").whose == fault::user);
  p.status.container_statuses = {terminated("main", 137, "Error")};
  CHECK(primary_container(p, "main").code == "Interrupted");
  CHECK(primary_container(p, "main").whose == fault::system);
  p.status.container_statuses = {running_container("other")};
  auto missing = primary_container(p, "main");
  CHECK(missing.what == outcome::permanent_failure);
  CHECK(missing.code == "PrimaryContainerNotFound");
  CHECK(missing.message == "Primary container [main] not found in pod's container statuses");
}

TEST_CASE("of_pod reads a pod by its phase") {
  k8s::pod p;
  p.status.phase = "Running";
  p.status.container_statuses = {terminated("main", 0, "Completed"), running_container("side")};
  CHECK(of_pod(p, "main", false, grace(), t0()).what == outcome::running);
  CHECK(of_pod(p, "main", true, grace(), t0()).what == outcome::succeeded);
  p.status.phase = "Succeeded";
  CHECK(of_pod(p, "main", false, grace(), t0()).what == outcome::succeeded);
}
