#!/usr/bin/env bash
# End-to-end: Kozmo's metrics as a real Prometheus (Debian's prometheus 2.42) scrapes them.
# `kozmo local` runs a GPU gang that binds, one that waits, a PyTorchJob and a TaskExecution;
# a `kozmo controller --leader-elect` (its scheduler on another schedulerName, so it leaves the
# pods alone) takes the Lease. Both texts pass `promtool check metrics`; Prometheus scrapes
# kozmo local's API port (TLS with the kubeconfig's CA, the kubeconfig's bearer token) and the
# controller's metrics address, and its HTTP API (/api/v1/query) answers what a user expects:
# the VC's used GPUs are the bound gang's, the waiting gang is counted with its reason, the job
# and the task are Succeeded, the controllers reconciled. Then every panel query of
# deploy/grafana/kozmo-dashboard.json runs against that Prometheus.
# Usage: prometheus_e2e.sh PATH/TO/kozmo [REPO]
set -uo pipefail
KOZMO=${1:?usage: prometheus_e2e.sh PATH/TO/kozmo [REPO]}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
REPO=${2:-$(cd "$HERE/../.." && pwd)}
for tool in prometheus promtool; do
  command -v "$tool" >/dev/null || { echo "1..0 # SKIP no $tool (Debian's prometheus package)"; exit 77; }
done
e2e_init kozmo-prometheus-e2e 60
PIDS=()
cleanup_all() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  ((FAIL)) && [ -f "$WORK/prometheus.log" ] && { echo "--- prometheus log (tail) ---"; tail -n 20 "$WORK/prometheus.log"; }
  e2e_cleanup
}
trap cleanup_all EXIT

e2e_start_local "$WORK/kubeconfig" "$WORK/kozmo.log" --nodes 2 --gpus-per-node 8
within 15 "the server answers kubectl" 'Server Version' k version
within 15 "the simulated nodes are Ready (16 GPUs)" 'node-1 +Ready' k get nodes

# ---- work a user would run ----------------------------------------------------------------------
gang() { # NAME PODS GPUS
  local i
  for i in $(seq 0 $(($2 - 1))); do
    gpu_pod "$1-$i" "$(printf '    kozmo.io/gang: %s\n    kozmo.io/gang-members: "%sx%s"' "$1" "$2" "$3")" "$3"
  done
}
{ gang fits 2 4; gang waits 2 8; } >"$WORK/gangs.yaml"
expect "a 2x4 gang and a 2x8 gang are created" 'pod/waits-1 created' k apply -f "$WORK/gangs.yaml"
within 30 "the 2x4 gang binds (8 of the 16 GPUs)" '^2$' sh -c "kubectl --cache-dir $WORK/cache get pods -o wide --no-headers | grep '^fits-' | grep -c node-"
within 30 "the 2x8 gang waits (8 GPUs left)" 'PodScheduled +False|FailedScheduling' k describe pod waits-0
expect "kubectl apply -f examples/pytorch-simple.yaml" 'created' k apply -f "$REPO/examples/pytorch-simple.yaml"
expect "kubectl apply -f examples/task-container.yaml" 'created' k apply -f "$REPO/examples/task-container.yaml"

# ---- a leader-elected controller beside it ------------------------------------------------------
k create namespace kozmo-system >/dev/null
printf 'leaderElection:\n  leaseDuration: 4s\n  renewDeadline: 3s\n  retryPeriod: 1s\nscheduler:\n  schedulerName: kozmo-standby\n' \
  >"$WORK/controller.yaml"
BASE=$(e2e_free_ports 3)
CONTROLLER_PORT=$BASE PROM_PORT=$((BASE + 2))
"$KOZMO" controller --config "$WORK/controller.yaml" --enable scheduler --leader-elect \
  --metrics-bind-address "127.0.0.1:$CONTROLLER_PORT" --health-probe-bind-address "127.0.0.1:$((BASE + 1))" \
  >"$WORK/kozmo-controller.log" 2>&1 &
PIDS+=($!)
within 20 "the controller takes the Lease" 'now leads' cat "$WORK/kozmo-controller.log"

# ---- promtool on the texts as served -------------------------------------------------------------
API=$(server_url)
API_HOSTPORT=${API#https://}
kcurl -sf "$API/metrics" >"$WORK/local.prom"
curl -sf "http://127.0.0.1:$CONTROLLER_PORT/metrics" >"$WORK/controller.prom"
for f in local controller; do
  expect "promtool check metrics passes on kozmo ${f/local/local\'s} text" '^clean$' \
    sh -c "promtool check metrics <'$WORK/$f.prom' 2>&1 && echo clean"
done
expect "the text has the new families" "$(printf '%s.*' kozmo_virtual_cluster_gpus kozmo_waiting_gangs)" \
  sh -c "grep -o '^# TYPE [a-z_]*' '$WORK/local.prom' | tr '\n' ' '"

# The controller's inspect address carries the cell map page too (docs/cell-map.md).
expect "kozmo controller serves the cell map page on its inspect address" 'cellmap\.js' \
  curl -sf "http://127.0.0.1:$CONTROLLER_PORT/ui/"
expect "and the map it reads there" '"virtualClusters":\[\{"name":"default"' \
  curl -sf "http://127.0.0.1:$CONTROLLER_PORT/v1/inspect/cellmap"

# ---- a real Prometheus scrapes both ---------------------------------------------------------------
kubectl config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$WORK/ca.crt"
kubectl config view --raw -o jsonpath='{.users[0].user.token}' >"$WORK/token"
cat >"$WORK/prometheus.yml" <<EOF
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
- job_name: kozmo-local
  scheme: https
  tls_config: {ca_file: $WORK/ca.crt}
  authorization: {type: Bearer, credentials_file: $WORK/token}
  static_configs: [{targets: ['$API_HOSTPORT']}]
- job_name: kozmo-controller
  static_configs: [{targets: ['127.0.0.1:$CONTROLLER_PORT']}]
EOF
expect "promtool check config accepts the scrape configuration" 'SUCCESS' promtool check config "$WORK/prometheus.yml"
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)

# promq EXPR: the result's values, space-separated ("empty" for none, "error: ..." on failure).
promq() {
  curl -s --get --data-urlencode "query=$1" "http://127.0.0.1:$PROM_PORT/api/v1/query" | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    print("error: no answer"); sys.exit()
if d.get("status") != "success":
    print("error:", d.get("error")); sys.exit()
r = d["data"]["result"]
print(" ".join(x["value"][1] for x in r) if r else "empty")'
}
within 30 "Prometheus scraped kozmo local (up == 1)" '^1$' promq 'up{job="kozmo-local"}'
within 10 "Prometheus scraped the controller (up == 1)" '^1$' promq 'up{job="kozmo-controller"}'

L='job="kozmo-local"'
within 20 "the default VC's used GPUs are the bound gang's 8" '^8$' promq "kozmo_virtual_cluster_gpus{$L,virtual_cluster=\"default\",state=\"used\"}"
expect "the default VC is guaranteed all 16" '^16$' promq "kozmo_virtual_cluster_gpus{$L,virtual_cluster=\"default\",state=\"guaranteed\"}"
expect "and has 8 free" '^8$' promq "kozmo_virtual_cluster_gpus{$L,virtual_cluster=\"default\",state=\"free\"}"
within 20 "one gang waits, counted once over the reasons" '^1$' promq "sum(kozmo_waiting_gangs{$L})"
expect "its reason is one of the fixed set" '^1$' \
  promq "sum(kozmo_waiting_gangs{$L,reason=~\"VirtualClusterFull|ClusterFull\"})"
expect "it waits because its VC is full (16 GPUs asked, 8 of the VC's left)" '^1$' \
  promq "kozmo_waiting_gangs{$L,virtual_cluster=\"default\",reason=\"VirtualClusterFull\"}"
within 20 "the bound gang's two pods are in the scheduling latency histogram" '^[2-9]' \
  promq "kozmo_scheduling_latency_seconds_count{$L}"
expect "their latency has a p99 (histogram_quantile)" '^[0-9.]+$' \
  promq "histogram_quantile(0.99, sum by (le) (kozmo_scheduling_latency_seconds_bucket{$L}))"
within 60 "the PyTorchJob counts as Succeeded" '^1$' promq "kozmo_training_jobs{$L,kind=\"PyTorchJob\",phase=\"Succeeded\"}"
expect "and in no other phase" '^1$' promq "sum(kozmo_training_jobs{$L,kind=\"PyTorchJob\"})"
within 60 "the TaskExecution counts as Succeeded" '^1$' promq "kozmo_task_executions{$L,phase=\"Succeeded\"}"
expect "and in no other phase" '^1$' promq "sum(kozmo_task_executions{$L})"
expect "the pytorchjob controller reconciled" '^[1-9]' promq "sum(controller_runtime_reconcile_total{$L,controller=\"pytorchjob\"})"
expect "the taskexecution controller's reconcile time is measured" '^[1-9]' \
  promq "controller_runtime_reconcile_time_seconds_count{$L,controller=\"taskexecution\"}"
within 20 "nothing is left in the taskexecution queue" '^0$' promq "workqueue_depth{$L,name=\"taskexecution\"}"
expect "API writes are counted by code and method" '^[1-9]' promq "sum(rest_client_requests_total{$L,method=\"POST\",code=~\"2..\"})"
expect "API latency by verb has GETs" '^[1-9]' promq "sum(rest_client_request_duration_seconds_count{$L,verb=\"GET\"})"
expect "the controller leads its Lease (leader_election_master_status)" '^1$' \
  promq 'leader_election_master_status{job="kozmo-controller",name="kozmo-controller"}'
expect "the controller took the Lease once" '^1$' promq 'kozmo_leader_transitions_total{job="kozmo-controller"}'
expect "kozmo local holds no Lease" '^empty$' promq "leader_election_master_status{$L}"
expect "relists are queryable (none expected)" '^(empty|0)' promq "sum(kozmo_watch_relists_total{$L})"

# ---- the Grafana dashboard ------------------------------------------------------------------------
DASH=$REPO/deploy/grafana/kozmo-dashboard.json
expect "the dashboard is JSON with panels" '^panels [1-9]' python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("panels", len(d["panels"]), d["title"])' "$DASH"
# Every panel's expr, with Grafana's interval variables put as Grafana would.
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["panels"]:
    for t in p.get("targets", []):
        print(p["title"] + "\t" + t["expr"].replace("$__rate_interval", "1m").replace("$__interval", "15s"))' \
  "$DASH" >"$WORK/exprs.tsv"
# Panels that must show data after the work above (the others may rightly be empty: no relist,
# no Lease in kozmo local).
KEY='GPUs per virtual cluster|Waiting gangs by reason|Scheduling latency|Reconcile time p99|Queue depth|API requests by code|API latency p99 by verb|Training jobs by phase|Tasks by phase'
n=0
while IFS=$'\t' read -r title expr; do
  n=$((n + 1))
  if grep -qE "^($KEY)$" <<<"$title"; then
    # NaN: a quantile whose series exist but saw nothing in the last minute.
    expect "dashboard panel \"$title\" returns data" '^([0-9.e+-]+|NaN)( |$)' promq "$expr"
  else
    expect "dashboard panel \"$title\" is a valid query" '^(empty|NaN|[0-9.e+-]+)' promq "$expr"
  fi
done <"$WORK/exprs.tsv"
expect "the dashboard has a query per panel (at least 12)" 'ok' sh -c "[ $n -ge 12 ] && echo ok || echo only $n"

e2e_finish prometheus
