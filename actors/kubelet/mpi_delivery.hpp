// The MPI launcher's `kubectl-delivery` init container under the process runtime. Pure.
//
// An MPIJob's launcher (actors/training/pod_builder.cpp) gets an init container from the
// kubeflow/kubectl-delivery image: it copies kubectl into an emptyDir at $TARGET_DIR
// (/opt/kube), where /etc/mpi/kubexec.sh — mpirun's remote-shell agent — runs
// `/opt/kube/kubectl exec <worker> -- /bin/sh -c "..."`. That image has no command the process
// runtime could run (images are not pulled), so the runtime does the step itself: it gives the
// container a command that writes a `kubectl` of its own into $TARGET_DIR.
//
// That kubectl knows one verb, `exec POD [-c C|--container C] [-i] [-t] -- CMD...`: under the
// process runtime every pod is a process on this host (same network, same file system outside
// the volumes), so "in the worker" means "here": CMD runs on the host, from the launcher's
// container, with HOSTNAME set to the worker's name and a TMPDIR of the worker's own (next to
// the kubectl, so it goes with the launcher pod). A POD the job's hostfile
// (/etc/mpi/hostfile) does not list is refused as kubectl refuses a missing pod.
#pragma once

#include "actors/kubelet/process_spec.hpp"

#include <string>
#include <vector>

namespace kozmo::kubelet {

// An init container named "kubectl-delivery" without a command, with TARGET_DIR in its env:
// the MPI operator's delivery step.
bool is_mpi_kubectl_delivery(const container_run_spec& c);

// The command the process runtime runs for it: /bin/sh -c writing $TARGET_DIR/kubectl.
std::vector<std::string> mpi_kubectl_delivery_command();

// The text of the `kubectl` it writes (a POSIX shell script).
std::string mpi_kubectl_shim();

} // namespace kozmo::kubelet
