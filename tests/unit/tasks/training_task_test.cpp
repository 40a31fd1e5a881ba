// Training-job tasks (actors/tasks/training_plugin.hpp) through the machinery's rounds: the job
// an attempt creates, its conditions as the task's phases, its pods demystified, retries as new
// jobs, and what is deleted when.
#include "actors/tasks/training_plugin.hpp"
#include "fixture.hpp"

using namespace tasks_test;

namespace {

std::string pytorch_spec(const std::string& extra = "", const std::string& image = "pytorch/pytorch:2.1") {
  return R"({"type":"pytorch","job":{"pytorchReplicaSpecs":{
      "Master":{"replicas":1,"template":{"spec":{"containers":[{"name":"pytorch","image":")" +
         image + R"(","resources":{"limits":{"nvidia.com/gpu":"2"}}}]}}},
      "Worker":{"replicas":3,"template":{"metadata":{"labels":{"team":"vision"}},
                "spec":{"containers":[{"name":"pytorch","image":")" +
         image + R"(","resources":{"limits":{"nvidia.com/gpu":"2"}}}]}}}}})" +
         (extra.empty() ? "" : "," + extra) + "}";
}

fake_cluster training_cluster(const std::string& spec) {
  fake_cluster c(make_task("train", spec, R"({"owner":"ana"})"));
  c.plugins = plugin_registry::with_builtins(true);
  return c;
}

const json::value& replica_template(const json::value& job, const std::string& type) {
  const auto* t = job.at_path({"spec", "pytorchReplicaSpecs", type, "template"});
  REQUIRE(t != nullptr);
  return *t;
}

} // namespace

TEST_CASE("a pytorch task creates one PyTorchJob per attempt, owned by the task, its replicas decorated") {
  auto c = training_cluster(pytorch_spec(R"("environment":{"EPOCHS":"3"},"resources":{"limits":{"memory":"8Gi"}})"));
  c.settle();
  REQUIRE(c.jobs.size() == 1);
  const auto& job = c.job("train-0");
  CHECK(job.api_version == "kubeflow.org/v1");
  CHECK(job.kind == "PyTorchJob");
  CHECK(c.jobs.at("train-0").resource == "pytorchjobs");
  CHECK(c.pods.empty()); // the training controller makes the pods
  const auto* owner = job.metadata.controller_ref();
  REQUIRE(owner != nullptr);
  CHECK(owner->uid == "uid-train");
  CHECK(owner->kind == "TaskExecution");
  CHECK(job.metadata.labels.at(keys::task_name) == "train");
  CHECK(job.metadata.labels.at(keys::task_attempt) == "0");
  CHECK(job.metadata.labels.at("owner") == "ana"); // the task's own labels

  for (const char* type : {"Master", "Worker"}) {
    INFO(type);
    const auto& t = replica_template(job.document, type);
    // The job's pods carry the task's labels, so they reach the task and its attempt.
    CHECK(t.at_path({"metadata", "labels", keys::task_name})->as_string() == "train");
    CHECK(t.at_path({"metadata", "labels", keys::task_attempt})->as_string() == "0");
    const auto& container = t.at_path({"spec", "containers"})->as_array().at(0);
    std::string env = json::dump(*container.find("env"));
    CHECK(env.find("KOZMO_TASK_NAME") != std::string::npos);
    CHECK(env.find("EPOCHS") != std::string::npos);
    // spec.resources merged into the main container; its GPU limit kept.
    CHECK(container.at_path({"resources", "limits", "memory"})->as_string() == "8Gi");
    CHECK(container.at_path({"resources", "limits", "nvidia.com/gpu"})->as_string() == "2");
  }
  CHECK(replica_template(job.document, "Worker").at_path({"metadata", "labels", "team"})->as_string() == "vision");
  CHECK(c.phase() == "Queued");
  CHECK(c.status().reason == "Created");
  CHECK(c.status().attempts.at(0).job == "PyTorchJob/train-0");
}

TEST_CASE("the job's conditions are the task's phases") {
  auto c = training_cluster(pytorch_spec());
  c.settle();
  c.set_job_conditions("train-0", R"([{"type":"Created","status":"True","reason":"PyTorchJobCreated"}])");
  c.settle();
  CHECK(c.phase() == "Queued");

  c.set_job_conditions("train-0", R"([{"type":"Created","status":"True"},{"type":"Suspended","status":"True",
      "reason":"PyTorchJobSuspended","message":"PyTorchJob train-0 is suspended."}])");
  c.settle();
  CHECK(c.phase() == "Queued");
  CHECK(c.status().reason == "Suspended");

  c.set_job_conditions("train-0", R"([{"type":"Created","status":"True"},{"type":"Running","status":"True",
      "reason":"PyTorchJobRunning","message":"PyTorchJob train-0 is running."}])");
  c.settle();
  CHECK(c.phase() == "Running");
  CHECK(c.status().message == "PyTorchJob train-0 is running.");

  c.set_job_conditions("train-0", R"([{"type":"Created","status":"True"},{"type":"Restarting","status":"True",
      "reason":"PyTorchJobRestarting","message":"Worker 1 restarts"}])");
  c.settle();
  CHECK(c.phase() == "Running");
  CHECK(c.status().reason == "Restarting");

  c.set_job_conditions("train-0", R"([{"type":"Created","status":"True"},{"type":"Running","status":"False"},
      {"type":"Succeeded","status":"True","reason":"PyTorchJobSucceeded"}])");
  c.settle();
  CHECK(c.phase() == "Succeeded");
  CHECK(c.jobs.count("train-0") == 1); // the last attempt's job stays, like a pod task's pod
  CHECK_FALSE(c.has_finalizer());
}

TEST_CASE("a failed job is a retryable user failure: the next attempt is a new job, the old one deleted") {
  auto c = training_cluster(pytorch_spec(R"("retries":1)"));
  c.settle();
  c.set_job_conditions("train-0", R"([{"type":"Failed","status":"True","reason":"PyTorchJobFailed",
      "message":"PyTorchJob train-0 has failed because 1 Master replica(s) failed."}])");
  c.settle();
  CHECK(c.phase() == "Queued");
  CHECK(c.status().attempt == 1);
  CHECK(c.jobs.count("train-1") == 1);
  CHECK(c.jobs.at("train-1").object->metadata.labels.at(keys::task_attempt) == "1");
  bool attempt_failed = false;
  for (const auto& e : c.events)
    attempt_failed = attempt_failed || (e.reason == "AttemptFailed" && e.message.find("PyTorchJobFailed") != std::string::npos);
  CHECK(attempt_failed);

  c.set_job_conditions("train-1", R"([{"type":"Failed","status":"True","reason":"PyTorchJobFailed","message":"again"}])");
  c.settle();
  CHECK(c.phase() == "Failed");
  CHECK(c.status().message.find("all 1 retries are used") != std::string::npos);
  CHECK(c.jobs.count("train-0") == 0); // an earlier attempt's job is deleted when the task ends
  CHECK(c.jobs.count("train-1") == 1);
}

TEST_CASE("a job pod with an invalid image fails the task with InvalidImageName, naming the pod, and the job goes") {
  auto c = training_cluster(pytorch_spec(R"("retries":3)", "bad image!"));
  c.settle();
  auto& worker = c.add_job_pod("train-0", "train-0-worker-1", "pytorch");
  set_waiting(worker, "pytorch", "InvalidImageName", c.now, "couldn't parse image reference \"bad image!\"");
  c.settle();
  CHECK(c.phase() == "Failed");
  CHECK(c.status().reason == "InvalidImageName");
  CHECK(c.status().message.find("pod train-0-worker-1 of PyTorchJob train-0") != std::string::npos);
  CHECK(c.jobs.empty()); // deleted: the job's pods go with it (its controller, the garbage collector)
  CHECK(c.pods.count("train-0-worker-1") == 1); // not the machinery's to delete
}

TEST_CASE("a job pod in ImagePullBackOff shows while its grace period runs, then fails the attempt") {
  auto c = training_cluster(pytorch_spec());
  c.settle();
  auto& master = c.add_job_pod("train-0", "train-0-master-0", "pytorch");
  set_waiting(master, "pytorch", "ImagePullBackOff", c.now, "Back-off pulling image");
  c.settle();
  CHECK(c.phase() == "Initializing");
  CHECK(c.status().message.find("pod train-0-master-0 of PyTorchJob train-0") != std::string::npos);
  REQUIRE(c.wake_at.has_value()); // the machinery looks again when the grace period ends
  c.now = *c.wake_at + 1s;
  c.settle();
  CHECK(c.phase() == "Failed");
  CHECK(c.status().reason == "ImagePullBackOff");
}

TEST_CASE("a malformed job fails the task as InvalidSpec before anything is created") {
  auto bad = training_cluster(R"({"type":"pytorch","job":{"pytorchReplicaSpecs":{"Worker":{"replicas":-1,
      "template":{"spec":{"containers":[{"name":"pytorch","image":"x"}]}}}}}})");
  bad.settle();
  CHECK(bad.phase() == "Failed");
  CHECK(bad.status().reason == "InvalidSpec");
  CHECK(bad.status().message.rfind("spec.job.pytorchReplicaSpecs.Worker.replicas", 0) == 0);
  CHECK(bad.jobs.empty());

  auto missing = training_cluster(R"({"type":"tensorflow"})");
  missing.settle();
  CHECK(missing.status().reason == "InvalidSpec");
  CHECK(missing.status().message.rfind("spec.job: Required value", 0) == 0);

  // Without the training controller the types are unknown, and the message lists what is known.
  fake_cluster no_training(make_task("t", pytorch_spec()));
  no_training.settle();
  CHECK(no_training.status().message.rfind("spec.type: Unsupported value: \"pytorch\": supported values: "
                                           "\"container\", \"pod\"",
                                           0) == 0);
}

TEST_CASE("every training kind has a type, a resource and a job of its kind") {
  std::vector<std::string> types = training_task_types();
  CHECK(types == std::vector<std::string>{"pytorch", "tensorflow", "mpi", "xgboost", "paddle", "jax", "caffe2"});
  CHECK(training_job_kind("mpi") == object_kind{"kubeflow.org", "v1", "mpijobs"});
  CHECK(training_job_kind("caffe2") == object_kind{"kubeflow.org", "v1alpha1", "caffe2jobs"});
  CHECK(training_job_kind("spark").resource.empty());

  auto c = training_cluster(R"({"type":"tensorflow","job":{"tfReplicaSpecs":{"Worker":{"replicas":2,
      "template":{"spec":{"containers":[{"name":"tensorflow","image":"tf"}]}}}}}})");
  c.settle();
  REQUIRE(c.jobs.count("train-0") == 1);
  CHECK(c.job("train-0").kind == "TFJob");
  CHECK(c.jobs.at("train-0").resource == "tfjobs");
}

TEST_CASE("a deleted training task deletes its job, and never the job's pods itself") {
  auto c = training_cluster(pytorch_spec());
  c.settle();
  c.add_job_pod("train-0", "train-0-master-0", "pytorch");
  c.deleting();
  auto r = c.round();
  REQUIRE(r.deletes.size() == 1);
  CHECK(r.deletes[0].name == "train-0");
  CHECK(r.deletes[0].kind == object_kind{"kubeflow.org", "v1", "pytorchjobs"});
  CHECK(c.phase() == "Aborted");
}
