#!/usr/bin/env bash
# End-to-end: what the GPU scheduler decides on its own reaches the user as Events on the pods
# (`kubectl describe pod`): a lazy preemption, and a running gang downgraded after a restart on
# a configuration whose virtual cluster shrank. `kozmo local` on the scenario clusters of
# tests/unit/scheduler_scenarios (the same steps as preemption_lazy.yaml and reconfiguration.yaml).
# Usage: scheduler_notices_e2e.sh PATH/TO/kozmo
set -uo pipefail
KOZMO=${1:?usage: scheduler_notices_e2e.sh PATH/TO/kozmo}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
CLUSTERS=$(cd "$HERE/../unit/scheduler_scenarios/clusters" && pwd)
e2e_init kozmo-notices-e2e 80
eventually() { within 30 "$@"; }

# pod NAME VC PRIORITY GPUS [EXTRA-ANNOTATION-LINES]: a pod of team VC that runs until deleted.
pod() {
  gpu_pod "$1" "$(printf '    kozmo.io/virtual-cluster: %s\n    kozmo.io/priority: "%s"' "$2" "$3")${5:+
$5}" "$4"
}
start() { # LOG-NAME CLUSTER-FILE [ARGS...]
  local name=$1 cluster=$2
  shift 2
  e2e_start_local "$WORK/kubeconfig" "$WORK/kozmo-$name.log" --cluster "$CLUSTERS/$cluster" "$@"
  eventually "kozmo local ($name, $cluster) answers kubectl" 'Server Version' k version
}
stop() { kill "$KOZMO_PID"; wait "$KOZMO_PID" 2>/dev/null; KOZMO_PID=; }
node_of() { k get pod "$1" -o 'jsonpath={.spec.nodeName}'; }

# --- A lazy preemption: team-a owns one node; a priority-5 gang needs team-a's quota while a
# priority-1 gang with lazy preemption holds it. The low gang keeps running, as opportunistic.
start lazy v100_small_vcs.yaml
pod low team-a 1 8 '    kozmo.io/lazy-preemption: "true"' >"$WORK/low.yaml"
expect "a lazy-preemptible team-a pod is created" 'pod/low created' k apply -f "$WORK/low.yaml"
eventually "it runs on 0.0.0.1" '^0\.0\.0\.1$' node_of low
pod high team-a 5 8 >"$WORK/high.yaml"
expect "a higher-priority team-a pod is created" 'pod/high created' k apply -f "$WORK/high.yaml"
eventually "the higher-priority pod is bound to another node" '^0\.0\.0\.[2-4]$' node_of high
eventually "kubectl describe pod low shows the lazy preemption" \
  "LazyPreempted .*lazily preempted: group 'default/high' \(priority 5\) needed its virtual cells" k describe pod low
eventually "the lazily preempted pod keeps running where it was" '^0\.0\.0\.1 Running$' \
  k get pod low -o 'jsonpath={.spec.nodeName} {.status.phase}'
stop

# --- A downgrade after a reconfiguration: team-a owns two nodes and runs two gangs; kozmo local
# restarts on a configuration where team-a owns one. The gang outside the new quota is kept,
# running as opportunistic, and its pods say why.
start before v100_vcs.yaml --data-dir "$WORK/data"
# One after the other: created in one apply, the gang could be placed first and take 0.0.0.1
# (CI saw it), and the checks below name the nodes.
pod a1 team-a 1 8 >"$WORK/team-a-1.yaml"
{
  pod a2-0 team-a 1 2 "$(printf '    kozmo.io/gang: a2\n    kozmo.io/gang-members: "2x2"')"
  pod a2-1 team-a 1 2 "$(printf '    kozmo.io/gang: a2\n    kozmo.io/gang-members: "2x2"')"
} >"$WORK/team-a-2.yaml"
expect "the 8-GPU team-a pod is created" 'pod/a1 created' k apply -f "$WORK/team-a-1.yaml"
eventually "the 8-GPU pod runs on 0.0.0.1" '^0\.0\.0\.1$' node_of a1
expect "the 2x2 team-a gang is created" 'pod/a2-1 created' k apply -f "$WORK/team-a-2.yaml"
eventually "the 2x2 gang runs on 0.0.0.2" '^0\.0\.0\.2 0\.0\.0\.2$' sh -c \
  "echo \$(kubectl --cache-dir $WORK/cache get pod a2-0 a2-1 -o 'jsonpath={.items[*].spec.nodeName}')"
stop
start after v100_shrunk_vcs.yaml --data-dir "$WORK/data"
eventually "kubectl describe pod a2-0 shows the downgrade after the reconfiguration" \
  "Downgraded .*outside virtual cluster 'team-a''s quota" k describe pod a2-0
expect "its gang-mate says so too" "Downgraded" k describe pod a2-1
expect "the gang inside the new quota is not downgraded" '^0$' sh -c \
  "kubectl --cache-dir $WORK/cache describe pod a1 | grep -c Downgraded || true"
expect "the downgraded gang keeps its GPUs" '^0\.0\.0\.2$' node_of a2-0
expect "inspect shows it lazily preempted" '"lazyPreemptionStatus"' sh -c \
  "$(declare -f kcurl server_url); kcurl -sf \$(server_url)/v1/inspect/affinitygroups/a2"

e2e_finish "# scheduler notices e2e:"
