// One TrainJob through its life (trainjob_reconcile.hpp's rules): snapshot, pods, Running,
// Complete, suspend and resume, the deadline, failures and restarts, a missing runtime.
#include "fixtures.hpp"

using namespace trainer_test;

TEST_CASE("a new TrainJob snapshots its runtime, creates its pods and Service, and says Created") {
  world w(trainjob("  trainer: {numNodes: 2}\n"));
  w.step();
  REQUIRE(w.snapshot);
  CHECK(w.snapshot->at_path({"metadata", "name"})->as_string() == "mnist-runtime-snapshot");
  CHECK(w.snapshot->at_path({"metadata", "ownerReferences"})->as_array().front().get_string("uid") == "uid-mnist");
  CHECK(w.pods.size() == 2);
  CHECK(w.services == std::vector<std::string>{"mnist"});
  CHECK(w.condition("Created") == "True/JobsCreationSucceeded");
  REQUIRE(w.jobs("node"));
  CHECK(*w.jobs("node") == trainer::jobs_status{"node", 0, 0, 0, 1, 0});
}

TEST_CASE("Running says why the nodes wait, then that they run; Complete ends it with the peer's words") {
  world w(trainjob("  trainer: {numNodes: 2}\n"));
  w.step();
  w.step();
  CHECK(w.condition("Running") == "False/Pending");
  CHECK(w.message("Running") == "the trainer's pods are starting"); // a normal start: one write
  w.pods["mnist-node-0-0"]["status"] = yaml(
      "phase: Pending\nconditions: [{type: PodScheduled, status: 'False', reason: Unschedulable,"
      " message: '0/4 nodes are available: 4 Insufficient nvidia.com/gpu.'}]");
  w.step();
  CHECK(w.message("Running").find("pod mnist-node-0-0: ") == 0);
  CHECK(w.message("Running").find("Insufficient nvidia.com/gpu") != std::string::npos);
  w.all("Running");
  w.step();
  CHECK(w.condition("Running") == "True/Running");
  CHECK(*w.jobs("node") == trainer::jobs_status{"node", 1, 0, 0, 1, 0});
  w.all("Succeeded");
  w.step();
  CHECK(w.condition("Complete") == "True/AllJobsCompleted");
  CHECK(w.message("Complete") == "jobset completed successfully");
  CHECK(w.condition("Running") == "False/Completed");
  CHECK(*w.jobs("node") == trainer::jobs_status{"node", 0, 1, 0, 0, 0}); // the peer's e2e
  CHECK(w.status().conditions.back().type == "Complete"); // kubectl's STATE column
}

TEST_CASE("a finished TrainJob whose pods were cleaned up is never re-created") {
  world w(trainjob("  trainer: {numNodes: 2}\n"));
  w.step();
  w.all("Succeeded");
  w.step();
  REQUIRE(w.condition("Complete") == "True/AllJobsCompleted");
  w.pods.clear(); // a TTL controller or a user removed them
  w.now += 1h;
  w.step();
  w.step();
  CHECK(w.pods.empty());
  CHECK(w.last.plan.steps.empty());
}

TEST_CASE("a second pass over an unchanged world writes nothing") {
  world w(trainjob("  trainer: {numNodes: 2}\n"));
  w.step();
  w.step();
  w.step();
  CHECK(w.last.plan.steps.empty());
}

TEST_CASE("the job runs its snapshot: a runtime edited or deleted after the start changes nothing") {
  world w(trainjob("  trainer: {numNodes: 1}\n  suspend: true\n"));
  w.step();
  REQUIRE(w.snapshot);
  CHECK(w.pods.empty());
  CHECK(w.condition("Suspended") == "True/Suspended");
  w.runtime.reset(); // deleted while suspended
  w.job["spec"]["suspend"] = false;
  w.step();
  CHECK(w.condition("Suspended") == "False/Resumed");
  CHECK(w.message("Suspended") == "TrainJob is resumed");
  REQUIRE(w.pods.size() == 1);
  const auto& c = w.pods.begin()->second.at_path({"spec", "containers"})->as_array().front();
  CHECK(c.get_string("image") == "pytorch/pytorch:runtime");
}

TEST_CASE("suspending stops the running pods and counts the Jobs as suspended") {
  world w(trainjob("  trainer: {numNodes: 2}\n"));
  w.step();
  w.all("Running");
  w.step();
  w.job["spec"]["suspend"] = true;
  w.step();
  CHECK(w.pods.empty());
  CHECK(w.condition("Suspended") == "True/Suspended");
  CHECK(w.message("Suspended") == "TrainJob is suspended");
  CHECK(w.condition("Running") == "False/Suspended");
  CHECK(*w.jobs("node") == trainer::jobs_status{"node", 0, 0, 0, 0, 1});
}

TEST_CASE("activeDeadlineSeconds fails the job with DeadlineExceeded and stops its pods") {
  world w(trainjob("  activeDeadlineSeconds: 60\n"));
  w.step();
  CHECK(w.last.wake_at == t0() + 60s);
  w.all("Running");
  w.now = t0() + 61s;
  w.step();
  CHECK(w.condition("Failed") == "True/DeadlineExceeded");
  CHECK(w.message("Failed") == "TrainJob exceeded its active deadline");
  CHECK(w.pods.empty());
}

TEST_CASE("a failed node is re-created alone while its Job's backoffLimit allows, then the job fails") {
  const char* runtime = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-distributed}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {backoffLimit: 1, template: {spec: {containers: [{name: node}]}}}
)";
  world w(trainjob("  trainer: {numNodes: 2}\n"), runtime);
  w.step();
  w.all("Running");
  w.phase("mnist-node-0-1", "Failed");
  w.step();
  CHECK(w.pods.count("mnist-node-0-0")); // the other node keeps running
  CHECK_FALSE(w.pods.count("mnist-node-0-1"));
  CHECK(w.has_event("RestartingPod"));
  w.step();
  REQUIRE(w.pods.count("mnist-node-0-1")); // back, alone
  w.phase("mnist-node-0-1", "Failed");
  w.step();
  CHECK(w.condition("Failed") == "True/FailedJobs");
  CHECK(w.message("Failed") == "jobset failed due to one or more job failures");
  CHECK(*w.jobs("node") == trainer::jobs_status{"node", 0, 0, 1, 0, 0});
}

TEST_CASE("a runtime that does not exist fails the job after the grace period, with its name") {
  world w(trainjob(""), nullptr);
  w.now = t0() + 1s;
  w.step();
  CHECK(w.status().conditions.empty());
  CHECK(w.last.wake_at == t0() + 5s);
  w.now = t0() + 6s;
  w.step();
  CHECK(w.condition("Failed") == "True/TrainingRuntimeNotFound");
  CHECK(w.message("Failed").find("torch-distributed") != std::string::npos);
  CHECK(w.has_event("TrainingRuntimeNotFound"));
  CHECK(w.pods.empty());
}

TEST_CASE("a runtimeRef to another API group is not supported, in the peer's words") {
  world w(trainjob("").replace(trainjob("").find("{name: torch-distributed}"), 25,
                               "{name: x, apiGroup: example.com, kind: Other}"));
  w.step();
  CHECK(w.condition("Failed") == "True/TrainingRuntimeNotSupported");
  CHECK(w.message("Failed") == "unsupported runtime: Other.example.com");
}

TEST_CASE("a TrainJob managed by another controller is left alone") {
  world w(trainjob("  managedBy: kueue.x-k8s.io/multikueue\n"));
  w.step();
  CHECK(w.pods.empty());
  CHECK_FALSE(w.job.find("status"));
  CHECK(w.last.skipped.find("kueue") != std::string::npos);
}

TEST_CASE("the trainer waits for its initializer to complete, which is not run again") {
  world w(trainjob("  initializer: {dataset: {storageUri: 'file:///data'}}\n  trainer: {numNodes: 2}\n"), init_runtime);
  w.step();
  CHECK(w.pods.size() == 1);
  CHECK(w.pods.count("mnist-dataset-initializer-0-0"));
  w.step();
  CHECK(w.condition("Running") == "False/Pending");
  CHECK(w.message("Running") == "node waits for dataset-initializer to be complete");
  w.phase("mnist-dataset-initializer-0-0", "Succeeded");
  w.step();
  CHECK(w.pods.size() == 3);
  w.pods.erase("mnist-dataset-initializer-0-0"); // cleaned up while the nodes run
  w.step();
  CHECK(w.pods.size() == 2);
  CHECK(w.jobs("dataset-initializer")->succeeded == 1);
}

TEST_CASE("a pod the API server refuses as invalid fails the job with the server's words") {
  world w(trainjob(""));
  w.refused = observed::create_refusal{"pod mnist-node-0-0", 422, "spec.containers[0].image: Required value"};
  w.pods.clear();
  w.step();
  CHECK(w.condition("Created") == "False/JobsCreationFailed");
  CHECK(w.condition("Failed") == "True/JobsCreationFailed");
  CHECK(w.message("Failed").find("Required value") != std::string::npos);
  CHECK(w.has_event("FailedCreatePod"));
}

TEST_CASE("kubectl's STATE, the last condition, is always one that holds") {
  world w(trainjob("  trainer: {numNodes: 2}\n"));
  w.step();
  w.step();
  REQUIRE(w.condition("Running") == "False/Pending");
  CHECK(w.status().conditions.back().type == "Created");
  w.all("Running");
  w.step();
  CHECK(w.status().conditions.back().type == "Running");
  w.job["spec"]["suspend"] = true;
  w.step();
  CHECK(w.status().conditions.back().type == "Suspended");
  w.job["spec"]["suspend"] = false;
  w.step();
  CHECK(w.status().conditions.back().type == "Created"); // resumed, pods not running yet
}
