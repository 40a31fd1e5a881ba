#include "actors/kubelet/mpi_delivery.hpp"

namespace kozmo::kubelet {

bool is_mpi_kubectl_delivery(const container_run_spec& c) {
  if (!c.init || c.name != "kubectl-delivery" || !c.command.empty())
    return false;
  for (const auto& e : c.env)
    if (e.name == "TARGET_DIR")
      return true;
  return false;
}

std::string mpi_kubectl_shim() {
  return R"(#!/bin/sh
# kubectl for an MPI launcher under kozmo's process runtime (written by its kubectl-delivery step).
# Pods are processes on this host, so `kubectl exec POD -- CMD` runs CMD here as POD.
if [ "$1" != exec ]; then
  echo "kubectl (kozmo process runtime): only 'exec POD -- CMD' is provided, not '$1'" >&2
  exit 1
fi
shift
pod=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case $1 in
    -c|--container|-n|--namespace) shift ;;
    -*) ;;
    *) [ -z "$pod" ] && pod=$1 ;;
  esac
  shift
done
[ "$1" = "--" ] && shift
if [ -z "$pod" ] || [ $# -eq 0 ]; then
  echo "error: kubectl exec needs a pod and a command after --" >&2
  exit 1
fi
if ! grep -q "^$pod[ :]" /etc/mpi/hostfile 2>/dev/null; then
  echo "Error from server (NotFound): pods \"$pod\" not found" >&2
  exit 1
fi
# A pod has a /tmp of its own (mpirun's daemons keep their session directories there): one per
# worker in this kubectl's volume, which goes with the launcher pod.
TMPDIR=$(dirname "$0")/tmp/$pod
mkdir -p "$TMPDIR" || exit 1
HOSTNAME=$pod
export HOSTNAME TMPDIR
exec "$@"
)";
}

std::vector<std::string> mpi_kubectl_delivery_command() {
  // The shim goes through a quoted here-document, so nothing in it is expanded on the way.
  std::string script = "set -e\nmkdir -p \"$TARGET_DIR\"\ncat > \"$TARGET_DIR/kubectl\" <<'KOZMO_KUBECTL_SHIM'\n" +
                       mpi_kubectl_shim() +
                       "KOZMO_KUBECTL_SHIM\nchmod 0755 \"$TARGET_DIR/kubectl\"\n"
                       "echo \"kubectl for kubexec.sh delivered to $TARGET_DIR (kozmo process runtime: exec runs on this host)\"\n";
  return {"/bin/sh", "-c", std::move(script)};
}

} // namespace kozmo::kubelet
