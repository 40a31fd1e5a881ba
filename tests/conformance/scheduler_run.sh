#!/usr/bin/env bash
# Conformance: `kozmo controller --enable scheduler` alone (direct mode, the setup of
# bench/controller_head_to_head.sh) on a real kube-apiserver v1.20.2 (../shared/tools/real-k8s),
# with a configuration derived from the GPU nodes. Its two pod watches (its own pods, and the
# pods other schedulers bound) read only what the scheduler needs and LIST in protobuf:
#   - both LISTs are answered in protobuf, and the pods read from them are the right ones: with 6
#     of node-a's 8 GPUs held by another scheduler's pod, two 4-GPU pods go to node-b and a third
#     waits (Unschedulable), where without the count it would have gone to node-a;
#   - after a kill -9 the restarted controller recovers its pods from their bind-info (read in
#     protobuf) and, once one of them is deleted, gives its GPUs to the waiting pod, on node-b.
#
# Usage: scheduler_run.sh REPO KOZMO
# Env: KOZMO_CONFORMANCE_KEEP=1  keep the run directory (logs) for a look afterwards
set -uo pipefail

REPO=${1:?usage: scheduler_run.sh REPO KOZMO}
KOZMO=${2:?the kozmo executable}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)

source "$HERE/lib.sh"
conformance_init scheduler-conformance
conformance_find_tools "$REPO"
conformance_make_rundir kozmo-scheduler-conformance --show-logs controller-1.log controller-2.log
conformance_start_control_plane
source "$RUNDIR/cluster.env"
ok "kube-apiserver v1.20.2 is up"

# ---- two 8-GPU nodes (no kubelet: status is written on create) ----
for n in node-a node-b; do
  out=$(k create -f - <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $n
  labels: {kubernetes.io/hostname: $n}
status:
  capacity: {cpu: "32", memory: 128Gi, pods: "110", nvidia.com/gpu: "8"}
  allocatable: {cpu: "32", memory: 128Gi, pods: "110", nvidia.com/gpu: "8"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: ready}
EOF
  )
  grep -q created <<<"$out" && ok "node $n created" || bad "node $n created" "$out"
done

pod() { # NAME SCHEDULER GPUS
  cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default}
spec:
  schedulerName: $2
  containers:
  - name: main
    image: busybox
    resources: {limits: {nvidia.com/gpu: "$3"}}
EOF
}
api() { curl -sS --max-time 10 --cacert "$K8S_CA_FILE" --cert "$K8S_ADMIN_CERT_FILE" --key "$K8S_ADMIN_KEY_FILE" "$@"; }

# Another scheduler's pod holding 6 of node-a's GPUs (bound as kube-scheduler binds).
expect "another scheduler's 6-GPU pod is created" 'created' k create -f - <<<"$(pod other-6 other-scheduler 6)"
expect "and bound to node-a" '"status": ?"Success"' api -X POST -H 'Content-Type: application/json' \
  -d '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"other-6"},"target":{"apiVersion":"v1","kind":"Node","name":"node-a"}}' \
  "$K8S_APISERVER/api/v1/namespaces/default/pods/other-6/binding"

# ---- the controller ----
conformance_free_ports 2
METRICS_PORT=$FREE_PORT PROBE_PORT=$((FREE_PORT + 1))
start_controller() { # LOG
  setsid "$KOZMO" controller --kubeconfig "$KC" --enable scheduler \
    --metrics-bind-address "127.0.0.1:$METRICS_PORT" --health-probe-bind-address "127.0.0.1:$PROBE_PORT" \
    >"$RUNDIR/$1" 2>&1 </dev/null &
  CTRL_PID=$!
  echo "kozmo $CTRL_PID" >>"$RUNDIR/pids"
}
start_controller controller-1.log
within 30 "kozmo controller --enable scheduler answers /readyz" '^ok$' curl -s --max-time 2 "http://127.0.0.1:$PROBE_PORT/readyz"
expect "its own pods are listed in protobuf" 'spec.schedulerName=kozmo\) listed [0-9]+ objects .*\(protobuf\)' \
  cat "$RUNDIR/controller-1.log"
expect "other schedulers' pods are listed in protobuf, the 6-GPU pod among them" \
  'spec.schedulerName!=kozmo.*\) listed 1 objects .*\(protobuf\)' cat "$RUNDIR/controller-1.log"

for p in k1 k2 k3; do
  expect "Kozmo's 4-GPU pod $p is created" 'created' k create -f - <<<"$(pod "$p" kozmo 4)"
  [ "$p" = k3 ] || within 30 "$p is bound" 'node-' k get pod "$p" -o 'jsonpath={.spec.nodeName}'
done
expect "both go to node-b: node-a has 2 GPUs left" '^node-b node-b$' \
  k get pod k1 k2 -o 'jsonpath={.items[0].spec.nodeName} {.items[1].spec.nodeName}'
within 30 "the third waits, Unschedulable" '^False Unschedulable' \
  k get pod k3 -o 'jsonpath={.status.conditions[?(@.type=="PodScheduled")].status} {.status.conditions[?(@.type=="PodScheduled")].reason}'
expect "k3 is not bound" '^$' k get pod k3 -o 'jsonpath={.spec.nodeName}'

# ---- kill -9 and restart: recovery from bind-info read in protobuf ----
disown "$CTRL_PID" 2>/dev/null
kill -9 "$CTRL_PID" 2>/dev/null
wait "$CTRL_PID" 2>/dev/null
for _ in $(seq 1 200); do (exec 3<>"/dev/tcp/127.0.0.1/$PROBE_PORT") 2>/dev/null || break; sleep 0.05; done
start_controller controller-2.log
within 30 "the restarted controller answers /readyz" '^ok$' curl -s --max-time 2 "http://127.0.0.1:$PROBE_PORT/readyz"
expect "it recovers its two bound pods from their bind-info" '2 group\(s\) recovered from 2 bound pod' \
  cat "$RUNDIR/controller-2.log"
expect "the recovered pods were listed in protobuf" 'spec.schedulerName=kozmo\) listed 3 objects .*\(protobuf\)' \
  cat "$RUNDIR/controller-2.log"
sleep 2
expect "k3 still waits after the restart (the recovered pods hold node-b)" '^$' k get pod k3 -o 'jsonpath={.spec.nodeName}'
expect "k1 is deleted" 'deleted' k delete pod k1 --grace-period=0 --force
within 30 "k3 gets k1's GPUs on node-b" '^node-b$' k get pod k3 -o 'jsonpath={.spec.nodeName}'
expect "neither log shows an error" '^0$' sh -c "grep -Ec '^[0-9:.]+ (error|critical) ' $RUNDIR/controller-1.log $RUNDIR/controller-2.log | awk -F: '{ s += \$NF } END { print s }'"
finish
