// The MPI policy (mpi.hpp): node counts with the launcher as node 0, the hostfile, the SSH Secret
// from keys the caller makes, the mounts, and the launcher starting once the nodes are ready.
#include "fixtures.hpp"

using namespace trainer_test;

namespace {

const char* deepspeed = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-distributed}
spec:
  mlPolicy:
    numNodes: 1
    mpi: {numProcPerNode: 1, mpiImplementation: OpenMPI, sshAuthMountPath: /home/mpiuser/.ssh, runLauncherAsNode: true}
  template:
    spec:
      successPolicy: {operator: All, targetReplicatedJobs: [launcher]}
      replicatedJobs:
      - name: launcher
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node, image: ds, command: [mpirun]}]}}}
      - name: node
        template:
          spec: {template: {spec: {containers: [{name: node, image: ds, command: [sshd]}]}}}
)";

std::vector<std::string> mounts(const json::value& pod) {
  std::vector<std::string> out;
  for (const auto& m : pod.at_path({"spec", "containers"})->as_array().front().find("volumeMounts")->as_array())
    out.push_back(m.get_string("name") + "@" + m.get_string("mountPath"));
  return out;
}

} // namespace

TEST_CASE("an MPI job with the launcher as node 0 runs numNodes - 1 node pods and lists all in the hostfile") {
  world w(trainjob("  trainer:\n    numNodes: 3\n    resourcesPerNode: {limits: {nvidia.com/gpu: 4}}\n"), deepspeed);
  w.keys = trainer::ssh_key_pair{"-----BEGIN EC PRIVATE KEY-----\nx\n-----END EC PRIVATE KEY-----\n", "ecdsa-sha2-nistp521 AAAA\n"};
  w.step();
  REQUIRE(w.config_maps.count("mnist-mpi-hostfile"));
  CHECK(w.config_maps["mnist-mpi-hostfile"].at_path({"data", "hostfile"})->as_string() ==
        "mnist-launcher-0-0.mnist slots=4\nmnist-node-0-0.mnist slots=4\nmnist-node-0-1.mnist slots=4\n");
  REQUIRE(w.secret);
  CHECK(w.secret->get_string("type") == "kubernetes.io/ssh-auth");
  CHECK(w.secret->get_bool("immutable"));
  CHECK(w.secret->at_path({"metadata", "name"})->as_string() == "mnist-mpi-ssh-auth");
  // The nodes first; the launcher once they are ready.
  CHECK(w.pods.size() == 2);
  CHECK(w.pods.count("mnist-node-0-1"));
  CHECK(mounts(w.pods.at("mnist-node-0-0")) == std::vector<std::string>{"mpi-ssh-auth@/home/mpiuser/.ssh"});
  w.all("Running");
  w.step();
  REQUIRE(w.pods.count("mnist-launcher-0-0"));
  const auto& launcher = w.pods.at("mnist-launcher-0-0");
  CHECK(mounts(launcher) == std::vector<std::string>{"mpi-ssh-auth@/home/mpiuser/.ssh", "mpi-hostfile@/etc/mpi"});
  CHECK(w.env("mnist-launcher-0-0", "OMPI_MCA_orte_default_hostfile") == "/etc/mpi/hostfile");
  CHECK(w.env("mnist-launcher-0-0", "OMPI_MCA_orte_set_default_slots") == "4");
}

TEST_CASE("an MPI job asks its caller for SSH keys once, and creates the Secret with them") {
  world w(trainjob(""), deepspeed);
  w.step();
  CHECK(w.last.needs_ssh_keys);
  CHECK_FALSE(w.secret);
  w.keys = trainer::ssh_key_pair{"priv", "pub"};
  w.step();
  REQUIRE(w.secret);
  CHECK(w.secret->at_path({"stringData", "ssh-publickey"})->as_string() == "pub");
  w.keys.reset();
  w.step();
  CHECK_FALSE(w.last.needs_ssh_keys);
}

TEST_CASE("an MPI job is done when its launcher is, and the nodes' sshd is stopped and counted nowhere") {
  world w(trainjob(""), deepspeed);
  w.keys = trainer::ssh_key_pair{"priv", "pub"};
  w.step();
  w.all("Running");
  w.step();
  w.phase("mnist-launcher-0-0", "Succeeded");
  w.step();
  CHECK(w.condition("Complete") == "True/AllJobsCompleted");
  CHECK_FALSE(w.pods.count("mnist-node-0-0"));
  CHECK(*w.jobs("launcher") == trainer::jobs_status{"launcher", 0, 1, 0, 0, 0});
  CHECK(*w.jobs("node") == trainer::jobs_status{"node", 0, 0, 0, 0, 0});
}
