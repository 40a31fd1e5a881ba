// Failed pods: restart policies, exit codes, backoffLimit and the success policies.
#include "fixtures.hpp"

using namespace training_test;

namespace {

json::value workers(const std::string& kind, const std::string& key, const std::string& container, int n,
                    const std::string& restart, const std::string& extra = "") {
  return job_doc(kind, key, "{\"Worker\":" + replica(container, n, restart) + "}", extra);
}

} // namespace

TEST_CASE("exit code 130 under ExitCode deletes the pod, which is recreated, and the job is Restarting") {
  cluster c(workers("TFJob", "tfReplicaSpecs", "tensorflow", 2, "ExitCode"));
  c.step();
  c.run_all();
  c.step();
  c.exit_with("job-worker-1", "tensorflow", 130);
  c.step();
  CHECK(c.find_pod("job-worker-1") == nullptr);
  CHECK(c.condition("Restarting"));
  CHECK(c.reason_of("Restarting") == "TFJobRestarting");
  CHECK(c.has_event("ExitedWithCode"));
  CHECK_THAT(c.event_message("ExitedWithCode"), Catch::Contains("exited with code 130"));
  // Counted in the job's annotation, which any CRD keeps (a status field of Kozmo's own would
  // be pruned by the peer's CRD).
  CHECK(c.recreated_pods() == "1");
  CHECK(c.job.document.at_path({"status", "recreatedPods"}) == nullptr);
  CHECK_FALSE(c.condition("Failed"));
  c.step();
  CHECK(c.find_pod("job-worker-1") != nullptr);
  c.run_all();
  c.step();
  CHECK(c.condition("Running"));
  CHECK(find_condition(c.status(), "Restarting") == nullptr);
}

TEST_CASE("exit code 1 under ExitCode fails the job with a message that says why") {
  cluster c(workers("TFJob", "tfReplicaSpecs", "tensorflow", 2, "ExitCode"));
  c.step();
  c.run_all();
  c.exit_with("job-worker-0", "tensorflow", 1);
  c.set_phase("job-worker-0", "Failed");
  // worker-0 failed, so the default success policy cannot apply
  c.step();
  CHECK(c.condition("Failed"));
  CHECK(c.reason_of("Failed") == "TFJobFailed");
  auto s = c.status();
  CHECK_THAT(find_condition(s, "Failed")->message,
             Catch::Contains("1 Worker replica(s) failed: pod job-worker-0 exited with code 1"));
  CHECK(c.find_pod("job-worker-0") != nullptr); // cleanPodPolicy None keeps it for its logs
  CHECK(s.completion_time == t0());
}

TEST_CASE("a failed pod under Never fails the job") {
  cluster c(job_doc("PyTorchJob", "pytorchReplicaSpecs",
                    "{\"Master\":" + replica("pytorch", 1, "Never") + ",\"Worker\":" + replica("pytorch", 2, "Never") + "}"));
  c.step();
  c.run_all();
  c.exit_with("job-worker-1", "pytorch", 137);
  c.step();
  CHECK(c.condition("Failed"));
  CHECK(c.reason_of("Failed") == "PyTorchJobFailed");
}

TEST_CASE("back-off under OnFailure: four workers restarting once each reach backoffLimit 4") {
  cluster c(workers("PyTorchJob", "pytorchReplicaSpecs", "pytorch", 4, "OnFailure", R"("runPolicy":{"backoffLimit":4})"));
  c.step();
  c.run_all();
  for (int i = 0; i < 3; ++i) {
    k8s::container_status cs;
    cs.name = "pytorch";
    cs.restart_count = 1;
    c.pod("job-worker-" + std::to_string(i)).status.container_statuses = {cs};
  }
  c.step();
  CHECK_FALSE(c.condition("Failed"));
  k8s::container_status cs;
  cs.name = "pytorch";
  cs.restart_count = 1;
  c.pod("job-worker-3").status.container_statuses = {cs};
  c.step();
  CHECK(c.condition("Failed"));
  CHECK(c.reason_of("Failed") == "PyTorchJobBackoffLimitExceeded");
  CHECK(c.pods.empty()); // running pods are stopped when a limit fails the job
}

TEST_CASE("pods recreated under ExitCode count against backoffLimit") {
  cluster c(workers("TFJob", "tfReplicaSpecs", "tensorflow", 2, "ExitCode", R"("runPolicy":{"backoffLimit":2})"));
  c.step();
  c.run_all();
  c.exit_with("job-worker-1", "tensorflow", 137);
  c.step();
  CHECK_FALSE(c.condition("Failed"));
  c.step(); // recreated
  c.run_all();
  c.exit_with("job-worker-1", "tensorflow", 143);
  c.step();
  CHECK(c.condition("Failed"));
  CHECK(c.reason_of("Failed") == "TFJobBackoffLimitExceeded");
  CHECK_THAT(c.status().conditions.back().message, Catch::Contains("2 restarts, backoffLimit 2"));
}

TEST_CASE("backoffLimit 0 fails the job at its first restart") {
  cluster c(workers("PyTorchJob", "pytorchReplicaSpecs", "pytorch", 1, "OnFailure", R"("runPolicy":{"backoffLimit":0})"));
  c.step();
  c.exit_with("job-worker-0", "pytorch", 1);
  c.step();
  CHECK(c.reason_of("Failed") == "PyTorchJobBackoffLimitExceeded");
}

// --- success policies ---------------------------------------------------------------

namespace {

cluster tf_workers(int n, const std::string& extra = "") {
  cluster c(workers("TFJob", "tfReplicaSpecs", "tensorflow", n, "OnFailure", extra));
  c.step();
  c.run_all();
  c.step();
  return c;
}

} // namespace

TEST_CASE("no chief, worker-0 succeeded and 3 workers active: the TFJob succeeded") {
  cluster c = tf_workers(4);
  c.exit_with("job-worker-0", "tensorflow", 0);
  c.step();
  CHECK(c.condition("Succeeded"));
  CHECK(c.status().completion_time == t0());
}

TEST_CASE("with successPolicy AllWorkers, worker-0 alone does not end the TFJob") {
  cluster c = tf_workers(4, R"("successPolicy":"AllWorkers")");
  c.exit_with("job-worker-0", "tensorflow", 0);
  c.step();
  CHECK_FALSE(c.condition("Succeeded"));
  for (int i = 1; i < 4; ++i)
    c.exit_with("job-worker-" + std::to_string(i), "tensorflow", 0);
  c.step();
  CHECK(c.condition("Succeeded"));
}

TEST_CASE("a worker other than worker-0 succeeding does not end a TFJob") {
  cluster c = tf_workers(3);
  c.exit_with("job-worker-2", "tensorflow", 0);
  c.step();
  CHECK_FALSE(c.condition("Succeeded"));
}

TEST_CASE("a TFJob with a chief follows the chief") {
  cluster c(job_doc("TFJob", "tfReplicaSpecs",
                    "{\"Chief\":" + replica("tensorflow", 1, "OnFailure") + ",\"Worker\":" + replica("tensorflow", 2, "OnFailure") + "}"));
  c.step();
  c.run_all();
  c.exit_with("job-worker-0", "tensorflow", 0);
  c.step();
  CHECK_FALSE(c.condition("Succeeded"));
  c.exit_with("job-chief-0", "tensorflow", 0);
  c.step();
  CHECK(c.condition("Succeeded"));
}

TEST_CASE("a chief that failed under OnFailure is restarting, not failed") {
  cluster c(job_doc("TFJob", "tfReplicaSpecs",
                    "{\"Chief\":" + replica("tensorflow", 1, "OnFailure") + ",\"Worker\":" + replica("tensorflow", 2, "OnFailure") + "}"));
  c.step();
  c.run_all();
  c.step();
  c.exit_with("job-chief-0", "tensorflow", 1);
  c.step();
  CHECK(c.condition("Restarting"));
  CHECK_FALSE(c.condition("Failed"));
  CHECK_FALSE(c.condition("Running"));
  CHECK(c.status().replica_statuses.at("Chief").failed == 1);
}

TEST_CASE("a PyTorchJob without a master succeeds when all workers succeed") {
  cluster c(workers("PyTorchJob", "pytorchReplicaSpecs", "pytorch", 2, "OnFailure"));
  c.step();
  c.run_all();
  c.exit_with("job-worker-0", "pytorch", 0);
  c.step();
  CHECK_FALSE(c.condition("Succeeded"));
  c.exit_with("job-worker-1", "pytorch", 0);
  c.step();
  CHECK(c.condition("Succeeded"));
}

TEST_CASE("an MPIJob succeeds with its launcher") {
  cluster c(job_doc("MPIJob", "mpiReplicaSpecs", "{\"Launcher\":" + replica("mpi", 1) + ",\"Worker\":" + replica("mpi", 2) + "}"));
  c.step();
  c.step();
  c.run_all();
  c.exit_with("job-launcher", "mpi", 0);
  c.step();
  CHECK(c.condition("Succeeded"));
  CHECK(c.reason_of("Succeeded") == "MPIJobSucceeded");
}

TEST_CASE("a Caffe2Job retries a signalled replica and fails on a program error") {
  cluster c(job_doc("Caffe2Job", "replicaSpecs", replica("caffe2", 2)));
  c.step();
  c.run_all();
  c.exit_with("job-worker-0", "caffe2", 137);
  c.step();
  CHECK(c.condition("Restarting"));
  c.step();
  c.run_all();
  c.exit_with("job-worker-1", "caffe2", 2);
  c.step();
  CHECK(c.reason_of("Failed") == "Caffe2JobFailed");
}

TEST_CASE("a Caffe2Job with a chief succeeds when the chief does") {
  cluster c(job_doc("Caffe2Job", "replicaSpecs", replica("caffe2", 2),
                    R"("terminationPolicy":{"chief":{"replicaName":"Worker","replicaIndex":0}})"));
  c.step();
  c.run_all();
  c.exit_with("job-worker-0", "caffe2", 0);
  c.step();
  CHECK(c.condition("Succeeded"));
}
