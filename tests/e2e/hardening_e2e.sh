#!/usr/bin/env bash
# Kozmo tried as an attacker and as a crash would (issue "Hardened", its numbered findings):
# each section starts from what a user or a hostile peer does and checks what they get back,
# then that normal work still runs. Usage: hardening_e2e.sh KOZMO [SOURCE_ROOT]
set -uo pipefail
KOZMO=${1:?usage: hardening_e2e.sh KOZMO}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init kozmo-hardening 120

# ---- 1. a flood of idle connections under a low open-file limit -------------------------------
# The hard limit is 1024 too, so `kozmo local` cannot raise its soft one: it must bound what it
# accepts, retry accepts that fail, and serve again once the flood is gone.
flood_connections() { # PORT N HOLD_SECONDS: N idle connections held, then closed; prints how many
  python3 - "$@" <<'EOF'
import resource, socket, sys, time
port, n, hold = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
socks = []
for _ in range(n):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        socks.append(s)
    except OSError:
        break
time.sleep(hold)
for s in socks:
    s.close()
print(len(socks))
EOF
}
# kubectl that gives up fast: a server that stopped accepting fails a check in seconds.
kq() { kubectl --cache-dir "$WORK/cache" --request-timeout=3s "$@"; }
server_port() { sed -n 's#.*server: *https\?://127.0.0.1:\([0-9]*\).*#\1#p' "$KUBECONFIG" | head -1; }

export KUBECONFIG=$WORK/kc1
prlimit --nofile=1024:1024 "$KOZMO" local --port 0 --write-kubeconfig "$WORK/kc1" >>"$WORK/kozmo-flood.log" 2>&1 &
KOZMO_PID=$!
for _ in $(seq 1 200); do [ -s "$WORK/kc1" ] && break; sleep 0.1; done
within 30 "kozmo local under ulimit -n 1024 serves kubectl" "node-1" k get nodes -o name
held=$(flood_connections "$(server_port)" 1124 2)
if [ "${held:-0}" -ge 1000 ]; then ok "1,124 idle connections were opened ($held connected)"; else
  bad "1,124 idle connections were opened" "connected: ${held:-none}"; fi
within 20 "after the flood kubectl is served again" "node-1" kq get nodes -o name
if grep -qE "cannot accept a connection|connections open, the limit" "$WORK/kozmo-flood.log"; then
  ok "the log says the server met its limit or the file table's, once per burst"
else bad "the log says the server met its limit or the file table's" "$(tail -5 "$WORK/kozmo-flood.log")"; fi
if [ "$(grep -cE "cannot accept a connection|connections open, the limit" "$WORK/kozmo-flood.log")" -le 10 ]; then
  ok "... and not once per refused connection"
else bad "... and not once per refused connection" "$(grep -cE "cannot accept|the limit" "$WORK/kozmo-flood.log") lines"; fi
expect "a pod created after the flood is bound" "created" \
  k run after-flood --image=busybox:1.36 --restart=Never
within 30 "... and runs to its end" "Succeeded|Running" k get pod after-flood -o jsonpath='{.status.phase}'
kill "$KOZMO_PID" 2>/dev/null; wait "$KOZMO_PID" 2>/dev/null; KOZMO_PID=""

# Soft limit 1024 under a hard one of 8192, as a shell gives: kozmo local raises its own.
rm -f "$WORK/kc"
prlimit --nofile=1024:8192 "$KOZMO" local --port 0 --write-kubeconfig "$WORK/kc" >"$WORK/kozmo.log" 2>&1 &
KOZMO_PID=$!
export KUBECONFIG=$WORK/kc
for _ in $(seq 1 200); do [ -s "$WORK/kc" ] && break; sleep 0.1; done
within 30 "kozmo local serves kubectl" "node-1" k get nodes -o name
expect "it raised its open-file soft limit to the hard limit" "Max open files +8192 +8192" cat "/proc/$KOZMO_PID/limits"
URL=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
api() { kcurl -sS --max-time 20 -o "$WORK/body" -w '%{http_code}' "$@"; }

# ---- 4. nobody unauthenticated writes, and no pod runs on the host unless the operator chose it ----
code=$(curl -sk --max-time 10 -o "$WORK/body" -w '%{http_code}' -X POST -H 'Origin: http://evil.example' \
  --data-binary '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"evil","annotations":{"kozmo.io/runtime":"process"}},"spec":{"containers":[{"name":"c","image":"busybox","command":["touch","'"$WORK"'/pwned"]}]}}' \
  "$URL/api/v1/namespaces/default/pods")
if [ "$code" = 401 ]; then ok "a web page's no-cors POST without credentials is 401 Unauthorized"
else bad "a web page's no-cors POST without credentials is 401" "HTTP $code $(head -c 300 "$WORK/body")"; fi
if curl -s --max-time 5 -o /dev/null "http://${URL#https://}/version"; then bad "plain HTTP is not served" "it answered"
else ok "plain HTTP is not served (TLS only)"; fi
code=$(api -X POST --data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"nocsrf"}}' \
  -H 'Content-Type:' "$URL/api/v1/namespaces/default/configmaps")
if [ "$code" = 415 ]; then ok "an authenticated write without a JSON, YAML or protobuf Content-Type is 415"
else bad "a write without a known Content-Type is 415" "HTTP $code $(head -c 300 "$WORK/body")"; fi
code=$(api -H 'Host: attacker.example' "$URL/api/v1/namespaces")
if [ "$code" = 400 ] && grep -q "Host header" "$WORK/body"; then ok "Host: attacker.example is refused (DNS rebinding)"
else bad "Host: attacker.example is refused" "HTTP $code $(head -c 300 "$WORK/body")"; fi
expect_fail "GET /api/v1/pods without credentials is 401" "401" \
  curl -sk --max-time 5 -f -o /dev/null -w '%{http_code}' "$URL/api/v1/pods"
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: on-host\n  annotations: {kozmo.io/runtime: process}\nspec:\n  restartPolicy: Never\n  containers:\n  - {name: c, image: busybox, command: [touch, %s/pwned]}\n' "$WORK" |
  k apply -f - >/dev/null
within 20 "a pod asking for the process runtime on a simulated kozmo local waits, saying why" \
  "did not allow it.*--allow-process-runtime" \
  k get pod on-host -o jsonpath='{.status.containerStatuses[0].state.waiting.message}'
if [ -e "$WORK/pwned" ]; then bad "... and its command did not run on the host" "$WORK/pwned exists"
else ok "... and its command did not run on the host"; fi

# ---- 2. a YAML alias bomb through server-side apply ---------------------------------------------
bomb='apiVersion: v1
kind: ConfigMap
metadata: {name: bomb}
data: {k: v}
a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]
a1: &a1 [*a0,*a0,*a0,*a0,*a0,*a0,*a0,*a0,*a0,*a0]
a2: &a2 [*a1,*a1,*a1,*a1,*a1,*a1,*a1,*a1,*a1,*a1]
a3: &a3 [*a2,*a2,*a2,*a2,*a2,*a2,*a2,*a2,*a2,*a2]
a4: &a4 [*a3,*a3,*a3,*a3,*a3,*a3,*a3,*a3,*a3,*a3]
a5: &a5 [*a4,*a4,*a4,*a4,*a4,*a4,*a4,*a4,*a4,*a4]
a6: &a6 [*a5,*a5,*a5,*a5,*a5,*a5,*a5,*a5,*a5,*a5]'
code=$(api -X PATCH -H 'Content-Type: application/apply-patch+yaml' --data-binary "$bomb" \
  "$URL/api/v1/namespaces/default/configmaps/bomb?fieldManager=e2e")
if [ "$code" = 400 ] && grep -q "excessive aliasing" "$WORK/body"; then
  ok "a YAML alias bomb (10^7 nodes from $(printf %s "$bomb" | wc -c) bytes) is refused: 400, excessive aliasing"
else bad "a YAML alias bomb is refused with 400" "HTTP $code" "$(head -c 300 "$WORK/body")"; fi
expect_fail "... and nothing was stored" "NotFound|not found" k get configmap bomb
expect "an ordinary server-side apply still works" "serverside-applied|configured|created" \
  sh -c "printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\ndata: {k: v}\n' | kubectl apply --server-side -f -"

# ---- 3. one number that sizes memory or work ---------------------------------------------------
pytorchjob() { # NAME WORKER-REPLICAS [EXTRA-CONTAINER-YAML]
  cat <<EOF
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: $1}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: $2
      template:
        metadata: {annotations: {kozmo.io/sim-duration: forever}}
        spec:
          containers:
          - name: pytorch
            image: busybox:1.36
${3:-}
EOF
}
expect_fail "a PyTorchJob with a billion workers is refused at admission, naming the limit" \
  "replicas.*less than or equal to 10000" sh -c "$(declare -f pytorchjob); pytorchjob huge 1000000000 | kubectl apply -f -"
expect_fail "... and so is one with 2^32+1 (it was truncated to 1 and Succeeded)" \
  "less than or equal to 10000" sh -c "$(declare -f pytorchjob); pytorchjob wrap 4294967297 | kubectl apply -f -"
rss_before=$(ps -o rss= -p "$KOZMO_PID")
pytorchjob big 3000 | k apply -f - >/dev/null
within 30 "a 3,000-worker job starts creating its pods" "^[1-9]" \
  sh -c "kubectl get pods -l training.kubeflow.org/job-name=big --no-headers 2>/dev/null | wc -l"
k delete pytorchjob big --wait=false >/dev/null
sleep 3
made=$(k get pods -l training.kubeflow.org/job-name=big --no-headers 2>/dev/null | wc -l)
sleep 3
later=$(k get pods -l training.kubeflow.org/job-name=big --no-headers 2>/dev/null | wc -l)
if [ "$later" -le "$made" ] && [ "$made" -lt 3000 ]; then
  ok "deleting it stops the creates: $made pods 3 s after the delete, $later 3 s later"
else bad "deleting it stops the creates" "3 s after: $made, 6 s after: $later"; fi
within 60 "... and its pods go with it" "^0$" \
  sh -c "kubectl get pods -l training.kubeflow.org/job-name=big --no-headers 2>/dev/null | wc -l"
rss_after=$(ps -o rss= -p "$KOZMO_PID")
if [ "$rss_after" -lt $((rss_before + 400000)) ]; then ok "kozmo local's memory stayed bounded (${rss_before} -> ${rss_after} KiB)"
else bad "kozmo local's memory stayed bounded" "${rss_before} -> ${rss_after} KiB"; fi

# ---- 7. smaller: what kube-apiserver or the controller refuses, with words a user can act on -----
pytorchjob negative 1 '            resources: {limits: {nvidia.com/gpu: -4}}' | k apply -f - >/dev/null
within 20 "a PyTorchJob asking for -4 GPUs fails with a condition naming the field" \
  "nvidia.com/gpu\] is -4: must be a whole number of GPUs" \
  k get pytorchjob negative -o jsonpath='{.status.conditions[?(@.type=="Failed")].message}'
expect "... and a Warning Event says the same" "InvalidSpec" \
  k get events --field-selector involvedObject.name=negative -o custom-columns=R:.reason --no-headers
pytorchjob badport 1 '            ports: [{containerPort: 70000}]' | k apply -f - >/dev/null
within 30 "a PyTorchJob whose pods the API server refuses says so in a ReplicaFailure condition" \
  "Error creating pod badport-worker-0: .*containerPort.*must be between 1 and 65535" \
  k get pytorchjob badport -o jsonpath='{.status.conditions[?(@.type=="ReplicaFailure")].message}'
expect "... and in a FailedCreatePod Event" "FailedCreatePod" \
  k get events --field-selector involvedObject.name=badport -o custom-columns=R:.reason --no-headers
gpu_pod_yaml() { printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  containers:\n  - name: c\n    image: busybox:1.36\n    resources: %s\n' "$1" "$2"; }
expect_fail "a pod asking for half a GPU is refused (it used to be scheduled)" "must be an integer" \
  sh -c "$(declare -f gpu_pod_yaml); gpu_pod_yaml half '{limits: {nvidia.com/gpu: \"0.5\"}}' | kubectl create -f -"
expect_fail "a pod whose GPU request differs from its limit is refused" "must be equal to nvidia.com/gpu limit" \
  sh -c "$(declare -f gpu_pod_yaml); gpu_pod_yaml differ '{limits: {nvidia.com/gpu: 2}, requests: {nvidia.com/gpu: 1}}' | kubectl create -f -"
code=$(api -X POST -H 'Content-Type: application/json' "$URL/api/v1/namespaces/default/pods" \
  -d '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"typed"},"spec":{"containers":[{"name":"c","image":"busybox","resources":{"limits":[1]}}]}}')
if [ "$code" = 422 ] && grep -q 'resources.limits' "$WORK/body"; then ok "resources.limits: [1] is a 422 naming the field"
else bad "resources.limits: [1] is a 422 naming the field" "HTTP $code $(head -c 300 "$WORK/body")"; fi
k create configmap renamed --from-literal=k=v >/dev/null
expect_fail "a JSON patch replacing /metadata/name is refused with kube-apiserver's words" \
  "the name of the object \(other\) does not match the name on the URL \(renamed\)" \
  k patch configmap renamed --type=json -p '[{"op":"replace","path":"/metadata/name","value":"other"}]'
code=$(api -X POST -H 'Content-Type: application/json' "$URL/apis/kozmo.io/v1alpha1/resourcepools" \
  -d '{"apiVersion":"kozmo.io/v1alpha1","kind":"ResourcePool","metadata":{"name":"huge"},"spec":{"quota":9223372036854775808}}')
if [ "$code" = 422 ] && grep -q 'less than or equal to 1000000' "$WORK/body"; then
  ok "a ResourcePool quota of 2^63 is a 422 naming the limit (it was accepted, then treated as absent)"
else bad "a ResourcePool quota of 2^63 is a 422" "HTTP $code $(head -c 300 "$WORK/body")"; fi

# ---- and normal work still runs ----------------------------------------------------------------
pytorchjob fine 2 | sed 's/forever/2s/' | k apply -f - >/dev/null
within 60 "after all of that, an ordinary PyTorchJob succeeds" "True" \
  k get pytorchjob fine -o jsonpath='{.status.conditions[?(@.type=="Succeeded")].status}'

kill "$KOZMO_PID" 2>/dev/null; wait "$KOZMO_PID" 2>/dev/null; KOZMO_PID=""

# ---- 4b. the process runtime where the operator allowed it: as nobody when kozmo is root --------
e2e_start_local "$WORK/kc-proc" "$WORK/kozmo-proc.log" --allow-process-runtime
within 30 "kozmo local --allow-process-runtime serves kubectl" "node-1" k get nodes -o name
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: whoami\n  annotations: {kozmo.io/runtime: process}\nspec:\n  restartPolicy: Never\n  containers:\n  - {name: c, image: busybox, command: [id, -u]}\n' |
  k apply -f - >/dev/null
within 30 "a pod that opts in runs as a process" "Succeeded" k get pod whoami -o jsonpath='{.status.phase}'
if [ "$(id -u)" = 0 ]; then
  expect "... as nobody, not as root" "^$(id -u nobody)$" k logs whoami
else
  expect "... as this user" "^$(id -u)$" k logs whoami
fi
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: simulated\nspec:\n  restartPolicy: Never\n  containers:\n  - {name: c, image: busybox, command: [id, -u]}\n' |
  k apply -f - >/dev/null
within 30 "a pod without the annotation is simulated (no log of a real process)" "Succeeded" \
  k get pod simulated -o jsonpath='{.status.phase}'
kill "$KOZMO_PID" 2>/dev/null; wait "$KOZMO_PID" 2>/dev/null; KOZMO_PID=""

# ---- 5. no over-commit: the kubelet admits as a real one does; a restart keeps pods' time -------
P5=$(e2e_free_ports 1)
start5() { "$KOZMO" local --port "$P5" --data-dir "$WORK/data5" --write-kubeconfig "$WORK/kc5" >>"$WORK/kozmo-5.log" 2>&1 &
  KOZMO_PID=$!; for _ in $(seq 1 200); do [ -s "$WORK/kc5" ] && break; sleep 0.1; done; }
rm -f "$WORK/kc5"; start5
export KUBECONFIG=$WORK/kc5
within 30 "kozmo local with a data dir serves kubectl" "node-1" k get nodes -o name
bound_pod() { printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  annotations: {kozmo.io/sim-duration: "%s"}\nspec:\n  nodeName: %s\n  restartPolicy: Never\n  containers:\n  - name: c\n    image: busybox:1.36\n    resources: {limits: {nvidia.com/gpu: %s}}\n' "$@"; }
bound_pod six forever node-0 6 | k apply -f - >/dev/null
within 20 "a pod holding 6 of node-0's 8 GPUs runs" "Running" k get pod six -o jsonpath='{.status.phase}'
bound_pod four forever node-0 4 | k apply -f - >/dev/null
within 20 "a pod bound to node-0 asking 4 more GPUs is Failed with the kubelet's reason" "Failed/OutOfnvidia.com/gpu" \
  k get pod four -o jsonpath='{.status.phase}/{.status.reason}'
expect "... its message says what was short" "requested: 4, used: 6, capacity: 8" \
  k get pod four -o jsonpath='{.status.message}'
expect "... and a Warning Event says so" "OutOfnvidia.com/gpu" \
  k get events --field-selector involvedObject.name=four -o custom-columns=R:.reason --no-headers
bound_pod slow 40s node-1 2 | k apply -f - >/dev/null
within 20 "a 40 s pod runs on node-1" "Running" k get pod slow -o jsonpath='{.status.phase}'
started=$(k get pod slow -o jsonpath='{.status.containerStatuses[0].state.running.startedAt}')
sleep 2
kill -9 "$KOZMO_PID"; wait "$KOZMO_PID" 2>/dev/null
start5
within 30 "after kill -9 and a restart, kozmo local serves again" "node-1" k get nodes -o name
sleep 2
expect "the running pod kept its startedAt (it does not start over)" "^$started$" \
  k get pod slow -o jsonpath='{.status.containerStatuses[0].state.running.startedAt}'
expect "the GPUs it holds are still counted: node-0 refuses 4 more" "OutOfnvidia.com/gpu" \
  sh -c "$(declare -f bound_pod); bound_pod again forever node-0 4 | kubectl apply -f - >/dev/null; sleep 3; kubectl get pod again -o jsonpath='{.status.reason}'"
kill "$KOZMO_PID" 2>/dev/null; wait "$KOZMO_PID" 2>/dev/null; KOZMO_PID=""

# ---- 6. kozmo extender: loopback unless secured -------------------------------------------------
PIDS=()
e2e_start_apiserver_and_nodes 1 8
cat >"$WORK/hived.yaml" <<'EOF'
physicalCluster:
  cellTypes:
    V100-NODE: {childCellType: V100, childCellNumber: 8, isNodeLevel: true}
  physicalCells:
  - {cellType: V100-NODE, cellAddress: node-0}
virtualClusters:
  default: {virtualCells: [{cellType: V100-NODE, cellNumber: 1}]}
EOF
"$KOZMO" extender --config "$WORK/hived.yaml" --kubeconfig "$KUBECONFIG" >"$WORK/kozmo-extender.log" 2>&1 &
EXT_PID=$!
within 20 "kozmo extender without --listen serves /healthz on 127.0.0.1:9096" "ok" \
  curl -sS --max-time 2 http://127.0.0.1:9096/healthz
expect "... and says it listens on loopback" "listening on 127.0.0.1:9096" cat "$WORK/kozmo-extender.log"
other_ip=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -vE '^(127\.|$|.*:)' | head -1)
if [ -n "$other_ip" ]; then
  expect_fail "... and not on $other_ip" "refused|Failed to connect|Couldn't connect" \
    curl -sS --max-time 2 "http://$other_ip:9096/healthz"
fi
kill "$EXT_PID" 2>/dev/null; wait "$EXT_PID" 2>/dev/null
printf 'webServerAddress: ":9096"\n' >>"$WORK/hived.yaml"
expect_fail "HiveD's webServerAddress ':9096' without TLS is refused, saying how to secure it" \
  "reachable from other hosts.*--client-ca-file.*--insecure" \
  timeout 20 "$KOZMO" extender --config "$WORK/hived.yaml" --kubeconfig "$KUBECONFIG"
for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done

e2e_finish hardening
