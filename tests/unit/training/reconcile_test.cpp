// The reconcile pass over a job's pods: creating, observing, scaling, adopting, suspending
// and cleaning up.
#include "fixtures.hpp"

using namespace training_test;

namespace {

json::value tf_doc(int workers, int ps, const std::string& extra = "") {
  return job_doc("TFJob", "tfReplicaSpecs",
                 "{\"PS\":" + replica("tensorflow", ps) + ",\"Worker\":" + replica("tensorflow", workers) + "}", extra);
}

} // namespace

TEST_CASE("a new job gets Created, its pods and services, and a start time") {
  cluster c(tf_doc(4, 2));
  c.step();
  CHECK(c.pods.size() == 6);
  CHECK(c.services.size() == 6);
  CHECK(c.condition("Created"));
  CHECK(c.reason_of("Created") == "TFJobCreated");
  CHECK(c.status().start_time == t0());
  CHECK(c.has_event("SuccessfulCreatePod"));
  CHECK(c.has_event("SuccessfulCreateService"));
  CHECK_FALSE(c.condition("Running"));
}

TEST_CASE("a second pass over an unchanged world does nothing and writes nothing") {
  cluster c(tf_doc(2, 1));
  c.step();
  c.now += seconds(10);
  c.step();
  CHECK(c.last.actions.empty());
  CHECK_FALSE(c.last.status.has_value());
}

TEST_CASE("mixed pod states show in replica statuses and the job is Running only when all pods run") {
  cluster c(tf_doc(4, 2));
  c.step();
  c.set_phase("job-worker-0", "Running");
  c.set_phase("job-worker-1", "Running");
  c.set_phase("job-ps-0", "Running");
  c.step();
  auto s = c.status();
  CHECK(s.replica_statuses.at("Worker").active == 2);
  CHECK(s.replica_statuses.at("PS").active == 1);
  CHECK(s.replica_statuses.at("Worker").selector ==
        "training.kubeflow.org/job-name=job,training.kubeflow.org/operator-name=tfjob-controller,"
        "training.kubeflow.org/replica-type=worker");
  CHECK_FALSE(c.condition("Running")); // two workers and a PS are still pending

  c.run_all();
  c.exit_with("job-worker-3", "tensorflow", 0);
  c.step();
  CHECK(c.condition("Running"));
  CHECK(c.reason_of("Running") == "TFJobRunning");
  CHECK(c.status().replica_statuses.at("Worker").active == 3);
  CHECK(c.status().replica_statuses.at("Worker").succeeded == 1);
  CHECK_FALSE(c.condition("Succeeded"));
}

TEST_CASE("scaling workers up creates the new indices and down deletes the highest") {
  cluster c(tf_doc(2, 1));
  c.step();
  c.job.document["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = 4;
  c.step();
  CHECK(c.find_pod("job-worker-3") != nullptr);
  CHECK(c.services.size() == 5);
  c.job.document["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = 1;
  c.step();
  CHECK(c.pod_names() == std::vector<std::string>{"job-ps-0", "job-worker-0"});
  CHECK(c.services.size() == 2);
  CHECK(c.has_event("SuccessfulDeletePod"));
  CHECK_FALSE(c.condition("Failed")); // scaling down is not a failure
}

TEST_CASE("an orphan pod with the job's labels is adopted after a re-read and not recreated") {
  cluster c(tf_doc(1, 1));
  c.step();
  k8s::pod& w = c.pod("job-worker-0");
  w.metadata.owner_references.clear();
  c.step();
  REQUIRE(c.count_actions<adopt_object>("pods") == 1);
  const auto& adopt = std::get<adopt_object>(c.last.actions.at(0));
  CHECK(adopt.name == "job-worker-0");
  CHECK(adopt.job_uid == "job-uid"); // checked against a fresh read of the job before adopting
  CHECK(json::dump(adopt.patch).find("\"controller\":true") != std::string::npos);
  CHECK(c.count_actions<create_object>() == 0);
  CHECK(c.pod("job-worker-0").metadata.controller_ref() != nullptr);
}

TEST_CASE("an owned pod whose labels no longer match is released and replaced") {
  cluster c(tf_doc(1, 1));
  c.step();
  c.pod("job-worker-0").metadata.labels.erase("training.kubeflow.org/job-name");
  c.pod("job-worker-0").metadata.name = "debug-copy";
  c.step();
  CHECK(c.count_actions<release_object>("pods") == 1);
  CHECK(c.pod("debug-copy").metadata.controller_ref() == nullptr);
  CHECK(c.find_pod("job-worker-0") != nullptr);
}

TEST_CASE("pods controlled by another owner are never touched") {
  cluster c(tf_doc(1, 0));
  c.step();
  k8s::pod& w = c.pod("job-worker-0");
  w.metadata.owner_references.at(0).uid = "someone-else";
  c.step();
  CHECK(c.count_actions<adopt_object>() == 0);
  CHECK(c.count_actions<release_object>() == 0);
  CHECK(c.count_actions<delete_object>() == 0);
  CHECK(c.count_actions<create_object>("pods") == 0);
  CHECK_THAT(c.event_message("FailedCreatePod"), Catch::Contains("belongs to another owner"));
}

TEST_CASE("suspending a job deletes its pods and services and resuming recreates them") {
  cluster c(tf_doc(2, 1));
  c.step();
  c.run_all();
  c.step();
  REQUIRE(c.condition("Running"));
  c.job.document["spec"]["runPolicy"]["suspend"] = true;
  c.now += seconds(60);
  c.step();
  CHECK(c.pods.empty());
  CHECK(c.services.empty());
  CHECK(c.condition("Suspended"));
  CHECK(c.reason_of("Suspended") == "TFJobSuspended");
  CHECK_FALSE(c.condition("Running"));
  CHECK_FALSE(c.status().start_time.has_value());
  CHECK(c.status().replica_statuses.at("Worker").active == 0);
  c.step();
  CHECK(c.last.actions.empty()); // a suspended job stays quiet
  CHECK_FALSE(c.last.status.has_value());

  c.job.document["spec"]["runPolicy"]["suspend"] = false;
  c.now += seconds(60);
  c.step();
  CHECK(c.pods.size() == 3);
  CHECK_FALSE(c.condition("Suspended"));
  CHECK(c.reason_of("Suspended") == "TFJobResumed");
  CHECK(c.status().start_time == t0() + seconds(120));
}

TEST_CASE("a job being deleted is left to the garbage collector") {
  cluster c(tf_doc(1, 0));
  c.job.metadata.deletion_timestamp = t0();
  c.step();
  CHECK(c.last.actions.empty());
  CHECK(c.last.skipped == "being deleted");
}

namespace {

// A PyTorch job whose master succeeded while a worker still runs and another finished.
cluster finished_job(const std::string& policy) {
  cluster c(job_doc("PyTorchJob", "pytorchReplicaSpecs",
                    "{\"Master\":" + replica("pytorch", 1) + ",\"Worker\":" + replica("pytorch", 2) + "}",
                    R"("runPolicy":{"cleanPodPolicy":")" + policy + "\"}"));
  c.step();
  c.run_all();
  c.exit_with("job-master-0", "pytorch", 0);
  c.exit_with("job-worker-0", "pytorch", 0);
  c.step();
  return c;
}

} // namespace

TEST_CASE("cleanPodPolicy None keeps every pod of a finished job") {
  cluster c = finished_job("None");
  CHECK(c.condition("Succeeded"));
  CHECK(c.pods.size() == 3);
  CHECK(c.status().replica_statuses.at("Worker").succeeded == 2); // the running one counts as succeeded
  CHECK(c.status().replica_statuses.at("Worker").active == 0);
  c.step();
  CHECK(c.last.actions.empty());
}

TEST_CASE("cleanPodPolicy Running deletes only the pods still running") {
  cluster c = finished_job("Running");
  CHECK(c.pod_names() == std::vector<std::string>{"job-master-0", "job-worker-0"});
  CHECK(c.services.size() == 2);
}

TEST_CASE("cleanPodPolicy All deletes every pod and service") {
  cluster c = finished_job("All");
  CHECK(c.pods.empty());
  CHECK(c.services.empty());
  CHECK(c.reason_of("Succeeded") == "PyTorchJobSucceeded");
  CHECK_FALSE(c.condition("Running"));
}
