// XGBoostJob, PaddleJob and JAXJob on the shared reconcile core, and MPIJob v1 as users write
// it. Env cases follow the peer's own controller tests (xgboost TestClusterSpec, jax
// TestSetPodEnv, the paddle controller test); validation follows its webhooks.
#include "fixtures.hpp"

#include "actors/training/pod_builder.hpp"

using namespace training_test;

namespace {

// The env of a pod's container `container`, in order, as "NAME=value" (valueFrom: "NAME<-path").
std::vector<std::string> env_list(const k8s::pod& p, const std::string& container) {
  std::vector<std::string> out;
  for (const auto& c : p.spec.containers)
    if (c.name == container)
      for (const auto& e : c.env)
        out.push_back(e.value_from && e.value_from->field_ref ? e.name + "<-" + e.value_from->field_ref->field_path
                                                              : e.name + "=" + e.value);
  return out;
}

std::string failure_of(const json::value& doc) {
  auto job = decode_job(make_object(doc));
  REQUIRE_FALSE(job.has_value());
  return job.err().message;
}

// The peer's fixture for XGBoost: job "test-xgboostjob", Master 1 and `workers` workers.
cluster xgboost(int workers) {
  std::string specs = "{\"Master\":" + replica("xgboost", 1);
  if (workers > 0)
    specs += ",\"Worker\":" + replica("xgboost", workers);
  auto doc = job_doc("XGBoostJob", "xgbReplicaSpecs", specs + "}");
  doc["metadata"]["name"] = "test-xgboostjob";
  cluster c(doc);
  c.step();
  return c;
}

} // namespace

// --- XGBoostJob -------------------------------------------------------------------------------

TEST_CASE("an xgboost master alone gets world size 1, rank 0 and no worker variables") {
  auto c = xgboost(0);
  const auto& m = c.pod("test-xgboostjob-master-0");
  CHECK(env_of(m, "WORLD_SIZE") == "1");
  CHECK(env_of(m, "MASTER_PORT") == "9999");
  CHECK(env_of(m, "RANK") == "0");
  CHECK(env_of(m, "MASTER_ADDR") == "test-xgboostjob-master-0");
  CHECK(env_of(m, "WORKER_ADDRS") == "<unset>");
  CHECK(env_of(m, "WORKER_PORT") == "<unset>");
  CHECK(env_of(m, "PYTHONUNBUFFERED") == "1");
}

TEST_CASE("xgboost ranks count the master first and every pod lists the workers' addresses") {
  auto c = xgboost(2);
  for (const auto& [pod, rank] : std::vector<std::pair<std::string, std::string>>{
           {"test-xgboostjob-master-0", "0"}, {"test-xgboostjob-worker-0", "1"}, {"test-xgboostjob-worker-1", "2"}}) {
    INFO(pod);
    const auto& p = c.pod(pod);
    CHECK(env_of(p, "WORLD_SIZE") == "3");
    CHECK(env_of(p, "RANK") == rank);
    CHECK(env_of(p, "WORKER_PORT") == "9999");
    CHECK(env_of(p, "WORKER_ADDRS") == "test-xgboostjob-worker-0,test-xgboostjob-worker-1");
  }
  CHECK(c.pod("test-xgboostjob-master-0").metadata.labels.at("training.kubeflow.org/job-role") == "master");
  CHECK(c.pod("test-xgboostjob-worker-0").metadata.labels.count("training.kubeflow.org/job-role") == 0);
  CHECK(c.pod("test-xgboostjob-worker-0").spec.restart_policy == "Never");
  CHECK(c.pod("test-xgboostjob-worker-0").metadata.labels.at("training.kubeflow.org/operator-name") ==
        "xgboostjob-controller");
}

TEST_CASE("xgboost pods get a headless service each with the xgboost container's port") {
  auto c = xgboost(1);
  REQUIRE(c.services.size() == 2);
  for (const auto& s : c.services) {
    INFO(s.metadata.name);
    CHECK(s.spec.cluster_ip == "None");
    REQUIRE(s.spec.ports.size() == 1);
    CHECK(s.spec.ports[0].name == "xgboostjob-port");
    CHECK(s.spec.ports[0].port == 9999);
  }
}

TEST_CASE("a port the user named xgboostjob-port is the one the variables announce") {
  auto doc = job_doc("XGBoostJob", "xgbReplicaSpecs", "{\"Master\":" + replica("xgboost", 1) + "}");
  doc["spec"]["xgbReplicaSpecs"]["Master"]["template"]["spec"]["containers"].as_array()[0]["ports"] =
      parse_json(R"([{"name":"xgboostjob-port","containerPort":9991}])");
  cluster c(doc);
  c.step();
  CHECK(env_of(c.pod("job-master-0"), "MASTER_PORT") == "9991");
  CHECK(c.pod("job-master-0").spec.containers[0].ports.size() == 1); // not defaulted twice
}

TEST_CASE("an xgboost job succeeds when its master does, even with workers still running") {
  auto c = xgboost(2);
  c.run_all();
  c.step();
  c.exit_with("test-xgboostjob-master-0", "xgboost", 0);
  c.step();
  CHECK(c.condition("Succeeded"));
  CHECK(c.reason_of("Succeeded") == "XGBoostJobSucceeded");
}

TEST_CASE("an xgboost job needs exactly one master and a container named xgboost") {
  CHECK_THAT(failure_of(job_doc("XGBoostJob", "xgbReplicaSpecs", "{\"Worker\":" + replica("xgboost", 2) + "}")),
             Catch::Contains("spec.xgbReplicaSpecs.Master is missing"));
  CHECK_THAT(failure_of(job_doc("XGBoostJob", "xgbReplicaSpecs", "{\"Master\":" + replica("xgboost", 2) + "}")),
             Catch::Contains("an XGBoostJob has exactly one Master"));
  CHECK_THAT(failure_of(job_doc("XGBoostJob", "xgbReplicaSpecs", "{\"Master\":" + replica("xgboostjob", 1) + "}")),
             Catch::Contains("no container named \"xgboost\""));
  CHECK_THAT(failure_of(job_doc("XGBoostJob", "xgbReplicaSpecs",
                                R"({"Master":{"template":{"spec":{"containers":[{"name":"xgboost","image":""}]}}}})")),
             Catch::Contains("containers[0].image is missing"));
}

// --- PaddleJob --------------------------------------------------------------------------------

TEST_CASE("paddle workers without a master meet at worker-0, which announces its own pod IP") {
  auto doc = job_doc("PaddleJob", "paddleReplicaSpecs", "{\"Worker\":" + replica("paddle", 2) + "}");
  doc["spec"]["paddleReplicaSpecs"]["Worker"]["template"]["spec"]["containers"].as_array()[0]["ports"] =
      parse_json(R"([{"name":"master","containerPort":37777}])");
  cluster c(doc);
  c.step();
  CHECK(env_list(c.pod("job-worker-0"), "paddle") ==
        std::vector<std::string>{"POD_IP_DUMMY<-status.podIP", "PYTHONUNBUFFERED=1", "PADDLE_JOB_ID=job",
                                 "PADDLE_NNODES=2", "PADDLE_MASTER=$(POD_IP_DUMMY):37777"});
  CHECK(env_of(c.pod("job-worker-1"), "PADDLE_MASTER") == "job-worker-0:37777");
  CHECK(env_of(c.pod("job-worker-1"), "POD_IP_DUMMY") == "<unset>");
  CHECK(env_of(c.pod("job-worker-1"), "PADDLE_TRAINER_NUM") == "<unset>");
  CHECK(c.pod("job-worker-0").spec.restart_policy == "OnFailure");
  CHECK(c.pod("job-worker-0").metadata.labels.count("training.kubeflow.org/job-role") == 0);
}

TEST_CASE("paddle with a master meets at master-0 and tells servers from trainers") {
  cluster c(job_doc("PaddleJob", "paddleReplicaSpecs",
                    "{\"Master\":" + replica("paddle", 1) + ",\"Worker\":" + replica("paddle", 2) + "}"));
  c.step();
  const auto& m = c.pod("job-master-0");
  CHECK(env_of(m, "PADDLE_MASTER") == "$(POD_IP_DUMMY):36543");
  CHECK(env_list(m, "paddle").front() == "POD_IP_DUMMY<-status.podIP");
  CHECK(env_of(m, "PADDLE_SERVER_NUM") == "1");
  CHECK(env_of(m, "PADDLE_NNODES") == "3");
  CHECK(m.metadata.labels.at("training.kubeflow.org/job-role") == "master");
  for (const char* w : {"job-worker-0", "job-worker-1"}) {
    INFO(w);
    CHECK(env_of(c.pod(w), "PADDLE_MASTER") == "job-master-0:36543");
    CHECK(env_of(c.pod(w), "PADDLE_TRAINER_NUM") == "1");
    CHECK(env_of(c.pod(w), "POD_IP_DUMMY") == "<unset>");
  }
  REQUIRE(c.services.size() == 3);
  CHECK(c.services[0].spec.ports.at(0).name == "master");
  CHECK(c.services[0].spec.ports.at(0).port == 36543);
}

TEST_CASE("a paddle job with a master succeeds with it; without one, when every worker has") {
  cluster ps(job_doc("PaddleJob", "paddleReplicaSpecs",
                     "{\"Master\":" + replica("paddle", 1) + ",\"Worker\":" + replica("paddle", 2) + "}"));
  ps.step();
  ps.run_all();
  ps.exit_with("job-master-0", "paddle", 0);
  ps.step();
  CHECK(ps.condition("Succeeded"));
  CHECK(ps.reason_of("Succeeded") == "PaddleJobSucceeded");

  cluster collective(job_doc("PaddleJob", "paddleReplicaSpecs", "{\"Worker\":" + replica("paddle", 2) + "}"));
  collective.step();
  collective.run_all();
  collective.exit_with("job-worker-0", "paddle", 0);
  collective.step();
  CHECK_FALSE(collective.condition("Succeeded"));
  collective.exit_with("job-worker-1", "paddle", 0);
  collective.step();
  CHECK(collective.condition("Succeeded"));
}

TEST_CASE("a paddle elastic policy's missing bounds default to each other, then to the workers") {
  auto decoded = [](const std::string& elastic) {
    auto job = decode_job(make_object(job_doc("PaddleJob", "paddleReplicaSpecs", "{\"Worker\":" + replica("paddle", 3) + "}",
                                              R"("elasticPolicy":)" + elastic)));
    REQUIRE(job.has_value());
    REQUIRE(job->paddle_elastic.has_value());
    return std::pair{*job->paddle_elastic->min_replicas, *job->paddle_elastic->max_replicas};
  };
  CHECK(decoded("{}") == std::pair{3, 3});
  CHECK(decoded(R"({"maxReplicas":5})") == std::pair{5, 5});
  CHECK(decoded(R"({"minReplicas":2})") == std::pair{2, 2});
  CHECK(decoded(R"({"minReplicas":2,"maxReplicas":4})") == std::pair{2, 4});
  CHECK_THAT(failure_of(job_doc("PaddleJob", "paddleReplicaSpecs", "{\"Worker\":" + replica("paddle", 3) + "}",
                                R"("elasticPolicy":{"minReplicas":4,"maxReplicas":2})")),
             Catch::Contains("minReplicas (4) is above maxReplicas (2)"));
}

// --- JAXJob -----------------------------------------------------------------------------------

TEST_CASE("jax workers get the coordinator at worker-0, the process count and their own id") {
  auto doc = job_doc("JAXJob", "jaxReplicaSpecs", "{\"Worker\":" + replica("jax", 1) + "}");
  doc["metadata"]["name"] = "test-jaxjob";
  cluster c(doc);
  c.step();
  CHECK(env_list(c.pod("test-jaxjob-worker-0"), "jax") ==
        std::vector<std::string>{"PYTHONUNBUFFERED=1", "COORDINATOR_PORT=6666", "COORDINATOR_ADDRESS=test-jaxjob-worker-0",
                                 "NUM_PROCESSES=1", "PROCESS_ID=0"});
  CHECK(c.pod("test-jaxjob-worker-0").metadata.labels.at("training.kubeflow.org/job-role") == "master");
  CHECK(c.pod("test-jaxjob-worker-0").spec.restart_policy == "Never");
}

TEST_CASE("a jax job of three workers succeeds only when all three have") {
  cluster c(job_doc("JAXJob", "jaxReplicaSpecs", "{\"Worker\":" + replica("jax", 3) + "}"));
  c.step();
  CHECK(env_of(c.pod("job-worker-2"), "PROCESS_ID") == "2");
  CHECK(env_of(c.pod("job-worker-2"), "NUM_PROCESSES") == "3");
  CHECK(c.pod("job-worker-2").metadata.labels.count("training.kubeflow.org/job-role") == 0);
  c.run_all();
  c.exit_with("job-worker-0", "jax", 0);
  c.exit_with("job-worker-1", "jax", 0);
  c.step();
  CHECK_FALSE(c.condition("Succeeded"));
  c.exit_with("job-worker-2", "jax", 0);
  c.step();
  CHECK(c.condition("Succeeded"));
  CHECK(c.reason_of("Succeeded") == "JAXJobSucceeded");
}

TEST_CASE("a jax job has workers only and a container named jax") {
  CHECK_THAT(failure_of(job_doc("JAXJob", "jaxReplicaSpecs", "{\"Master\":" + replica("jax", 1) + "}")),
             Catch::Contains("unknown replica type for JAXJob; use Worker"));
  CHECK_THAT(failure_of(job_doc("JAXJob", "jaxReplicaSpecs", "{\"Worker\":" + replica("python", 1) + "}")),
             Catch::Contains("no container named \"jax\""));
}

// --- MPIJob v1 as users write it --------------------------------------------------------------

TEST_CASE("an MPIJob's containers may have any name: the first is the main one") {
  cluster c(job_doc("MPIJob", "mpiReplicaSpecs",
                    "{\"Launcher\":" + replica("mpi-launcher", 1) + ",\"Worker\":" + replica("mpi-worker", 2) + "}"));
  c.step();
  c.step();
  const auto& launcher = c.pod("job-launcher");
  CHECK(env_list(launcher, "mpi-launcher") ==
        std::vector<std::string>{"OMPI_MCA_plm_rsh_agent=/etc/mpi/kubexec.sh",
                                 "OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile", "NVIDIA_VISIBLE_DEVICES=",
                                 "NVIDIA_DRIVER_CAPABILITIES=", "I_MPI_HYDRA_BOOTSTRAP=rsh",
                                 "I_MPI_HYDRA_BOOTSTRAP_EXEC=/etc/mpi/kubexec.sh"});
  // Mounts as the pod is written (the typed pod keeps no volumes): the launcher's main container
  // has the config map at /etc/mpi, with the hostfile and both scripts.
  auto job = decode_job(c.job);
  REQUIRE(job.has_value());
  auto pod = build_pod(*job, job->replicas.front(), 0, plan_gang(*job, {}), {});
  const json::value* mounts = pod.at_path({"spec", "containers"})->as_array()[0].find("volumeMounts");
  REQUIRE(mounts != nullptr);
  CHECK(mounts->as_array().at(0).get_string("mountPath") == "/etc/mpi");
  const auto& items = pod.at_path({"spec", "volumes"})->as_array().at(0).at_path({"configMap", "items"})->as_array();
  REQUIRE(items.size() == 3);
  CHECK(items[1].get_string("key") == "hostfile");
  const auto& worker = c.pod("job-worker-1");
  CHECK(worker.spec.containers[0].env.empty());
  CHECK(worker.spec.containers[0].command == std::vector<std::string>{"sleep"});
  CHECK(worker.spec.containers[0].args == std::vector<std::string>{"365d"});
  CHECK(worker.spec.containers[0].ports.empty()); // the peer gives MPI containers no port
}

TEST_CASE("a sidecar of an MPI launcher gets none of mpirun's variables") {
  auto doc = job_doc("MPIJob", "mpiReplicaSpecs", "{\"Launcher\":" + replica("launcher", 1) + "}");
  doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"].as_array().push_back(
      parse_json(R"({"name":"sidecar","image":"busybox"})"));
  cluster c(doc);
  c.step();
  c.step();
  CHECK(env_list(c.pod("job-launcher"), "sidecar").empty());
  CHECK(env_of(c.pod("job-launcher"), "OMPI_MCA_plm_rsh_agent") == "/etc/mpi/kubexec.sh");
}

TEST_CASE("an MPIJob's config map holds the hostfile, kubexec.sh into the main container and host discovery") {
  auto doc = job_doc("MPIJob", "mpiReplicaSpecs",
                     "{\"Launcher\":" + replica("mpi", 1, "", 1) + ",\"Worker\":" + replica("mpi", 2) + "}",
                     R"("slotsPerWorker":2,"mainContainer":"trainer")");
  cluster c(doc);
  c.step();
  c.step();
  REQUIRE(c.mpi_config.has_value());
  // A launcher with a GPU is a host too, first.
  CHECK(c.mpi_config->at("hostfile") == "job-launcher slots=2\njob-worker-0 slots=2\njob-worker-1 slots=2\n");
  CHECK_THAT(c.mpi_config->at("kubexec.sh"),
             Catch::EndsWith("/opt/kube/kubectl exec ${POD_NAME} --container trainer -- /bin/sh -c \"$*\""));
  CHECK(env_of(c.pod("job-launcher"), "NVIDIA_VISIBLE_DEVICES") == "<unset>");
  CHECK(c.mpi_config->at("discover_hosts.sh") == "#!/bin/sh\necho job-launcher:2\n");
  c.set_phase("job-worker-1", "Running");
  c.step();
  CHECK(c.mpi_config->at("discover_hosts.sh") == "#!/bin/sh\necho job-launcher:2\n\necho job-worker-1:2");
}

TEST_CASE("an MPIJob's deprecated top-level cleanPodPolicy is honoured unless runPolicy has one") {
  auto policy = [](const std::string& extra) {
    auto job = decode_job(make_object(job_doc("MPIJob", "mpiReplicaSpecs", "{\"Launcher\":" + replica("mpi", 1) + "}", extra)));
    REQUIRE(job.has_value());
    return job->run.clean_pods;
  };
  CHECK(policy(R"("cleanPodPolicy":"Running")") == clean_pod_policy::running);
  CHECK(policy(R"("cleanPodPolicy":"All","runPolicy":{"backoffLimit":2})") == clean_pod_policy::all);
  CHECK(policy(R"("cleanPodPolicy":"All","runPolicy":{"cleanPodPolicy":"None"})") == clean_pod_policy::none);
  CHECK(policy("") == clean_pod_policy::none);
  CHECK_THAT(failure_of(job_doc("MPIJob", "mpiReplicaSpecs", "{\"Launcher\":" + replica("mpi", 1) + "}",
                                R"("cleanPodPolicy":"Sometimes","runPolicy":{})")),
             Catch::Contains("spec.cleanPodPolicy is \"Sometimes\""));
}

TEST_CASE("an MPIJob with the top-level cleanPodPolicy Running deletes its sleeping workers when the launcher ends") {
  cluster c(job_doc("MPIJob", "mpiReplicaSpecs",
                    "{\"Launcher\":" + replica("mpi-launcher", 1) + ",\"Worker\":" + replica("mpi-worker", 2) + "}",
                    R"("cleanPodPolicy":"Running")"));
  c.step();
  c.step();
  c.run_all();
  c.step();
  c.exit_with("job-launcher", "mpi-launcher", 0);
  c.settle();
  CHECK(c.condition("Succeeded"));
  CHECK(c.pod_names() == std::vector<std::string>{"job-launcher"});
}

TEST_CASE("an MPIJob's containers still need a name and an image") {
  CHECK_THAT(failure_of(job_doc("MPIJob", "mpiReplicaSpecs",
                                R"({"Launcher":{"template":{"spec":{"containers":[{"image":"x"}]}}}})")),
             Catch::Contains("spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].name is missing"));
}

TEST_CASE("an MPI launcher runs as <job>-launcher, allowed to exec into its workers, once that account exists") {
  cluster c(job_doc("MPIJob", "mpiReplicaSpecs",
                    "{\"Launcher\":" + replica("launcher", 1) + ",\"Worker\":" + replica("worker", 2) + "}"));
  c.step();
  CHECK(c.mpi_rbac == std::set<std::string>{"rolebindings/job-launcher", "roles/job-launcher",
                                            "serviceaccounts/job-launcher"});
  CHECK(c.find_pod("job-launcher") == nullptr); // the API server would refuse it without its account
  CHECK(c.find_pod("job-worker-1") != nullptr);
  CHECK(c.has_event("SuccessfulCreateRole"));
  auto role = c.rbac_objects.at("roles/job-launcher");
  CHECK(json::dump(role["rules"]) ==
        R"([{"apiGroups":[""],"resources":["pods"],"verbs":["get","list","watch"]},)"
        R"({"apiGroups":[""],"resources":["pods/exec"],"verbs":["create"],"resourceNames":["job-worker-0","job-worker-1"]}])");
  auto binding = c.rbac_objects.at("rolebindings/job-launcher");
  CHECK(binding["subjects"].as_array().at(0).get_string("name") == "job-launcher");
  CHECK(binding["roleRef"].get_string("name") == "job-launcher");
  CHECK(binding.at_path({"metadata", "ownerReferences"})->as_array().at(0).get_string("uid") == "job-uid");

  c.step();
  auto job = decode_job(c.job);
  REQUIRE(job.has_value());
  auto pod = build_pod(*job, job->replicas.front(), 0, plan_gang(*job, {}), {});
  CHECK(pod.at_path({"spec"})->get_string("serviceAccountName") == "job-launcher");
  const auto& init = pod.at_path({"spec", "initContainers"})->as_array().at(0);
  CHECK(init.get_string("name") == "kubectl-delivery");
  CHECK(init.get_string("image") == "kubeflow/kubectl-delivery:latest");
  REQUIRE(c.find_pod("job-launcher") != nullptr);
  CHECK(c.step().actions.empty()); // nothing is made twice
}

TEST_CASE("a launcher naming its own service account gets no new one; the binding names it") {
  cluster c(job_doc("MPIJob", "mpiReplicaSpecs",
                    "{\"Launcher\":" + replica("launcher", 1, "", 0, R"("serviceAccountName":"mpi-runner",)") + "}"));
  c.step();
  CHECK(c.mpi_rbac.count("serviceaccounts/job-launcher") == 0);
  CHECK(c.find_pod("job-launcher") != nullptr); // the user's account is the user's to make
  CHECK(c.rbac_objects.at("rolebindings/job-launcher")["subjects"].as_array().at(0).get_string("name") == "mpi-runner");
}

TEST_CASE("scaling an MPIJob's workers rewrites the launcher role's exec rule") {
  cluster c(job_doc("MPIJob", "mpiReplicaSpecs",
                    "{\"Launcher\":" + replica("mpi", 1) + ",\"Worker\":" + replica("mpi", 1) + "}"));
  c.settle();
  c.job.document["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = 2;
  c.step();
  REQUIRE(c.mpi_role_rules.has_value());
  CHECK(json::dump(*c.mpi_role_rules).find("\"job-worker-1\"") != std::string::npos);
}
