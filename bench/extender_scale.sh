#!/usr/bin/env bash
# Extender bench: Kozmo's extender behind an unmodified kube-scheduler v1.20.2 and kube-apiserver
# (../shared/tools/real-k8s, as in tests/conformance/extender_run.sh), at scale. Creates NODES
# Nodes of 8 GPUs (no kubelets: pods are bound, never run) and GANGS gangs of 4 pods x 2 GPUs
# with one `kubectl create -f`, and prints how long until kube-scheduler has bound every pod
# through the extender. Prints figures, asserts nothing; not part of the test suite.
#
#   bench/extender_scale.sh BUILD_DIR            (env NODES=500 GANGS=500; GANGS <= NODES)
#   KOZMO_CONFORMANCE_KEEP=1 keeps the run directory (extender.log, kube-scheduler.log)
#
# The first run builds the control plane (~8 min, cached afterwards).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(cd "$HERE/.." && pwd -P)
BUILD=${1:?usage: extender_scale.sh BUILD_DIR}
EXTENDER=$(cd "$BUILD" && pwd -P)/kozmo
NODES=${NODES:-500}
GANGS=${GANGS:-500}
source "$REPO/tests/conformance/lib.sh"
conformance_init extender-scale
conformance_find_tools "$REPO"
conformance_make_rundir kozmo-extender-scale --show-logs extender.log kube-scheduler.log
conformance_start_control_plane
{
  echo "physicalCluster:"
  echo "  cellTypes:"
  echo "    V100-NODE: {childCellType: V100, childCellNumber: 8, isNodeLevel: true}"
  echo "  physicalCells:"
  for i in $(seq 0 $((NODES-1))); do echo "  - {cellType: V100-NODE, cellAddress: gpu-node-$i}"; done
  echo "virtualClusters:"
  echo "  vc1:"
  echo "    virtualCells: [{cellType: V100-NODE, cellNumber: $NODES}]"
} > "$RUNDIR/cluster.yaml"
conformance_start_extender "$EXTENDER" "$RUNDIR/cluster.yaml"
conformance_start_kube_scheduler "$REPO"
{
  for i in $(seq 0 $((NODES-1))); do cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-$i
  labels: {kubernetes.io/hostname: gpu-node-$i}
status:
  capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8", hivedscheduler.microsoft.com/pod-scheduling-enable: "100"}
  allocatable: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8", hivedscheduler.microsoft.com/pod-scheduling-enable: "100"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: ready}
EOF
  done
} > "$RUNDIR/nodes.yaml"
k create -f "$RUNDIR/nodes.yaml" | tail -1
{
  for g in $(seq 0 $((GANGS-1))); do for p in 0 1 2 3; do cat <<EOF
---
apiVersion: v1
kind: Pod
metadata:
  name: g$g-$p
  namespace: default
  annotations:
    hivedscheduler.microsoft.com/pod-scheduling-spec: |
      virtualCluster: vc1
      priority: 10
      leafCellNumber: 2
      affinityGroup:
        name: default/g$g
        members: [{podNumber: 4, leafCellNumber: 2}]
spec:
  schedulerName: kozmo-extender
  containers:
  - name: main
    image: busybox
    resources:
      limits: {nvidia.com/gpu: "2", hivedscheduler.microsoft.com/pod-scheduling-enable: "1"}
EOF
  done; done
} > "$RUNDIR/pods.yaml"
sleep 2
t0=$(date +%s.%N)
k create -f "$RUNDIR/pods.yaml" | tail -1
t1=$(date +%s.%N)
echo "extender bench: $NODES nodes x 8 GPUs, $GANGS gangs of 4x2"
echo "  kubectl create of $((GANGS*4)) pods:  $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b - a}') s"
want=$((GANGS*4))
for i in $(seq 1 600); do
  n=$(k get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .)
  if [ "$n" -ge "$want" ]; then break; fi
  sleep 0.5
done
t2=$(date +%s.%N)
echo "  first create -> all bound:  $(awk -v a="$t0" -v b="$t2" 'BEGIN{printf "%.1f", b - a}') s ($n/$want bound)"
errors=$(grep -c '^E' "$RUNDIR/kube-scheduler.log" || true)
echo "kube-scheduler logged $errors error line(s) (retries, bind timeouts)"
finish
