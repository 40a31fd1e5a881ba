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

e2e_start_local "$WORK/kc" "$WORK/kozmo.log"
within 30 "kozmo local serves kubectl" "node-1" k get nodes -o name
URL=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
api() { curl -sS --max-time 20 -o "$WORK/body" -w '%{http_code}' "$@"; }

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
