#!/usr/bin/env bash
# Conformance: Kozmo's extender behind an UNMODIFIED kube-scheduler v1.20.2 (../shared/tools/
# real-k8s). The control plane starts without its own scheduler; this script runs kube-scheduler
# with a KubeSchedulerConfiguration whose extender is ours (filter, preempt, bind,
# nodeCacheCapable), creates two 4-GPU Nodes matching extender-cluster.yaml, and checks that:
#   - a gang of 2 pods x 2 GPUs is bound by kube-scheduler through the extender (spec.nodeName,
#     the bind-info and leaf-cell-isolation annotations, GPUs that do not overlap);
#   - a pod whose scheduling spec is malformed stays Pending with a FailedScheduling event
#     carrying the extender's message.
#
# With `controller`, the extender is `kozmo controller --enable scheduler` with a
# scheduler.extender section: kube-scheduler reaches it over HTTPS with a client certificate
# (its extender tlsConfig), and callers without one, or with one another CA signed, get 401.
#
# Usage: extender_run.sh REPO KOZMO_EXE [controller]
#   (runs `KOZMO_EXE extender --config F --kubeconfig KC --listen H:P`, or `KOZMO_EXE controller`)
# Env: KOZMO_CONFORMANCE_KEEP=1  keep the run directory (logs, PKI) for a look afterwards
set -uo pipefail

REPO=${1:?usage: extender_run.sh REPO EXTENDER_EXE [controller]}
EXTENDER=${2:?the kozmo executable}
MODE=${3:-extender}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)

source "$HERE/lib.sh"
conformance_init "$MODE-extender-conformance"
conformance_find_tools "$REPO"
# At exit stop.sh also stops the extender and kube-scheduler appended to RUNDIR/pids below (each
# only if it is still that program with RUNDIR in its command line).
conformance_make_rundir kozmo-extender-conformance --show-logs extender.log kube-scheduler.log

# ---- the control plane, without its own scheduler ----
conformance_start_control_plane
ok "kube-apiserver v1.20.2 is up"

# ---- the extender and kube-scheduler with the shipped configuration (lib.sh) ----
cp "$HERE/extender-cluster.yaml" "$RUNDIR/extender-cluster.yaml"
if [ "$MODE" = controller ]; then
  # A CA that signs the extender's serving certificate and kube-scheduler's client certificate,
  # and a stranger's self-signed client certificate.
  TLS=$RUNDIR/extender-pki
  mkdir -p "$TLS"
  newkey() { openssl ecparam -name prime256v1 -genkey -noout -out "$TLS/$1.key" 2>>"$TLS/openssl.log"; }
  issue() { # NAME CN EXTENSIONS
    newkey "$1"
    openssl req -new -key "$TLS/$1.key" -subj "/CN=$2" -out "$TLS/$1.csr" 2>>"$TLS/openssl.log" &&
      openssl x509 -req -in "$TLS/$1.csr" -CA "$TLS/ca.crt" -CAkey "$TLS/ca.key" -CAcreateserial -days 1 \
        -extfile <(printf '%s\n' "$3") -out "$TLS/$1.crt" 2>>"$TLS/openssl.log"
  }
  newkey ca && openssl req -x509 -new -key "$TLS/ca.key" -subj /CN=kozmo-extender-ca -days 1 -out "$TLS/ca.crt" 2>>"$TLS/openssl.log"
  issue server localhost $'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth'
  issue client kube-scheduler 'extendedKeyUsage=clientAuth'
  newkey stranger && openssl req -x509 -new -key "$TLS/stranger.key" -subj /CN=stranger -days 1 -out "$TLS/stranger.crt" 2>>"$TLS/openssl.log"
  if [ -s "$TLS/server.crt" ] && [ -s "$TLS/client.crt" ] && [ -s "$TLS/stranger.crt" ]; then ok "a CA, a serving and two client certificates"; else
    bad "a CA, a serving and two client certificates" "$(cat "$TLS/openssl.log")"
    finish
  fi
  conformance_free_ports 3
  EXT_PORT=$FREE_PORT METRICS_PORT=$((FREE_PORT + 1)) PROBE_PORT=$((FREE_PORT + 2))
  cat >"$RUNDIR/kozmo.yaml" <<EOF
scheduler:
  configFile: extender-cluster.yaml
  extender:
    bindAddress: 127.0.0.1:$EXT_PORT
    certFile: extender-pki/server.crt
    keyFile: extender-pki/server.key
    clientCAFile: extender-pki/ca.crt
EOF
  setsid "$EXTENDER" controller --kubeconfig "$KC" --config "$RUNDIR/kozmo.yaml" --enable scheduler \
    --metrics-bind-address "127.0.0.1:$METRICS_PORT" --health-probe-bind-address "127.0.0.1:$PROBE_PORT" \
    >"$RUNDIR/extender.out" 2>"$RUNDIR/extender.log" </dev/null &
  EXTENDER_PID=$!
  echo "kozmo $EXTENDER_PID" >>"$RUNDIR/pids"
  within 20 "kozmo controller answers /readyz on port $PROBE_PORT" '^ok$' curl -sS --max-time 2 "http://127.0.0.1:$PROBE_PORT/readyz"
  verb() { # CURL-ARGS...: the status of a filter request for a pod that asks for no GPU
    curl -sS --max-time 5 -o /dev/null -w '%{http_code}' --cacert "$TLS/ca.crt" "$@" -X POST \
      -d '{"Pod":{"metadata":{"name":"probe","namespace":"default","uid":"u-probe"},"spec":{"containers":[{"name":"c"}]}},"NodeNames":["gpu-node-a"]}' \
      "https://127.0.0.1:$EXT_PORT/v1/extender/filter" 2>&1
  }
  expect "the extender verbs answer 401 to a caller without a client certificate" '^401$' verb
  expect "the extender verbs answer 401 to a client certificate another CA signed" '^401$' \
    verb --cert "$TLS/stranger.crt" --key "$TLS/stranger.key"
  expect "a client certificate the CA signed is let through to the verb" '^200$' \
    verb --cert "$TLS/client.crt" --key "$TLS/client.key"
  plain=$(curl -sS --max-time 3 -o /dev/null -w '%{http_code}' -X POST -d '{}' "http://127.0.0.1:$EXT_PORT/v1/extender/filter" 2>&1)
  if [ "$plain" = 200 ]; then bad "plain HTTP gets no extender answer" "got 200"; else ok "plain HTTP gets no extender answer"; fi
  conformance_start_kube_scheduler "$REPO" "https://127.0.0.1:$EXT_PORT/v1/extender" "$TLS"
  ok "kube-scheduler v1.20.2 runs with the extender configuration and its client certificate"
  INSPECT_PORT=$METRICS_PORT
else
  conformance_start_extender "$EXTENDER" "$RUNDIR/extender-cluster.yaml"
  if [ "$(curl -sS --max-time 5 "http://127.0.0.1:$EXT_PORT/healthz")" = ok ]; then ok "the extender answers /healthz on port $EXT_PORT"; else bad "the extender answers /healthz"; fi
  conformance_start_kube_scheduler "$REPO"
  ok "kube-scheduler v1.20.2 runs with the extender configuration"
  INSPECT_PORT=$EXT_PORT
fi

# ---- two 4-GPU nodes (no kubelet: status is written on create) ----
gpu_node() {
  cat <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $1
  labels: {kubernetes.io/hostname: $1}
status:
  capacity: {cpu: "16", memory: 64Gi, pods: "110", nvidia.com/gpu: "4", hivedscheduler.microsoft.com/pod-scheduling-enable: "100"}
  allocatable: {cpu: "16", memory: 64Gi, pods: "110", nvidia.com/gpu: "4", hivedscheduler.microsoft.com/pod-scheduling-enable: "100"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: ready}
EOF
}
for n in gpu-node-a gpu-node-b; do
  out=$(k create -f - <<<"$(gpu_node "$n")")
  grep -q created <<<"$out" && ok "node $n created" || bad "node $n created" "$out"
done

# ---- a gang of two 2-GPU pods ----
gang_pod() { # name
  cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: default
  annotations:
    hivedscheduler.microsoft.com/pod-scheduling-spec: |
      virtualCluster: vc1
      priority: 10
      leafCellNumber: 2
      affinityGroup:
        name: default/gang
        members: [{podNumber: 2, leafCellNumber: 2}]
spec:
  schedulerName: kozmo-extender
  containers:
  - name: main
    image: busybox
    resources:
      limits: {nvidia.com/gpu: "2", hivedscheduler.microsoft.com/pod-scheduling-enable: "1"}
EOF
}
for p in gang-0 gang-1; do
  out=$(k create -f - <<<"$(gang_pod "$p")")
  grep -q created <<<"$out" || bad "pod $p created" "$out"
done

eventually() { within 45 "$@"; } # eventually NAME PATTERN CMD...: within 45 s
placement() { k get pod "$1" -o 'jsonpath={.spec.nodeName}|{.metadata.annotations.hivedscheduler\.microsoft\.com/pod-leaf-cell-isolation}'; }
bind_info() { k get pod "$1" -o 'jsonpath={.metadata.annotations.hivedscheduler\.microsoft\.com/pod-bind-info}'; }

if eventually "kube-scheduler binds gang-0 through the extender" '^gpu-node-[ab]\|[0-9]' placement gang-0 &&
  eventually "kube-scheduler binds gang-1 through the extender" '^gpu-node-[ab]\|[0-9]' placement gang-1; then
  p0=$(placement gang-0) p1=$(placement gang-1)
  for p in gang-0 gang-1; do
    info=$(bind_info "$p")
    if grep -q 'affinityGroupBindInfo' <<<"$info" && grep -q 'leafCellIsolation' <<<"$info"; then
      ok "$p carries the bind-info annotation"
    else
      bad "$p carries the bind-info annotation" "got: $info"
    fi
  done
  n0=${p0%%|*} n1=${p1%%|*} g0=${p0#*|} g1=${p1#*|}
  overlap=""
  if [ "$n0" = "$n1" ]; then
    for g in ${g0//,/ }; do [[ ",$g1," == *",$g,"* ]] && overlap+="$g "; done
  fi
  if [ -z "$overlap" ] && [ "$(tr ',' '\n' <<<"$g0" | wc -l)" = 2 ] && [ "$(tr ',' '\n' <<<"$g1" | wc -l)" = 2 ]; then
    ok "the gang's GPUs do not overlap (gang-0 $n0:[$g0], gang-1 $n1:[$g1])"
  else
    bad "the gang's GPUs do not overlap" "gang-0 $n0:[$g0], gang-1 $n1:[$g1]"
  fi
  eventually "kube-scheduler reports the pods Scheduled" 'Scheduled' \
    k get events --field-selector involvedObject.name=gang-1 -o 'jsonpath={.items[*].reason}'
fi

# ---- a pod whose scheduling spec cannot be read ----
bad_pod() {
  cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: bad-spec
  namespace: default
  annotations:
    hivedscheduler.microsoft.com/pod-scheduling-spec: "virtualCluster: vc1\nleafCellNumber: [oops\n"
spec:
  schedulerName: kozmo-extender
  containers:
  - name: main
    image: busybox
    resources:
      limits: {nvidia.com/gpu: "1", hivedscheduler.microsoft.com/pod-scheduling-enable: "1"}
EOF
}
out=$(k create -f - <<<"$(bad_pod)")
grep -q created <<<"$out" || bad "pod bad-spec created" "$out"
failed_scheduling() {
  k get events --field-selector involvedObject.name=bad-spec,reason=FailedScheduling -o 'jsonpath={.items[*].message}'
}
eventually "a malformed spec gives a FailedScheduling event with the extender's message" 'default/bad-spec' failed_scheduling
eventually "the extender posts a Warning event about the malformed spec" 'InvalidSchedulingSpec' \
  k get events --field-selector involvedObject.name=bad-spec -o 'jsonpath={.items[*].reason}'
node=$(k get pod bad-spec -o 'jsonpath={.status.phase}|{.spec.nodeName}')
if [ "$node" = "Pending|" ]; then ok "the pod with the malformed spec stays Pending and unbound"; else bad "the pod with the malformed spec stays Pending and unbound" "got: $node"; fi

# ---- the inspect API reflects the gang ----
groups=$(curl -sS --max-time 5 "http://127.0.0.1:$INSPECT_PORT/v1/inspect/affinitygroups/")
if grep -q 'default/gang' <<<"$groups"; then ok "/v1/inspect/affinitygroups/ lists the gang"; else bad "/v1/inspect/affinitygroups/ lists the gang" "$groups"; fi

# ---- the in-cluster example is accepted by the API server ----
out=$(k apply --dry-run=server -f "$REPO/deploy/scheduler/deployment.yaml")
if [ "$(grep -c 'server dry run' <<<"$out")" -ge 7 ]; then ok "deploy/scheduler/deployment.yaml passes a server-side dry run"; else
  bad "deploy/scheduler/deployment.yaml passes a server-side dry run" "$out"
fi

# ---- the extender stops cleanly on SIGTERM ----
kill -TERM "$EXTENDER_PID"
for _ in $(seq 1 50); do kill -0 "$EXTENDER_PID" 2>/dev/null || break; sleep 0.2; done
if kill -0 "$EXTENDER_PID" 2>/dev/null; then bad "the extender stops on SIGTERM"; else
  wait "$EXTENDER_PID" 2>/dev/null
  rc=$?
  if [ "$rc" = 0 ]; then ok "the extender stops on SIGTERM with status 0"; else bad "the extender stops on SIGTERM with status 0" "status $rc"; fi
fi
finish
