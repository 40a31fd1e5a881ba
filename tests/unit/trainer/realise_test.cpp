// The JobSet a TrainJob stands for: pods, names, labels, env per ML policy, runtime patches and
// the gang (jobset.hpp's rules), and the bounds decoding holds numbers to.
#include "fixtures.hpp"

using namespace trainer_test;

namespace {

trainer::jobset realised(const std::string& spec, const char* runtime = torch_runtime) {
  auto job = trainer::decode_train_job(object_of(yaml(trainjob(spec))));
  REQUIRE(job);
  auto rt = trainer::decode_runtime(yaml(runtime));
  REQUIRE(rt);
  auto set = trainer::realise(*job, *rt, {});
  INFO((set ? std::string() : set.err().message));
  REQUIRE(set);
  return *set;
}

std::string refusal(const std::string& spec, const char* runtime = torch_runtime) {
  auto job = trainer::decode_train_job(object_of(yaml(trainjob(spec))));
  if (!job)
    return job.err().message;
  auto rt = trainer::decode_runtime(yaml(runtime));
  if (!rt)
    return rt.err().message;
  auto set = trainer::realise(*job, *rt, {});
  return set ? std::string() : set.err().message;
}

std::string env_of(const json::value& pod, const std::string& name) {
  for (const auto& e : pod.at_path({"spec", "containers"})->as_array().front().find("env")->as_array())
    if (e.get_string("name") == name)
      return e.get_string("value");
  return "<unset>";
}

std::string label_of(const json::value& pod, std::string_view key) {
  return pod.at_path({"metadata", "labels"})->get_string(key);
}

const char* jax_runtime = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: jax-distributed}
spec:
  mlPolicy: {numNodes: 1, jax: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node, image: jax}]}}}
)";

const char* xgboost_runtime = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: xgboost-distributed}
spec:
  mlPolicy: {numNodes: 1, xgboost: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node, image: xgb}]}}}
)";

} // namespace

TEST_CASE("a torch TrainJob of 2 nodes is two indexed pods named and labelled as JobSet names them") {
  auto set = realised("  trainer: {numNodes: 2}\n");
  REQUIRE(set.pods.size() == 2);
  const auto& pod = set.pods[1].pod;
  CHECK(set.pods[1].name == "mnist-node-0-1");
  CHECK(pod.at_path({"spec", "hostname"})->as_string() == "mnist-node-0-1");
  CHECK(pod.at_path({"spec", "subdomain"})->as_string() == "mnist");
  CHECK(label_of(pod, "jobset.sigs.k8s.io/jobset-name") == "mnist");
  CHECK(label_of(pod, "jobset.sigs.k8s.io/replicatedjob-name") == "node");
  CHECK(label_of(pod, "batch.kubernetes.io/job-completion-index") == "1");
  CHECK(pod.at_path({"metadata", "annotations"})->get_string("batch.kubernetes.io/job-completion-index") == "1");
  CHECK(label_of(pod, "trainer.kubeflow.org/trainjob-ancestor-step") == "trainer");
  CHECK(pod.at_path({"spec", "containers"})->as_array().front().get_string("name") == "node");
  CHECK(set.service.at_path({"spec", "clusterIP"})->as_string() == "None");
  CHECK(set.service.at_path({"metadata", "name"})->as_string() == "mnist");
}

TEST_CASE("torch env gives every node the world size, its rank and the first node as master") {
  auto set = realised("  trainer: {numNodes: 2}\n");
  const auto& pod = set.pods[1].pod;
  CHECK(env_of(pod, "PET_NNODES") == "2");
  CHECK(env_of(pod, "PET_NODE_RANK") == "1");
  CHECK(env_of(pod, "PET_MASTER_ADDR") == "mnist-node-0-0.mnist");
  CHECK(env_of(pod, "PET_MASTER_PORT") == "29500");
  CHECK(env_of(pod, "PET_NPROC_PER_NODE") == "1"); // no GPUs, no CPU asked for
  auto ports = pod.at_path({"spec", "containers"})->as_array().front().find("ports")->as_array();
  CHECK(ports.front().get_int("containerPort") == 29500);
}

TEST_CASE("torch's processes per node follow the GPUs, else the CPUs, else an explicit number") {
  auto gpus = realised("  trainer:\n    numNodes: 1\n    resourcesPerNode: {limits: {nvidia.com/gpu: 2}}\n");
  CHECK(env_of(gpus.pods[0].pod, "PET_NPROC_PER_NODE") == "auto"); // torchrun counts the GPUs
  auto cpus = realised("  trainer:\n    resourcesPerNode: {limits: {cpu: 3500m}}\n");
  CHECK(env_of(cpus.pods[0].pod, "PET_NPROC_PER_NODE") == "4");
  auto fixed = realised("  trainer: {numProcPerNode: 3}\n");
  CHECK(env_of(fixed.pods[0].pod, "PET_NPROC_PER_NODE") == "3");
}

TEST_CASE("the trainer's image, command, args, env and resources replace the runtime's on the node container") {
  auto set = realised("  trainer:\n    image: mine:1\n    command: [python, train.py]\n    args: [--epochs, '3']\n"
                      "    env: [{name: LR, value: '0.1'}]\n    resourcesPerNode: {limits: {cpu: 2}}\n");
  const auto& c = set.pods[0].pod.at_path({"spec", "containers"})->as_array().front();
  CHECK(c.get_string("image") == "mine:1");
  CHECK(json::strings_of(c.find("command")) == std::vector<std::string>{"python", "train.py"});
  CHECK(json::strings_of(c.find("args")) == std::vector<std::string>{"--epochs", "3"});
  CHECK(env_of(set.pods[0].pod, "LR") == "0.1");
  CHECK(json::scalar_text(*c.at_path({"resources", "limits", "cpu"})) == "2");
}

TEST_CASE("jax and xgboost nodes get their coordinator, rank and world size") {
  auto jax = realised("  runtimeRef: {name: jax-distributed}\n  trainer: {numNodes: 3}\n", jax_runtime);
  CHECK(env_of(jax.pods[2].pod, "JAX_NUM_PROCESSES") == "3");
  CHECK(env_of(jax.pods[2].pod, "JAX_PROCESS_ID") == "2");
  CHECK(env_of(jax.pods[2].pod, "JAX_COORDINATOR_ADDRESS") == "mnist-node-0-0.mnist:29500");
  auto xgb = realised("  trainer:\n    numNodes: 2\n    resourcesPerNode: {limits: {nvidia.com/gpu: 4}}\n", xgboost_runtime);
  CHECK(env_of(xgb.pods[1].pod, "DMLC_TRACKER_URI") == "mnist-node-0-0.mnist");
  CHECK(env_of(xgb.pods[1].pod, "DMLC_TASK_ID") == "1");
  CHECK(env_of(xgb.pods[1].pod, "DMLC_NUM_WORKER") == "8");
  auto cpu = realised("  trainer: {numNodes: 2}\n", xgboost_runtime);
  CHECK(env_of(cpu.pods[0].pod, "DMLC_NUM_WORKER") == "2");
}

TEST_CASE("a user may not set a variable the ML policy sets") {
  CHECK(refusal("  trainer:\n    env: [{name: PET_NNODES, value: '9'}]\n").find("PET_NNODES") != std::string::npos);
}

TEST_CASE("GPU nodes are one gang in the TrainJob's virtual cluster, members counted by GPUs") {
  auto set = realised("  trainer:\n    numNodes: 2\n    resourcesPerNode: {limits: {nvidia.com/gpu: 2}}\n");
  CHECK(set.gang());
  CHECK(set.gang_gpus == 4);
  const auto& pod = set.pods[0].pod;
  const auto* ann = pod.at_path({"metadata", "annotations"});
  CHECK(ann->get_string("kozmo.io/gang") == "team/mnist");
  CHECK(ann->get_string("kozmo.io/gang-members") == "2x2");
  CHECK(ann->get_string("kozmo.io/virtual-cluster") == "default");
  CHECK(pod.at_path({"spec", "schedulerName"})->as_string() == "kozmo");
}

TEST_CASE("runtime patches merge into the named replicated job's pods, containers by name, later managers last") {
  auto set = realised(R"(  runtimePatches:
  - manager: platform.example.com/team
    trainingRuntimeSpec:
      template:
        metadata: {labels: {team: ml}}
        spec:
          replicatedJobs:
          - name: node
            template:
              spec:
                template:
                  spec:
                    serviceAccountName: trainer-sa
                    nodeSelector: {pool: gpu}
                    containers: [{name: node, volumeMounts: [{name: data, mountPath: /data}]}]
                    volumes: [{name: data, emptyDir: {}}]
  - manager: kueue.x-k8s.io/manager
    trainingRuntimeSpec:
      template:
        spec:
          replicatedJobs:
          - name: node
            template: {spec: {template: {spec: {nodeSelector: {pool: a100}}}}}
)");
  const auto& spec = *set.pods[0].pod.find("spec");
  CHECK(spec.get_string("serviceAccountName") == "trainer-sa");
  CHECK(spec.at_path({"nodeSelector", "pool"})->as_string() == "a100");
  const auto& c = spec.find("containers")->as_array().front();
  CHECK(c.get_string("image") == "pytorch/pytorch:runtime"); // merged, not replaced
  CHECK(c.find("volumeMounts")->as_array().front().get_string("mountPath") == "/data");
  CHECK(label_of(set.pods[0].pod, "team") == "ml");
  CHECK(refusal("  runtimePatches:\n  - manager: x\n    trainingRuntimeSpec:\n      template:\n        spec:\n"
                "          replicatedJobs: [{name: launcher}]\n")
            .find("launcher") != std::string::npos);
}

TEST_CASE("an initializer step gets STORAGE_URI, its env and its secret as envFrom") {
  auto set = realised("  initializer:\n    dataset:\n"
                      "      storageUri: s3://bucket/data\n      env: [{name: REGION, value: eu}]\n"
                      "      secretRef: {name: s3-creds}\n",
                      init_runtime);
  REQUIRE(set.pods.size() == 2);
  const auto& init = set.pods[0].pod;
  CHECK(set.pods[0].rjob == "dataset-initializer");
  CHECK(env_of(init, "STORAGE_URI") == "s3://bucket/data");
  CHECK(env_of(init, "REGION") == "eu");
  const auto& c = init.at_path({"spec", "containers"})->as_array().front();
  CHECK(c.find("envFrom")->as_array().front().at_path({"secretRef", "name"})->as_string() == "s3-creds");
  REQUIRE(set.rjobs[1].after.size() == 1);
  CHECK(set.rjobs[1].after[0].name == "dataset-initializer");
}

TEST_CASE("numbers that size work are bounded before anything is built") {
  CHECK(refusal("  trainer: {numNodes: 0}\n").find("spec.trainer.numNodes is 0") != std::string::npos);
  CHECK(refusal("  trainer: {numNodes: 100000000000}\n").find("use 1 to 10000") != std::string::npos);
  CHECK(refusal("  trainer: {numProcPerNode: many}\n").find("numProcPerNode") != std::string::npos);
  CHECK(refusal("  activeDeadlineSeconds: -5\n").find("activeDeadlineSeconds") != std::string::npos);
  CHECK(refusal("  trainer: {numNodes: 10000}\n", R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: wide}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - {name: node, replicas: 3, template: {spec: {template: {spec: {containers: [{name: node}]}}}}}
)").find("more than 20000 pods") != std::string::npos);
}

TEST_CASE("a TrainJob's name must be an RFC 1035 label short enough for its pods' hostnames") {
  CHECK(trainer::name_problem("Mnist").has_value());
  CHECK(trainer::name_problem("1job").has_value());
  CHECK_FALSE(trainer::name_problem("mnist-2").has_value());
  std::string long_name(60, 'a');
  auto job = trainer::decode_train_job(object_of(yaml(trainjob("  trainer: {numNodes: 2}\n", long_name))));
  REQUIRE(job);
  auto rt = trainer::decode_runtime(yaml(torch_runtime));
  auto set = trainer::realise(*job, *rt, {});
  REQUIRE_FALSE(set);
  CHECK(set.err().message.find("longer than 63") != std::string::npos);
}
