#!/usr/bin/env bash
# End-to-end: Kozmo as an installed library. `meson install --destdir` puts libkozmo, the
# public face (include/kozmo) and kozmo.pc in a fresh prefix; the two host programs of examples/embed/ are
# built outside the source tree with nothing but `pkg-config --cflags --libs kozmo`, and run
# against `kozmo apiserver` with simulated GPU nodes: scheduler_only binds a gang with bind-info
# and reads the scheduler's cluster status through engine::inspect; training_only runs a GPU
# PyTorchJob (placed by scheduler_only) to Succeeded. (host_loop, which needs no cluster, runs in
# scripts/embed-examples.sh.)
# Usage: embed_e2e.sh PATH/TO/kozmo SOURCE_ROOT BUILD_ROOT
set -uo pipefail
KOZMO=${1:?usage: embed_e2e.sh PATH/TO/kozmo SOURCE_ROOT BUILD_ROOT}
SRC=${2:?source root}
BUILD=${3:?build root}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
e2e_init kozmo-embed-e2e 60
PIDS=()
cleanup_all() {
  local p
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  ((FAIL)) && tail -n 20 "$WORK"/*.out 2>/dev/null
  e2e_cleanup
}
trap cleanup_all EXIT

DEST=$WORK/dest
expect "meson install --destdir puts Kozmo in a fresh prefix" 'Installing' \
  meson install -C "$BUILD" --destdir "$DEST" --no-rebuild
PC=$(find "$DEST" -name kozmo.pc | head -n 1)
expect "kubectl-kozmo (the kubectl plugin) is installed as a link to kozmo beside it" '^kozmo$' \
  sh -c "readlink \"\$(find '$DEST' -name kubectl-kozmo | head -n 1)\""
expect "kozmo.pc is installed" 'kozmo.pc' echo "$PC"
export PKG_CONFIG_PATH=$(dirname "$PC") PKG_CONFIG_SYSROOT_DIR=$DEST
FLAGS=$(pkg-config --cflags --libs kozmo)
expect "pkg-config names the installed headers and library" "-I$DEST.*/include .*-lkozmo" echo "$FLAGS"
expect "the public headers include neither CAF, Beast nor simdjson" '^0$' \
  sh -c "grep -rlE '#include <(caf|boost|simdjson)|caf::' \"\$(find '$DEST' -type d -name include | head -n 1)\" | wc -l"
mkdir -p "$WORK/host"
for prog in scheduler_only training_only; do
  cp "$SRC/examples/embed/$prog.cpp" "$WORK/host/"
  # shellcheck disable=SC2086 # FLAGS is a list of flags
  expect "examples/embed/$prog.cpp builds out of tree with pkg-config alone" '^built$' \
    sh -c "cd '$WORK/host' && g++ $prog.cpp $FLAGS -o $prog 2>&1 && echo built"
done
LIBDIR=$(dirname "$(find "$DEST" -name 'libkozmo.so*' | head -n 1)")
export LD_LIBRARY_PATH=$LIBDIR
expect "the hosts load the installed libkozmo" "$LIBDIR/libkozmo.so" ldd "$WORK/host/scheduler_only"

# The cluster they run against: kozmo apiserver, two simulated 8-GPU nodes, Kozmo's CRDs.
e2e_start_apiserver_and_nodes 2 8
expect "Kozmo's CRDs are installed" 'pytorchjobs.kubeflow.org created' sh -c "'$KOZMO' crds | kubectl create --validate=false -f - 2>&1"

"$WORK/host/scheduler_only" "$KUBECONFIG" >"$WORK/scheduler_only.out" 2>&1 &
SCHED=$!
PIDS+=($SCHED)
"$WORK/host/training_only" "$KUBECONFIG" >"$WORK/training_only.out" 2>&1 &
TRAIN=$!
PIDS+=($TRAIN)
within 20 "scheduler_only starts" "scheduling pods with schedulerName kozmo" cat "$WORK/scheduler_only.out"
within 20 "training_only starts" "running training jobs" cat "$WORK/training_only.out"

for i in 0 1; do gpu_pod "g-$i" "$(printf '    kozmo.io/gang: g\n    kozmo.io/gang-members: "2x2"')" 2; done | k apply -f - >/dev/null
bound() {
  k get pods -o 'jsonpath={range .items[*]}{.metadata.name}{" "}{.spec.nodeName}{" "}{.metadata.annotations.hivedscheduler\.microsoft\.com/pod-bind-info}{"\n"}{end}' |
    awk 'index($1, "g-") == 1 && $2 != "" && $3 != "" { n++ } END { print n + 0 }'
}
within 20 "scheduler_only binds a 2x2 gang with bind-info" '^2$' bound
within 10 "scheduler_only reads the cluster status through engine::inspect" 'cluster status: HTTP 200' cat "$WORK/scheduler_only.out"

k create -f - >/dev/null <<EOF
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: train
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        metadata:
          annotations: {kozmo.io/sim-duration: "2s"}
        spec:
          containers:
          - name: pytorch
            image: kubeflowkatib/pytorch-mnist:v1beta1-45c5727
            resources: {limits: {nvidia.com/gpu: 2}}
    Worker:
      replicas: 1
      restartPolicy: OnFailure
      template:
        metadata:
          annotations: {kozmo.io/sim-duration: "2s"}
        spec:
          containers:
          - name: pytorch
            image: kubeflowkatib/pytorch-mnist:v1beta1-45c5727
            resources: {limits: {nvidia.com/gpu: 2}}
EOF
within 40 "training_only runs a GPU PyTorchJob to Succeeded" 'Succeeded=True' \
  k get pytorchjob train -o 'jsonpath={range .status.conditions[*]}{.type}={.status} {end}'

kill -TERM "$TRAIN" "$SCHED"
wait "$TRAIN"
expect "training_only stops cleanly on SIGTERM" '^0$' echo $?
within 10 "scheduler_only stops on SIGTERM" '^gone$' sh -c "kill -0 $SCHED 2>/dev/null || echo gone"

e2e_finish "embed e2e:"
