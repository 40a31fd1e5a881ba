// What the created pods, services and config maps look like: names, labels, owner, env per
// kind, ports, restart policy and the gang annotations Kozmo's scheduler reads.
#include "fixtures.hpp"

#include "actors/training/pod_builder.hpp"

using namespace training_test;

namespace {

const std::string pytorch_specs = "{\"Master\":" + replica("pytorch", 1) + ",\"Worker\":" + replica("pytorch", 3) + "}";

std::string annotation(const k8s::pod& p, const std::string& key) {
  auto it = p.metadata.annotations.find(key);
  return it == p.metadata.annotations.end() ? "<unset>" : it->second;
}

} // namespace

TEST_CASE("pytorch pods get their names, labels, owner and restart policy") {
  cluster c(job_doc("PyTorchJob", "pytorchReplicaSpecs", pytorch_specs));
  c.step();
  CHECK(c.pod_names() == std::vector<std::string>{"job-master-0", "job-worker-0", "job-worker-1", "job-worker-2"});
  const k8s::pod& m = c.pod("job-master-0");
  CHECK(m.metadata.labels.at("training.kubeflow.org/job-name") == "job");
  CHECK(m.metadata.labels.at("training.kubeflow.org/replica-type") == "master");
  CHECK(m.metadata.labels.at("training.kubeflow.org/replica-index") == "0");
  CHECK(m.metadata.labels.at("training.kubeflow.org/operator-name") == "pytorchjob-controller");
  CHECK(m.metadata.labels.at("training.kubeflow.org/job-role") == "master");
  CHECK(c.pod("job-worker-1").metadata.labels.count("training.kubeflow.org/job-role") == 0);
  const k8s::owner_reference* ref = m.metadata.controller_ref();
  REQUIRE(ref != nullptr);
  CHECK(ref->uid == "job-uid");
  CHECK(ref->kind == "PyTorchJob");
  CHECK(ref->block_owner_deletion == true);
  CHECK(m.spec.restart_policy == "OnFailure");
  CHECK(m.spec.containers.at(0).ports.at(0).name == "pytorchjob-port");
  CHECK(m.spec.containers.at(0).ports.at(0).container_port == 23456);
  // the template's annotations survive
  CHECK(annotation(m, "kozmo.io/sim-duration") == "5s");
}

TEST_CASE("pytorch ranks count the master first and workers after it") {
  cluster c(job_doc("PyTorchJob", "pytorchReplicaSpecs", pytorch_specs, R"("nprocPerNode":"2")"));
  c.step();
  const k8s::pod& w2 = c.pod("job-worker-2");
  CHECK(env_of(w2, "MASTER_ADDR") == "job-master-0");
  CHECK(env_of(w2, "MASTER_PORT") == "23456");
  CHECK(env_of(w2, "PET_MASTER_ADDR") == "job-master-0");
  CHECK(env_of(w2, "WORLD_SIZE") == "8");
  CHECK(env_of(w2, "RANK") == "3");
  CHECK(env_of(w2, "PET_NODE_RANK") == "3");
  CHECK(env_of(w2, "PET_NNODES") == "4");
  CHECK(env_of(w2, "PET_NPROC_PER_NODE") == "2");
  CHECK(env_of(w2, "PYTHONUNBUFFERED") == "1");
  CHECK(env_of(c.pod("job-master-0"), "RANK") == "0");
}

TEST_CASE("an environment variable the user set keeps the user's value") {
  std::string specs = R"({"Master":{"replicas":1,"template":{"spec":{"containers":[{"name":"pytorch","image":"x",)"
                      R"("env":[{"name":"MASTER_PORT","value":"1234"}]}]}}}})";
  cluster c(job_doc("PyTorchJob", "pytorchReplicaSpecs", specs));
  c.step();
  CHECK(env_of(c.pod("job-master-0"), "MASTER_PORT") == "1234");
}

TEST_CASE("elastic pytorch workers get the rendezvous settings instead of fixed ranks") {
  cluster c(job_doc("PyTorchJob", "pytorchReplicaSpecs", "{\"Worker\":" + replica("pytorch", 2) + "}",
                    R"("elasticPolicy":{"rdzvBackend":"c10d","rdzvPort":29400,"minReplicas":1,"maxReplicas":4,)"
                    R"("maxRestarts":3,"rdzvId":"run1","rdzvConf":[{"key":"timeout","value":"900"}]})"));
  c.step();
  const k8s::pod& w = c.pod("job-worker-1");
  CHECK(env_of(w, "PET_RDZV_ENDPOINT") == "job-worker-0:29400");
  CHECK(env_of(w, "PET_RDZV_BACKEND") == "c10d");
  CHECK(env_of(w, "PET_NNODES") == "1:4");
  CHECK(env_of(w, "PET_MAX_RESTARTS") == "3");
  CHECK(env_of(w, "PET_RDZV_ID") == "run1");
  CHECK(env_of(w, "PET_RDZV_CONF") == "timeout=900");
  CHECK(env_of(w, "RANK") == "<unset>");
}

TEST_CASE("tensorflow replicas get a TF_CONFIG naming every replica and their own task") {
  cluster c(job_doc("TFJob", "tfReplicaSpecs",
                    "{\"PS\":" + replica("tensorflow", 1) + ",\"Worker\":" + replica("tensorflow", 2) + "}"));
  c.step();
  CHECK(env_of(c.pod("job-worker-1"), "TF_CONFIG") ==
        R"({"cluster":{"ps":["job-ps-0.ns.svc:2222"],"worker":["job-worker-0.ns.svc:2222","job-worker-1.ns.svc:2222"]},)"
        R"("task":{"type":"worker","index":1},"environment":"cloud"})");
  // no chief: worker-0 plays the master role
  CHECK(c.pod("job-worker-0").metadata.labels.at("training.kubeflow.org/job-role") == "master");
  CHECK(c.pod("job-worker-0").spec.restart_policy == "Never");
}

TEST_CASE("every replica gets a headless service with the default container's named ports") {
  cluster c(job_doc("TFJob", "tfReplicaSpecs", "{\"Worker\":" + replica("tensorflow", 2) + "}"));
  c.step();
  REQUIRE(c.services.size() == 2);
  const k8s::service& s = c.services.at(1);
  CHECK(s.metadata.name == "job-worker-1");
  CHECK(s.spec.cluster_ip == "None");
  CHECK(s.spec.selector.at("training.kubeflow.org/replica-index") == "1");
  CHECK(s.spec.selector.at("training.kubeflow.org/replica-type") == "worker");
  CHECK(s.spec.selector.at("training.kubeflow.org/job-name") == "job");
  CHECK(s.spec.ports.at(0).name == "tfjob-port");
  CHECK(s.spec.ports.at(0).port == 2222);
  CHECK(s.metadata.controller_ref()->uid == "job-uid");
}

TEST_CASE("an MPI job gets a hostfile config map mounted in its launcher and no services") {
  cluster c(job_doc("MPIJob", "mpiReplicaSpecs",
                    "{\"Launcher\":" + replica("mpi", 1) + ",\"Worker\":" + replica("mpi", 2) + "}",
                    R"("slotsPerWorker":4)"));
  c.step();
  c.step(); // the launcher comes once its ServiceAccount exists
  REQUIRE(c.mpi_config.has_value());
  CHECK(c.mpi_config->at("hostfile") == "job-worker-0 slots=4\njob-worker-1 slots=4\n");
  CHECK(c.services.empty());
  CHECK(env_of(c.pod("job-launcher"), "OMPI_MCA_orte_default_hostfile") == "/etc/mpi/hostfile");
  CHECK(c.pod("job-launcher").metadata.labels.at("training.kubeflow.org/job-role") == "master");

  SECTION("scaling the workers rewrites the hostfile") {
    c.job.document["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = 3;
    c.step();
    CHECK(c.mpi_config->at("hostfile") == "job-worker-0 slots=4\njob-worker-1 slots=4\njob-worker-2 slots=4\n");
    CHECK(c.find_pod("job-worker-2") != nullptr);
  }
}

TEST_CASE("caffe2 replicas get one shard each, the redis backend and the cluster config") {
  cluster c(job_doc("Caffe2Job", "replicaSpecs", replica("caffe2", 2),
                    R"("backendSpecs":{"backendType":"redis","redisHost":"redis-service","redisPort":6379})"));
  c.step();
  const k8s::pod& w1 = c.pod("job-worker-1");
  CHECK(env_of(w1, "NUM_SHARDS") == "2");
  CHECK(env_of(w1, "SHARD_ID") == "1");
  CHECK(env_of(w1, "RUN_ID") == "job-uid");
  CHECK(env_of(w1, "REDIS_HOST") == "redis-service");
  CHECK(env_of(w1, "REDIS_PORT") == "6379");
  CHECK(env_of(w1, "CAFFE2_CONFIG") ==
        R"({"cluster":{"worker":["job-worker-0.ns.svc:2222","job-worker-1.ns.svc:2222"]},)"
        R"("task":{"type":"worker","index":1},"environment":"cloud"})");
  CHECK(w1.spec.restart_policy == "Never"); // ExitCode is the operator's, not the kubelet's
}

TEST_CASE("gpu pods of a job carry one gang for kozmo's scheduler") {
  std::string specs = "{\"Master\":" + replica("pytorch", 1, "", 2) + ",\"Worker\":" + replica("pytorch", 3, "", 2) + "}";
  cluster c(job_doc("PyTorchJob", "pytorchReplicaSpecs", specs,
                    R"("runPolicy":{"schedulingPolicy":{"queue":"vc1","priorityClass":"high"}})"));
  c.step();
  for (const auto& p : c.pods) {
    CHECK(annotation(p, "kozmo.io/gang") == "ns/job");
    CHECK(annotation(p, "kozmo.io/gang-members") == "4x2");
    CHECK(annotation(p, "kozmo.io/leaf-cell-number") == "2");
    CHECK(annotation(p, "kozmo.io/virtual-cluster") == "vc1");
    CHECK(annotation(p, "kozmo.io/priority") == "500");
    CHECK(p.spec.scheduler_name == "kozmo");
  }
}

TEST_CASE("a gang mixes gpu sizes and leaves cpu-only replicas to the default scheduler") {
  std::string specs = "{\"PS\":" + replica("tensorflow", 1) + ",\"Chief\":" + replica("tensorflow", 1, "", 4) +
                      ",\"Worker\":" + replica("tensorflow", 2, "", 1) + "}";
  cluster c(job_doc("TFJob", "tfReplicaSpecs", specs, R"("runPolicy":{"schedulingPolicy":{"priorityClass":"42"}})"));
  c.step();
  CHECK(annotation(c.pod("job-chief-0"), "kozmo.io/gang-members") == "1x4,2x1");
  CHECK(annotation(c.pod("job-worker-1"), "kozmo.io/priority") == "42");
  CHECK(annotation(c.pod("job-worker-1"), "kozmo.io/virtual-cluster") == "default");
  const k8s::pod& ps = c.pod("job-ps-0");
  CHECK(annotation(ps, "kozmo.io/gang") == "<unset>");
  CHECK(ps.spec.scheduler_name.empty());
}

TEST_CASE("minAvailable below the total makes the first pods the gang and the rest single pods") {
  std::string specs = "{\"Worker\":" + replica("pytorch", 4, "", 1) + "}";
  cluster c(job_doc("PyTorchJob", "pytorchReplicaSpecs", specs, R"("runPolicy":{"schedulingPolicy":{"minAvailable":2}})"));
  c.step();
  CHECK(annotation(c.pod("job-worker-1"), "kozmo.io/gang-members") == "2x1");
  CHECK(annotation(c.pod("job-worker-2"), "kozmo.io/gang") == "<unset>");
  CHECK(annotation(c.pod("job-worker-2"), "kozmo.io/leaf-cell-number") == "1");
  CHECK(c.pod("job-worker-3").spec.scheduler_name == "kozmo");
}

TEST_CASE("a template's own scheduler name and scheduling annotations win") {
  std::string specs = R"({"Worker":{"replicas":1,"template":{"metadata":{"annotations":{"kozmo.io/virtual-cluster":"vc9"}},)"
                      R"("spec":{"schedulerName":"volcano","containers":[{"name":"pytorch","image":"x",)"
                      R"("resources":{"limits":{"nvidia.com/gpu":1}}}]}}}})";
  cluster c(job_doc("PyTorchJob", "pytorchReplicaSpecs", specs));
  c.step();
  CHECK(c.pod("job-worker-0").spec.scheduler_name == "volcano");
  CHECK(annotation(c.pod("job-worker-0"), "kozmo.io/virtual-cluster") == "vc9");
}

TEST_CASE("priority classes map to kozmo priorities") {
  auto table = default_priority_classes();
  CHECK(priority_of("opportunistic", table) == -1);
  CHECK(priority_of("normal", table) == 100);
  CHECK(priority_of("2000", table) == 1000);
  CHECK(priority_of("-5", table) == -1);
  CHECK(priority_of("team-a-special", table) == 0);
  CHECK(priority_of("", table) == 0);
}

TEST_CASE("an elastic PyTorchJob's gang may run with minReplicas workers and grow to all of them") {
  std::string specs = "{\"Worker\":" + replica("pytorch", 4, "", 8) + "}";
  cluster c(job_doc("PyTorchJob", "pytorchReplicaSpecs", specs, R"("elasticPolicy":{"minReplicas":2,"maxReplicas":4})"));
  c.step();
  for (const auto& p : c.pods) {
    CHECK(annotation(p, "kozmo.io/gang-members") == "4x8");
    CHECK(annotation(p, "kozmo.io/gang-min-members") == "2");
  }
  // Not elastic, or no smaller minimum: no minimum written.
  cluster plain(job_doc("PyTorchJob", "pytorchReplicaSpecs", specs, R"("elasticPolicy":{"minReplicas":4,"maxReplicas":4})"));
  plain.step();
  CHECK(annotation(plain.pod("job-worker-0"), "kozmo.io/gang-min-members") == "<unset>");
}
