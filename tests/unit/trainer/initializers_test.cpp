// Claims and initializers (initializers.hpp's rules 9 and 10): the shared claim, what mounts it,
// the copilot fetching file:// and s3://, and hf:// refused at once with what to do.
#include "fixtures.hpp"

using namespace trainer_test;

namespace {

const json::value& container(const json::value& pod) { return pod.at_path({"spec", "containers"})->as_array().front(); }

std::string mount_of(const json::value& pod) {
  const auto* m = container(pod).find("volumeMounts");
  return m ? m->as_array().front().get_string("name") + "@" + m->as_array().front().get_string("mountPath") : "";
}

std::string claim_of(const json::value& pod) {
  const auto* v = pod.at_path({"spec", "volumes"});
  return v ? v->as_array().front().at_path({"persistentVolumeClaim", "claimName"})->as_string() : "";
}

} // namespace

TEST_CASE("an initializer gets a shared claim mounted at /workspace in its pod and in the trainer's") {
  world w(trainjob("  initializer: {dataset: {storageUri: 'file:///srv/data'}}\n  trainer: {numNodes: 2}\n"), init_runtime);
  w.step();
  REQUIRE(w.claims.count("initializer-mnist"));
  const auto& claim = w.claims["initializer-mnist"];
  CHECK(claim.at_path({"metadata", "ownerReferences"})->as_array().front().get_string("uid") == "uid-mnist");
  CHECK(json::scalar_text(*claim.at_path({"spec", "resources", "requests", "storage"})) == "10Gi");
  const auto& init = w.pods.at("mnist-dataset-initializer-0-0");
  CHECK(mount_of(init) == "initializer@/workspace");
  CHECK(claim_of(init) == "initializer-mnist");
  w.phase("mnist-dataset-initializer-0-0", "Succeeded");
  w.step();
  REQUIRE(w.pods.count("mnist-node-0-1"));
  CHECK(mount_of(w.pods.at("mnist-node-0-1")) == "initializer@/workspace");
  CHECK(claim_of(w.pods.at("mnist-node-0-1")) == "initializer-mnist");
  w.step();
  CHECK(w.claims.size() == 1); // created once
}

TEST_CASE("on kozmo local an initializer without a command fetches with the copilot, S3 endpoint from its env") {
  world w(trainjob("  initializer:\n    dataset:\n      storageUri: s3://bucket/mnist/\n"
                   "      env: [{name: ENDPOINT, value: 'http://127.0.0.1:4569'}]\n"),
          init_runtime);
  w.opt.native_initializers = true;
  w.step();
  const auto& c = container(w.pods.at("mnist-dataset-initializer-0-0"));
  CHECK(json::strings_of(c.find("command")) ==
        std::vector<std::string>{"kozmo", "copilot", "download", "--input-path", "/workspace", "--input",
                                 "dataset=s3://bucket/mnist/", "--s3-endpoint", "http://127.0.0.1:4569"});
}

TEST_CASE("on kozmo local an hf:// initializer fails the job at once, saying what to use instead") {
  world w(trainjob("  initializer: {dataset: {storageUri: 'hf://tatsu-lab/alpaca'}}\n"), init_runtime);
  w.opt.native_initializers = true;
  w.step();
  CHECK(w.condition("Failed") == "True/InitializerNotSupported");
  CHECK(w.message("Failed").find("hf://") != std::string::npos);
  CHECK(w.message("Failed").find("file://") != std::string::npos);
  CHECK(w.pods.empty());
}

TEST_CASE("a runtime's volumeClaimPolicies become one claim per template, kept after the job when Retain") {
  const char* runtime = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-distributed}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      volumeClaimPolicies:
      - retentionPolicy: {whenDeleted: Retain}
        templates:
        - metadata: {name: checkpoints}
          spec: {accessModes: [ReadWriteMany], resources: {requests: {storage: 1Gi}}}
      replicatedJobs:
      - name: node
        template:
          spec:
            template:
              spec:
                containers: [{name: node, volumeMounts: [{name: checkpoints, mountPath: /ckpt}]}]
)";
  world w(trainjob(""), runtime);
  w.step();
  REQUIRE(w.claims.count("checkpoints-mnist"));
  CHECK_FALSE(w.claims["checkpoints-mnist"].at_path({"metadata", "ownerReferences"}));
  CHECK(claim_of(w.pods.at("mnist-node-0-0")) == "checkpoints-mnist");
}

TEST_CASE("a TrainJob with a dataset initializer needs a runtime that has one") {
  world w(trainjob("  initializer: {dataset: {storageUri: 'file:///srv/data'}}\n"));
  w.step();
  CHECK(w.condition("Failed") == "True/InvalidSpec");
  CHECK(w.message("Failed").find("must have a dataset-initializer job") != std::string::npos);
}

TEST_CASE("the automatic claim's size must be a quantity, else the job fails saying how to write it") {
  auto spec = std::string("  initializer: {dataset: {storageUri: 'file:///srv/data'}}\n");
  auto job = trainjob(spec);
  job.replace(job.find("  uid:"), 0, "  annotations: {kozmo.io/initializer-storage: lots}\n");
  world w(job, init_runtime);
  w.step();
  CHECK(w.condition("Failed") == "True/InvalidSpec");
  CHECK(w.message("Failed").find("quantity such as 10Gi") != std::string::npos);
  CHECK(w.claims.empty());
}
