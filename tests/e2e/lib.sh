# shellcheck shell=bash
# Shared scaffolding for the end-to-end scripts (kubectl_e2e.sh, scheduler_e2e.sh,
# training_e2e.sh), which drive `kozmo local` with the real kubectl.
# Sourced, not run:  source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# A script sets KOZMO (the kozmo executable), then calls
#   e2e_init NAME [TAIL_LINES]                WORK=/tmp/NAME.XXXXXX and the EXIT trap
#   e2e_start_local KUBECONFIG LOG ARGS...    `kozmo local --port 0 ARGS...` in the background
# and uses ok/bad/e2e_finish, k (kubectl on $KUBECONFIG), expect, expect_fail, within.

PASS=0 FAIL=0
ok() { PASS=$((PASS + 1)); echo "ok   - $1"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL - $1"; shift; printf '       %s\n' "$@"; }
# e2e_finish [PREFIX]: prints "[PREFIX ]N passed, M failed" and exits 0 only when nothing failed.
e2e_finish() { echo "${1:+$1 }$PASS passed, $FAIL failed"; ((FAIL == 0)); exit $?; }

# e2e_init NAME [TAIL_LINES]: a fresh WORK directory, removed at exit. At exit the `kozmo local`
# in KOZMO_PID and a background `kubectl -w` in WATCH_PID (when set) are stopped, and on a failure
# the last TAIL_LINES (default 80) lines of WORK/kozmo*.log are shown.
E2E_TAIL_LINES=80
e2e_init() {
  WORK=$(mktemp -d "/tmp/${1:?e2e_init NAME}.XXXXXX")
  E2E_TAIL_LINES=${2:-80}
  KOZMO_PID="" WATCH_PID=""
  trap e2e_cleanup EXIT
}
e2e_cleanup() {
  [ -n "${KOZMO_PID:-}" ] && kill "$KOZMO_PID" 2>/dev/null && wait "$KOZMO_PID" 2>/dev/null
  [ -n "${WATCH_PID:-}" ] && kill "$WATCH_PID" 2>/dev/null
  if ((FAIL)); then echo "--- kozmo local log (tail) ---"; tail -n "$E2E_TAIL_LINES" "$WORK"/kozmo*.log; fi
  rm -rf "$WORK"
}

# e2e_start_local KUBECONFIG LOG ARGS...: starts `$KOZMO local --port 0 ARGS...` (a free port,
# written to KUBECONFIG; output appended to LOG), sets KOZMO_PID, waits up to 20 s for the
# kubeconfig (less if kozmo exits) and exports KUBECONFIG.
e2e_start_local() {
  local kubeconfig=$1 logfile=$2 _
  shift 2
  rm -f "$kubeconfig"
  "$KOZMO" local --port 0 "$@" --write-kubeconfig "$kubeconfig" >>"$logfile" 2>&1 &
  KOZMO_PID=$!
  for _ in $(seq 1 200); do
    [ -s "$kubeconfig" ] && break
    kill -0 "$KOZMO_PID" 2>/dev/null || break
    sleep 0.1
  done
  export KUBECONFIG=$kubeconfig
}

# e2e_start_apiserver_and_nodes NODES GPUS: `kozmo apiserver` on a free port and `kozmo kubelet`
# with NODES simulated nodes of GPUS GPUs against it (logs WORK/kozmo-apiserver.log and
# WORK/kozmo-kubelet.log); their pids are appended to PIDS, WORK/kubeconfig is written and
# exported as KUBECONFIG, and it returns once the nodes are Ready (a failed check otherwise).
e2e_start_apiserver_and_nodes() {
  local nodes=${1:?NODES} gpus=${2:?GPUS} url="" _
  rm -f "$WORK/kubeconfig"
  "$KOZMO" apiserver --port 0 --write-kubeconfig "$WORK/kubeconfig" >"$WORK/kozmo-apiserver.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 100); do
    url=$(sed -n 's/^kozmo apiserver: serving at //p' "$WORK/kozmo-apiserver.log")
    [ -n "$url" ] && [ -s "$WORK/kubeconfig" ] && break
    sleep 0.1
  done
  export KUBECONFIG=$WORK/kubeconfig
  "$KOZMO" kubelet --nodes "$nodes" --gpus-per-node "$gpus" >"$WORK/kozmo-kubelet.log" 2>&1 &
  PIDS+=($!)
  within 20 "$nodes simulated GPU nodes register" "^$nodes$" \
    sh -c "kubectl get nodes --no-headers 2>/dev/null | grep -c Ready"
}

# e2e_free_ports N: prints a port P such that P..P+N-1 are free on 127.0.0.1, below Linux's
# ephemeral range (32768 and up), where clients' own connections would take them meanwhile.
e2e_free_ports() {
  local n=${1:?N} p i free _
  for _ in $(seq 1 200); do
    p=$((20000 + RANDOM % (32768 - 20000 - n)))
    free=1
    for ((i = 0; i < n; i++)); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$((p + i))") 2>/dev/null; then free=0; break; fi
    done
    ((free)) && { echo "$p"; return 0; }
  done
  return 1
}

# gpu_pod NAME ANNOTATION-YAML GPUS: a pod for Kozmo's GPU scheduler that runs until deleted;
# ANNOTATION-YAML is extra annotation lines indented by four spaces (may be empty).
gpu_pod() {
  cat <<EOF
---
apiVersion: v1
kind: Pod
metadata:
  name: $1
  annotations:
    kozmo.io/sim-duration: forever
$2
spec:
  schedulerName: kozmo
  restartPolicy: Never
  containers:
  - name: main
    image: busybox:1.36
    resources:
      limits:
        nvidia.com/gpu: $3
EOF
}

# kcurl ARGS...: curl as kubectl would call the server of $KUBECONFIG: its CA, and the bearer
# token `kozmo local` and `kozmo apiserver` put in the kubeconfig they write.
kcurl() {
  local ca="$KUBECONFIG.ca.crt" token
  [ -s "$ca" ] || kubectl config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' |
    base64 -d >"$ca"
  token=$(kubectl config view --raw -o jsonpath='{.users[0].user.token}')
  curl --cacert "$ca" -H "Authorization: Bearer $token" "$@"
}
# server_url: the server of $KUBECONFIG.
server_url() { kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}'; }

# k ARGS...: kubectl on $KUBECONFIG.
k() { kubectl --cache-dir "$WORK/cache" --request-timeout=20s "$@"; }

# expect NAME PATTERN CMD...: CMD succeeds and its output (stderr included) matches PATTERN (grep -E).
expect() {
  local name=$1 pattern=$2; shift 2
  local out; out=$("$@" 2>&1); local rc=$?
  if [ $rc -eq 0 ] && grep -qE -- "$pattern" <<<"$out"; then ok "$name"; else bad "$name" "rc=$rc" "$out"; fi
}
# expect_fail NAME PATTERN CMD...: CMD fails and its output matches PATTERN.
expect_fail() {
  local name=$1 pattern=$2; shift 2
  local out; out=$("$@" 2>&1); local rc=$?
  if [ $rc -ne 0 ] && grep -qE -- "$pattern" <<<"$out"; then ok "$name"; else bad "$name" "rc=$rc" "$out"; fi
}
# within SECONDS NAME PATTERN CMD...: CMD's output matches PATTERN within SECONDS.
within() {
  local secs=$1 name=$2 pattern=$3; shift 3
  local out i
  for i in $(seq 1 $((secs * 2))); do
    out=$("$@" 2>&1); grep -qE -- "$pattern" <<<"$out" && { ok "$name"; return 0; }
    sleep 0.5
  done
  bad "$name" "wanted /$pattern/, last output: $out"
  return 1
}
