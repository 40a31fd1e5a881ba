// Decoding, defaults and the messages a malformed job gets.
#include "fixtures.hpp"

using namespace training_test;

namespace {

// Runs one pass over a job and returns the Failed condition's message ("" if not failed).
std::string failure_of(const json::value& doc, cluster** out = nullptr) {
  static std::optional<cluster> keep;
  keep.emplace(doc);
  keep->step();
  if (out != nullptr)
    *out = &*keep;
  auto s = keep->status();
  const job_condition* c = find_condition(s, condition_type::failed);
  return c != nullptr && c->status == "True" ? c->message : "";
}

} // namespace

TEST_CASE("a job with negative replicas fails with a message saying to use 0 or more") {
  cluster* c = nullptr;
  auto msg = failure_of(job_doc("PyTorchJob", "pytorchReplicaSpecs", "{\"Worker\":" + replica("pytorch", -1) + "}"), &c);
  CHECK_THAT(msg, Catch::Contains("spec.pytorchReplicaSpecs.Worker.replicas is -1: use 0 to 10000"));
  CHECK(c->reason_of("Failed") == "PyTorchJobInvalidSpec");
  CHECK(c->has_event("InvalidSpec"));
  CHECK(c->pods.empty());
}

TEST_CASE("a job with an unknown replica type fails and lists the known types") {
  auto msg = failure_of(job_doc("TFJob", "tfReplicaSpecs", "{\"Trainer\":" + replica("tensorflow", 1) + "}"));
  CHECK_THAT(msg, Catch::Contains("Trainer: unknown replica type for TFJob; use Chief, Master, PS, Worker, Evaluator"));
}

TEST_CASE("a job whose template has no containers fails and says to add the kind's container") {
  auto msg = failure_of(job_doc("PyTorchJob", "pytorchReplicaSpecs",
                                R"({"Master":{"replicas":1,"template":{"spec":{"containers":[]}}}})"));
  CHECK_THAT(msg, Catch::Contains("containers is empty: add a container named pytorch"));
}

TEST_CASE("a job whose main container is not named after the kind fails and says to rename it") {
  auto msg = failure_of(job_doc("PyTorchJob", "pytorchReplicaSpecs", "{\"Master\":" + replica("trainer", 1) + "}"));
  CHECK_THAT(msg, Catch::Contains("no container named \"pytorch\" (found \"trainer\")"));
  CHECK_THAT(msg, Catch::Contains("rename the main container to \"pytorch\""));
}

TEST_CASE("a job with a bad restartPolicy fails and lists the accepted policies") {
  auto msg = failure_of(job_doc("TFJob", "tfReplicaSpecs", "{\"Worker\":" + replica("tensorflow", 2, "Sometimes") + "}"));
  CHECK_THAT(msg, Catch::Contains("restartPolicy is \"Sometimes\": use Always, OnFailure, Never or ExitCode"));
}

TEST_CASE("a malformed job is reported once, not on every pass") {
  cluster c(job_doc("PyTorchJob", "pytorchReplicaSpecs", "{\"Worker\":" + replica("pytorch", -2) + "}"));
  c.step();
  CHECK(c.last.status.has_value());
  c.step();
  CHECK(c.last.actions.empty());
  CHECK_FALSE(c.last.status.has_value());
}

TEST_CASE("replica types are accepted in any case and defaults are applied") {
  auto doc = job_doc("TFJob", "tfReplicaSpecs", "{\"ps\":" + replica("tensorflow", 1) + ",\"worker\":" + replica("tensorflow", 2) + "}");
  auto job = decode_job(make_object(doc));
  REQUIRE(job.has_value());
  REQUIRE(job->replicas.size() == 2);
  CHECK(job->replicas[0].type == "PS");
  CHECK(job->replicas[1].type == "Worker");
  CHECK(job->replicas[1].restart == restart_policy::never); // TFJob's default
  CHECK(job->run.clean_pods == clean_pod_policy::none);
  // the default port is added to the default container
  auto* port = job->replicas[0].pod_template.at_path({"spec", "containers"});
  CHECK(json::dump(*port).find("\"tfjob-port\"") != std::string::npos);
}

TEST_CASE("an MPIJob's workers default to zero replicas and its launcher must be one") {
  auto job = decode_job(make_object(job_doc("MPIJob", "mpiReplicaSpecs",
                                            R"({"Launcher":)" + replica("mpi", 1) + R"(,"Worker":{"template":)" +
                                                R"({"spec":{"containers":[{"name":"mpi","image":"x"}]}}}})")));
  REQUIRE(job.has_value());
  CHECK(job->find("Worker")->replicas == 0);
  auto bad = failure_of(job_doc("MPIJob", "mpiReplicaSpecs", R"({"Worker":)" + replica("mpi", 2) + "}"));
  CHECK_THAT(bad, Catch::Contains("an MPIJob needs exactly one Launcher replica"));
}

TEST_CASE("a Caffe2Job decodes its single replica spec, backend and chief") {
  auto doc = job_doc("Caffe2Job", "replicaSpecs", replica("caffe2", 3),
                     R"("backendSpecs":{"backendType":"redis","redisHost":"redis","redisPort":6380},)"
                     R"("terminationPolicy":{"chief":{"replicaName":"worker","replicaIndex":1}})");
  auto job = decode_job(make_object(doc));
  REQUIRE(job.has_value());
  CHECK(job->traits->api_version == "kubeflow.org/v1alpha1");
  CHECK(job->replicas.at(0).type == "Worker");
  CHECK(job->replicas.at(0).replicas == 3);
  CHECK(job->replicas.at(0).restart == restart_policy::exit_code);
  CHECK(job->redis_port == 6380);
  CHECK(job->chief == std::pair<std::string, int>{"Worker", 1});
}

TEST_CASE("a job managed by another controller is left alone even when malformed") {
  cluster c(job_doc("PyTorchJob", "pytorchReplicaSpecs", "{\"Worker\":" + replica("pytorch", -1) + "}",
                    R"("runPolicy":{"managedBy":"kueue.x-k8s.io/multikueue"})"));
  c.step();
  CHECK(c.last.actions.empty());
  CHECK_FALSE(c.last.status.has_value());
  CHECK(c.last.skipped == "managed by kueue.x-k8s.io/multikueue");
}

TEST_CASE("a job managed by the training operator name is reconciled") {
  cluster c(job_doc("PyTorchJob", "pytorchReplicaSpecs", "{\"Worker\":" + replica("pytorch", 1) + "}",
                    R"("runPolicy":{"managedBy":"kubeflow.org/training-operator"})"));
  c.step();
  CHECK(c.pods.size() == 1);
}
