// The MPI ML policy (deepspeed, mlx, OpenMPI runtimes), as the peer's plugin sets it up
// (jobset.hpp's rule 11):
//   - node counts: the `node` replicated job runs numNodes pods, or numNodes - 1 (at least 1) when
//     runLauncherAsNode makes the launcher node 0;
//   - slots per node: trainer.numProcPerNode, else the runtime's, else (when that is 1) the GPUs
//     per node if more than one;
//   - ConfigMap `<job>-mpi-hostfile` (key `hostfile`): one line `<host>.<job> slots=N` per node,
//     the launcher first when it is a node; mounted read-only at /etc/mpi in the launcher;
//   - Secret `<job>-mpi-ssh-auth` (kubernetes.io/ssh-auth, immutable): an ECDSA P-521 key pair made
//     once per job (ssh_keys.hpp), mounted at sshAuthMountPath as id_rsa, id_rsa.pub and
//     authorized_keys in the launcher's and the nodes' `node` containers;
//   - the launcher starts once the nodes are ready (an implicit dependsOn node Ready), so mpirun
//     finds their sshd listening.
#pragma once

#include "actors/trainer/jobset.hpp"

#include <string>

namespace kozmo::trainer {

struct ssh_key_pair {
  std::string private_pem; // "-----BEGIN EC PRIVATE KEY-----..."
  std::string public_line; // "ecdsa-sha2-nistp521 AAAA...\n"
};

std::string mpi_hostfile_name(const std::string& job);
std::string mpi_secret_name(const std::string& job);

// Pods of the `node` replicated job under the MPI policy.
int mpi_node_pods(const train_job& job, const runtime_spec& rt);
// Slots per node.
std::string mpi_slots(const train_job& job, const runtime_spec& rt, int gpus_per_node);

json::value mpi_hostfile(const train_job& job, const jobset& set, const std::string& slots);
json::value mpi_secret(const train_job& job, const ssh_key_pair& keys);
// Volumes and mounts on a pod of the launcher (`launcher` true) or of the nodes.
void mpi_attach(json::value& pod_spec, const train_job& job, const runtime_spec& rt, bool launcher);

} // namespace kozmo::trainer
