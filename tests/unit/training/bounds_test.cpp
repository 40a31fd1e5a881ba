// The numbers of a job that size work are checked before anything is sized by them, pods are
// created in bounded batches, and a create the API server refuses is reported in the job.
#include "fixtures.hpp"

using namespace training_test;

namespace {

std::string failure(cluster& c) {
  c.step();
  auto s = c.status();
  const job_condition* f = find_condition(s, condition_type::failed);
  return f != nullptr && f->status == "True" ? f->message : "";
}

std::string worker_spec(const std::string& replicas_json, const std::string& resources = "") {
  return R"({"Worker":{"replicas":)" + replicas_json +
         R"(,"template":{"spec":{"containers":[{"name":"pytorch","image":"example/train:1")" +
         (resources.empty() ? "" : R"(,"resources":)" + resources) + "}]}}}}";
}

cluster pytorch(const std::string& replicas_json, const std::string& resources = "") {
  return cluster(job_doc("PyTorchJob", "pytorchReplicaSpecs", worker_spec(replicas_json, resources)));
}

} // namespace

TEST_CASE("a billion replicas fail the job at once, naming the field and the limit, and create nothing") {
  auto c = pytorch("1000000000");
  CHECK_THAT(failure(c), Catch::Contains("spec.pytorchReplicaSpecs.Worker.replicas is 1000000000: use 0 to 10000"));
  CHECK(c.reason_of("Failed") == "PyTorchJobInvalidSpec");
  CHECK(c.pods.empty());
}

TEST_CASE("replicas beyond int32 are refused, not truncated into a job that succeeds") {
  auto c = pytorch("4294967297"); // 2^32 + 1 used to become 1
  CHECK_THAT(failure(c), Catch::Contains("replicas is 4294967297: use 0 to 10000"));
  auto f = pytorch("1e10"); // a float used to show as 1410065408
  CHECK_THAT(failure(f), Catch::Contains("replicas is 10000000000: use 0 to 10000"));
  auto half = pytorch("2.5");
  CHECK_THAT(failure(half), Catch::Contains("replicas is 2.5: must be a whole number"));
}

TEST_CASE("the replicas limit is set per kind") {
  auto c = pytorch("20");
  c.opt.max_replicas["PyTorchJob"] = 10;
  CHECK_THAT(failure(c), Catch::Contains("replicas is 20: use 0 to 10"));
  auto tf_allowed = pytorch("20");
  tf_allowed.opt.max_replicas["TFJob"] = 10; // another kind's limit does not apply
  CHECK(failure(tf_allowed).empty());
}

TEST_CASE("a template's GPUs must be a whole number, not negative, the same in requests and limits") {
  auto negative = pytorch("1", R"({"limits":{"nvidia.com/gpu":-4}})");
  CHECK_THAT(failure(negative),
             Catch::Contains("containers[0].resources.limits[nvidia.com/gpu] is -4: must be a whole number of GPUs, 0 or more"));
  auto half = pytorch("1", R"({"limits":{"nvidia.com/gpu":"0.5"}})");
  CHECK_THAT(failure(half), Catch::Contains("is 0.5: must be a whole number of GPUs"));
  auto differ = pytorch("1", R"({"limits":{"nvidia.com/gpu":2},"requests":{"nvidia.com/gpu":1}})");
  CHECK_THAT(failure(differ), Catch::Contains("requests[nvidia.com/gpu] is 1: must equal the limit (2)"));
  auto huge = pytorch("1", R"({"limits":{"nvidia.com/gpu":"1e18"}})");
  CHECK_THAT(failure(huge), Catch::Contains("at most 1024"));
  auto fine = pytorch("2", R"({"limits":{"nvidia.com/gpu":"8"},"requests":{"nvidia.com/gpu":8}})");
  CHECK(failure(fine).empty());
}

TEST_CASE("other numbers that size work are bounded too") {
  auto slots = cluster(job_doc("MPIJob", "mpiReplicaSpecs",
                               R"({"Launcher":{"replicas":1,"template":{"spec":{"containers":[{"name":"mpi","image":"x"}]}}}})",
                               R"("slotsPerWorker":100000000)"));
  CHECK_THAT(failure(slots), Catch::Contains("spec.slotsPerWorker is 100000000: use 1 to 1024"));
  auto nproc = cluster(job_doc("PyTorchJob", "pytorchReplicaSpecs", worker_spec("1"), R"("nprocPerNode":"99999999999")"));
  CHECK_THAT(failure(nproc), Catch::Contains("spec.nprocPerNode is \"99999999999\": use auto, cpu, gpu or 1 to 1024"));
  auto backoff = cluster(job_doc("PyTorchJob", "pytorchReplicaSpecs", worker_spec("1"),
                                 R"("runPolicy":{"backoffLimit":9999999999})"));
  CHECK_THAT(failure(backoff), Catch::Contains("backoffLimit is 9999999999: use 0 to 2147483647"));
  auto elastic = cluster(job_doc("PyTorchJob", "pytorchReplicaSpecs", worker_spec("1"),
                                 R"("elasticPolicy":{"maxReplicas":1000000000})"));
  CHECK_THAT(failure(elastic), Catch::Contains("spec.elasticPolicy.maxReplicas is 1000000000: use 0 to 10000"));
  auto inverted = cluster(job_doc("PyTorchJob", "pytorchReplicaSpecs", worker_spec("2"),
                                  R"("elasticPolicy":{"minReplicas":5,"maxReplicas":2})"));
  CHECK_THAT(failure(inverted), Catch::Contains("spec.elasticPolicy.minReplicas (5) is above maxReplicas (2)"));
  CHECK(inverted.pods.empty());
}

TEST_CASE("a job of 1,200 replicas is created 500 objects a pass, each pass asking to run again") {
  auto c = pytorch("1200");
  c.step();
  CHECK(c.count_actions<create_object>() == 500);
  REQUIRE(c.last.wake_at.has_value());
  CHECK(*c.last.wake_at <= c.now);
  c.step();
  c.step();
  c.step();
  c.step();
  CHECK(c.pods.size() == 1200);
  CHECK(c.services.size() == 1200);
  c.step();
  CHECK(c.count_actions<create_object>() == 0);
}

TEST_CASE("a create the API server refused is reported once in a condition and an Event, then retried") {
  auto c = pytorch("2");
  c.refused = observed::create_refusal{"pod job-worker-0", 422,
                                       "Pod \"job-worker-0\" is invalid: spec.containers[0].image: Required value"};
  c.step();
  // The report goes first, alone: the creates would fail again before the status is written.
  CHECK(c.count_actions<create_object>() == 0);
  CHECK(c.condition(condition_type::replica_failure));
  CHECK(c.reason_of(condition_type::replica_failure) == "FailedCreatePod");
  CHECK_THAT(c.event_message("FailedCreatePod"),
             Catch::Contains("Error creating pod job-worker-0: Pod \"job-worker-0\" is invalid"));
  // Reported: the next pass tries again (the actor has waited its back-off).
  c.step();
  CHECK(c.count_actions<create_object>("pods") == 2);
  CHECK_FALSE(c.has_event("FailedCreatePod"));
  // A create worked: the condition goes.
  c.refused.reset();
  c.step();
  CHECK_FALSE(find_condition(c.status(), condition_type::replica_failure));
  CHECK_FALSE(c.condition(condition_type::failed));
}
