// Time: activeDeadlineSeconds, TTL after finish, and pods that cannot start.
#include "fixtures.hpp"

using namespace training_test;

namespace {

json::value pytorch(const std::string& run_policy) {
  return job_doc("PyTorchJob", "pytorchReplicaSpecs",
                 "{\"Master\":" + replica("pytorch", 1) + ",\"Worker\":" + replica("pytorch", 1) + "}",
                 "\"runPolicy\":" + run_policy);
}

} // namespace

TEST_CASE("a job active longer than activeDeadlineSeconds fails and its pods stop") {
  cluster c(pytorch(R"({"activeDeadlineSeconds":600})"));
  c.step();
  CHECK(c.last.wake_at == t0() + seconds(600));
  c.run_all();
  c.now += seconds(599);
  c.step();
  CHECK_FALSE(c.condition("Failed"));
  c.now += seconds(1);
  c.step();
  CHECK(c.condition("Failed"));
  CHECK(c.reason_of("Failed") == "PyTorchJobDeadlineExceeded");
  CHECK(c.pods.empty());
  CHECK(c.has_event("PyTorchJobDeadlineExceeded"));

  SECTION("a pod that shows up running after the failure is stopped too") {
    k8s::pod late;
    late.metadata.name = "job-worker-0";
    late.metadata.namespace_ = "ns";
    late.metadata.uid = "late-uid";
    late.metadata.labels = {{"training.kubeflow.org/job-name", "job"},
                            {"training.kubeflow.org/operator-name", "pytorchjob-controller"},
                            {"training.kubeflow.org/replica-type", "worker"},
                            {"training.kubeflow.org/replica-index", "0"}};
    late.metadata.owner_references = {{"kubeflow.org/v1", "PyTorchJob", "job", "job-uid", true, true}};
    late.status.phase = "Running";
    c.pods.push_back(late);
    c.step();
    CHECK(c.pods.empty());
  }
}

TEST_CASE("a succeeded job is deleted when its TTL runs out, on time") {
  cluster c(pytorch(R"({"ttlSecondsAfterFinished":300})"));
  c.step();
  c.run_all();
  c.now += seconds(100);
  c.exit_with("job-master-0", "pytorch", 0);
  c.step();
  REQUIRE(c.condition("Succeeded"));
  CHECK(c.status().completion_time == t0() + seconds(100));
  CHECK(c.last.wake_at == t0() + seconds(400));
  c.now += seconds(299);
  c.step();
  CHECK_FALSE(c.job_deleted);
  CHECK(c.last.wake_at == t0() + seconds(400));
  c.now += seconds(1);
  c.step();
  CHECK(c.job_deleted);
  CHECK(std::get<delete_job>(c.last.actions.back()).uid == "job-uid");
}

TEST_CASE("a failed job is deleted when its TTL runs out") {
  cluster c(job_doc("PyTorchJob", "pytorchReplicaSpecs", "{\"Worker\":" + replica("pytorch", 1, "Never") + "}",
                    R"("runPolicy":{"ttlSecondsAfterFinished":0})"));
  c.step();
  c.exit_with("job-worker-0", "pytorch", 3);
  c.step();
  CHECK(c.condition("Failed"));
  CHECK(c.job_deleted);
}

TEST_CASE("a pod stuck on its image is surfaced at once and fails the job after the grace period") {
  cluster c(pytorch("{}"));
  c.opt.image_error_grace = seconds(300);
  c.step();
  c.set_phase("job-master-0", "Running");
  c.wait_on("job-worker-0", "pytorch", "ImagePullBackOff");
  c.now += seconds(20);
  c.step();
  CHECK(c.condition("Stuck"));
  CHECK(c.reason_of("Stuck") == "PyTorchJobImagePullBackOff");
  CHECK(c.has_event("ImagePullBackOff"));
  CHECK_THAT(c.event_message("ImagePullBackOff"), Catch::Contains("job-worker-0: container pytorch cannot pull its image"));
  CHECK_THAT(c.event_message("ImagePullBackOff"), Catch::Contains("check the image name"));
  CHECK_FALSE(c.condition("Running"));
  CHECK(c.last.wake_at == t0() + seconds(320));

  c.now += seconds(100);
  c.step();
  CHECK_FALSE(c.has_event("ImagePullBackOff")); // said once, not on every pass
  CHECK_FALSE(c.condition("Failed"));

  c.now = t0() + seconds(320);
  c.step();
  CHECK(c.condition("Failed"));
  CHECK(c.reason_of("Failed") == "PyTorchJobImagePullBackOff");
  CHECK(c.pods.empty());
}

TEST_CASE("a stuck pod that recovers clears the condition and the job runs") {
  cluster c(pytorch("{}"));
  c.step();
  c.wait_on("job-worker-0", "pytorch", "ErrImagePull");
  c.step();
  REQUIRE(c.condition("Stuck"));
  c.run_all();
  c.pod("job-worker-0").status.container_statuses.clear();
  c.step();
  CHECK_FALSE(c.condition("Stuck"));
  CHECK(find_condition(c.status(), "Stuck") == nullptr);
  CHECK(c.has_event("PodsStarted"));
  CHECK(c.status().conditions.back().type == "Running"); // what kubectl shows as State
  CHECK(c.condition("Running"));
}

TEST_CASE("an unschedulable gang waits for scheduleTimeoutSeconds before the job fails") {
  cluster c(pytorch(R"({"schedulingPolicy":{"scheduleTimeoutSeconds":60}})"));
  c.step();
  for (auto& p : c.pods) {
    k8s::condition cond;
    cond.type = "PodScheduled";
    cond.status = "False";
    cond.reason = "Unschedulable";
    cond.message = "gang ns/job does not fit in virtual cluster default";
    p.status.conditions = {cond};
  }
  c.step();
  CHECK(c.reason_of("Stuck") == "PyTorchJobUnschedulable");
  CHECK_THAT(c.event_message("Unschedulable"), Catch::Contains("does not fit in virtual cluster default"));
  CHECK(c.last.wake_at == t0() + seconds(60));
  c.now += seconds(60);
  c.step();
  CHECK(c.reason_of("Failed") == "PyTorchJobUnschedulable");
}

TEST_CASE("with no unschedulable grace a gang may wait for capacity forever") {
  cluster c(pytorch("{}"));
  c.opt.unschedulable_grace.reset();
  c.step();
  k8s::condition cond;
  cond.type = "PodScheduled";
  cond.status = "False";
  c.pod("job-worker-0").status.conditions = {cond};
  c.step();
  CHECK(c.condition("Stuck"));
  c.now += seconds(86400);
  c.step();
  CHECK_FALSE(c.condition("Failed"));
  CHECK_FALSE(c.last.wake_at.has_value());
}
