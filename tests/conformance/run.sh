#!/usr/bin/env bash
# Conformance: Kozmo's client, watch actor and simulated kubelet against a real Kubernetes
# v1.20.2 control plane (kube-apiserver + etcd from ../shared/tools/real-k8s), started fresh for
# this run and always stopped at the end.
#
# Usage: run.sh REPO CLIENT_APISERVER_TEST ACTORS_WATCH_TEST KOZMO
#   The two tests switch to the real cluster when KOZMO_CONFORMANCE_KUBECONFIG is set.
# Env: KOZMO_CONFORMANCE_KEEP=1  keep the run directory (logs, PKI) for a look afterwards
set -uo pipefail

REPO=${1:?usage: run.sh REPO CLIENT_APISERVER_TEST ACTORS_WATCH_TEST KOZMO}
CLIENT_TEST=${2:?client_apiserver test executable}
WATCH_TEST=${3:?actors_watch test executable}
KOZMO=${4:?kozmo executable}

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
conformance_init conformance
conformance_find_tools "$REPO"
KUBELET_PID=""
conformance_make_rundir kozmo-conformance --child KUBELET_PID kubelet.pid --show-logs kube-apiserver.log kubelet.log

# ---- the control plane ----
conformance_start_control_plane
ok "kube-apiserver v1.20.2 is up ($(grep -o 'https://[^ ]*' "$RUNDIR/start.log" | head -n1))"

# ---- the C++ test executables, switched to the real cluster ----
run_test() { # name executable
  local name=$1 exe=$2 out rc
  log "running $name"
  out=$(KOZMO_CONFORMANCE_KUBECONFIG=$KC timeout 300 "$exe" -r compact 2>&1)
  rc=$?
  if [ $rc -eq 0 ]; then
    ok "$name: $(tail -n 1 <<<"$out")"
  else
    bad "$name (rc=$rc)" "$out"
  fi
}
run_test "client_apiserver against the real cluster" "$CLIENT_TEST"
run_test "actors_watch against the real cluster" "$WATCH_TEST"

# ---- the simulated kubelet against the real API server ----
eventually() { within 30 "$@"; } # eventually NAME PATTERN CMD...: within 30 s
# sim_pod NAME DURATION [EXIT_CODE]: a pod bound to conf-0 that the simulated kubelet runs.
sim_pod() {
  cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: $NS
  annotations:
    kozmo.io/sim-duration: "$2"
    kozmo.io/sim-pull-duration: "200ms"
$([ -n "${3:-}" ] && echo "    kozmo.io/sim-exit-code: \"$3\"")
spec:
  nodeName: conf-0
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
EOF
}
ready_heartbeat() { k get node conf-0 -o 'jsonpath={.status.conditions[?(@.type=="Ready")].lastHeartbeatTime}'; }
heartbeat_renewed() { # prints "renewed T" once the Ready heartbeat differs from $FIRST_HEARTBEAT
  local now
  now=$(ready_heartbeat)
  if [ -n "$now" ] && [ "$now" != "$FIRST_HEARTBEAT" ]; then echo "renewed $now"; else echo "still $now"; fi
}
pod_outcome() { k get pod "$1" -n "$NS" -o 'jsonpath={.status.phase}/{.status.containerStatuses[0].state.terminated.exitCode}'; }

kubelet_checks() {
  if ! eventually "node conf-0 registers Ready with 4 GPUs" '^True/4/4$' \
    k get node conf-0 -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}/{.status.capacity.nvidia\.com/gpu}/{.status.allocatable.nvidia\.com/gpu}'; then
    if ! kill -0 "$KUBELET_PID" 2>/dev/null; then
      wait "$KUBELET_PID"
      bad "kozmo kubelet keeps running" "it exited with status $?; its log (if any) follows"
      KUBELET_PID=""
    fi
    return
  fi
  FIRST_HEARTBEAT=$(ready_heartbeat)

  expect "create a pod bound to conf-0 that runs 2s" 'pod/ok-pod created' k create -f - <<<"$(sim_pod ok-pod 2s)"
  expect "create a pod that exits with code 3" 'pod/exit-3 created' k create -f - <<<"$(sim_pod exit-3 1s 3)"
  expect "create a pod that runs forever" 'pod/forever created' k create -f - <<<"$(sim_pod forever forever)"

  eventually "the 2s pod reaches Succeeded with exit code 0" '^Succeeded/0$' pod_outcome ok-pod
  eventually "the failing pod reaches Failed with exit code 3" '^Failed/3$' pod_outcome exit-3
  eventually "the kubelet posts the pod's Started event" 'Started' \
    k get events -n "$NS" --field-selector involvedObject.name=ok-pod -o 'jsonpath={.items[*].reason}'

  if eventually "the forever pod runs" '^Running/$' pod_outcome forever; then
    # kubectl waits for the DELETED event: the kubelet must stop the containers and remove the
    # pod (a real API server keeps a bound pod until then).
    expect "deleting the running pod completes" 'pod "forever" deleted' k delete pod forever -n "$NS" --timeout=30s
    expect_fail "the deleted pod is gone" 'NotFound' k get pod forever -n "$NS"
  fi

  # The kubelet renews its node's conditions every 10 s (a strategic merge patch of status).
  eventually "heartbeats renew the node's Ready condition" '^renewed' heartbeat_renewed

  kill -TERM "$KUBELET_PID"
  local rc=timeout _
  for _ in $(seq 1 50); do
    kill -0 "$KUBELET_PID" 2>/dev/null || { wait "$KUBELET_PID"; rc=$?; break; }
    sleep 0.2
  done
  if [ "$rc" = 0 ]; then ok "the kubelet stops on SIGTERM with status 0"; KUBELET_PID=""; else bad "the kubelet stops on SIGTERM with status 0" "status: $rc"; fi

  # Failed API calls the kubelet only logs (status patches, heartbeats, Events) show up here.
  local warnings
  warnings=$(grep -E ' (warning|error) |failed|could not' "$RUNDIR/kubelet.log")
  if [ -z "$warnings" ]; then ok "the kubelet logged no failed API calls"; else bad "the kubelet logged failed API calls" "$warnings"; fi
}

log "starting the simulated kubelet (kozmo kubelet --node-prefix conf)"
"$KOZMO" kubelet --kubeconfig "$KC" --nodes 1 --gpus-per-node 4 --node-prefix conf --log-level debug \
  >"$RUNDIR/kubelet.log" 2>&1 &
KUBELET_PID=$!
echo "$KUBELET_PID" >"$RUNDIR/kubelet.pid"
NS=conf-kubelet-$RANDOM
expect "a namespace for the kubelet's pods" "namespace/$NS created" k create namespace "$NS"
kubelet_checks
k delete namespace "$NS" --wait=false >/dev/null
finish
