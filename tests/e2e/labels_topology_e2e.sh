#!/usr/bin/env bash
# End-to-end: cells from node labels (issue 43 rule 5). `kozmo local` on a shape file whose
# nodes carry kozmo.io/rack labels and no cell configuration: the scheduler derives zone/rack/
# node/clique cells from the labels, a gang lands within one rack, and after `kubectl label`
# moves nodes between racks a new gang follows the new racks, without restarting kozmo local.
# Usage: labels_topology_e2e.sh PATH/TO/kozmo
set -uo pipefail
KOZMO=${1:?usage: labels_topology_e2e.sh PATH/TO/kozmo}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
e2e_init kozmo-labels-e2e 80
eventually() { within 30 "$@"; }

# Racks interleaved with the node names, so that a placement blind to the labels (nodes in
# name order) would split a gang across racks.
cat >"$WORK/cluster.yaml" <<'YAML'
nodes:
  - {name: node-0, gpus: 4, gpuType: A100, labels: {kozmo.io/rack: r1}}
  - {name: node-1, gpus: 4, gpuType: A100, labels: {kozmo.io/rack: r2}}
  - {name: node-2, gpus: 4, gpuType: A100, labels: {kozmo.io/rack: r1}}
  - {name: node-3, gpus: 4, gpuType: A100, labels: {kozmo.io/rack: r2}}
YAML

# gang NAME: two pods of four GPUs each, placed all at once.
gang() {
  local i
  for i in 0 1; do
    gpu_pod "$1-$i" "$(printf '    kozmo.io/gang: %s\n    kozmo.io/gang-members: "2x4"' "$1")" 4
  done
}
nodes_of() { # NAME: the two pods' nodes, sorted, on one line
  echo $(for i in 0 1; do kubectl --cache-dir "$WORK/cache" get pod "$1-$i" -o 'jsonpath={.spec.nodeName}{"\n"}'; done | sort)
}
# The cell map (every cell with its type and address, depth first) and the VCs' cells.
cellmap() { kcurl -sf "$(server_url)/v1/inspect/cellmap"; }
vcs() { kcurl -sf "$(server_url)/v1/inspect/clusterstatus/virtualclusters/"; }

e2e_start_local "$WORK/kubeconfig" "$WORK/kozmo.log" --cluster "$WORK/cluster.yaml"
eventually "kozmo local answers kubectl" 'Server Version' k version
expect "kozmo local says its cells come from the nodes' labels" "cells derived from the nodes' topology labels" \
  cat "$WORK/kozmo.log"
eventually "the cell map shows rack r1 (node-0, node-2) and rack r2 derived from the labels" \
  '"_unlabelled/r1","type":"RACK-2x4-A100".*"address":"node-2".*"_unlabelled/r2","type":"RACK-2x4-A100"' cellmap
expect "the cell map shows the zone level above the racks (no zone label: _unlabelled)" \
  '"address":"_unlabelled","type":"ZONE-2x2x4-A100"' cellmap
expect "the VC default owns the derived zone cell" '"default":\[\{"cellType":"ZONE-2x2x4-A100"' vcs

gang first >"$WORK/first.yaml"
expect "a 2x4 gang is created" 'pod/first-1 created' k apply -f "$WORK/first.yaml"
eventually "the gang lands within one rack (node-0 and node-2, or node-1 and node-3)" \
  '^(node-0 node-2|node-1 node-3)$' nodes_of first
expect "deleting the gang" 'deleted' k delete pod first-0 first-1 --grace-period=0
eventually "the gang's pods are gone" '^$' sh -c "kubectl --cache-dir $WORK/cache get pods --no-headers 2>&1 | grep first"

# New racks: r1 = node-0, node-1; r2 = node-2, node-3.
expect "node-1 moves to rack r1" 'labeled' k label node node-1 kozmo.io/rack=r1 --overwrite
expect "node-2 moves to rack r2" 'labeled' k label node node-2 kozmo.io/rack=r2 --overwrite
eventually "the scheduler derives its cells again: node-1 now lies in rack r1, before rack r2" \
  '"_unlabelled/r1".*"address":"node-1".*"_unlabelled/r2"' cellmap
gang second >"$WORK/second.yaml"
expect "a second 2x4 gang is created" 'pod/second-1 created' k apply -f "$WORK/second.yaml"
eventually "the new gang follows the new racks (node-0 and node-1, or node-2 and node-3)" \
  '^(node-0 node-1|node-2 node-3)$' nodes_of second
expect "kozmo local is the same process throughout" '^alive$' sh -c "kill -0 $KOZMO_PID && echo alive"
kill "$KOZMO_PID"; wait "$KOZMO_PID" 2>/dev/null; KOZMO_PID=

# --- NVLink cliques with the default levels: nodes labelled with nvidia.com/gpu.clique and no
# cell configuration; a gang that asks for one clique (kozmo.io/gang-level) lands within one.
cat >"$WORK/cliques.yaml" <<'YAML'
nodes:
  - {name: gb-0, gpus: 4, gpuType: GB200, labels: {kozmo.io/rack: r1, nvidia.com/gpu.clique: "uuid.1"}}
  - {name: gb-1, gpus: 4, gpuType: GB200, labels: {kozmo.io/rack: r1, nvidia.com/gpu.clique: "uuid.2"}}
YAML
e2e_start_local "$WORK/kubeconfig" "$WORK/kozmo-cliques.log" --cluster "$WORK/cliques.yaml"
rm -f "$WORK/kubeconfig.ca.crt" # kcurl's copy of the previous server's CA
eventually "kozmo local answers kubectl (cliques)" 'Server Version' k version
eventually "the cell map shows the racks and nodes derived from the labels" '"type":"RACK-2x4-GB200"' cellmap
for i in 0 1; do
  gpu_pod "nv-$i" "$(printf '    kozmo.io/gang: nv\n    kozmo.io/gang-members: "2x2"\n    kozmo.io/gang-level: clique')" 2
done >"$WORK/nv.yaml"
# The level `clique` is accepted only because the labels made CLIQUE-... cells (one per node:
# a node label cannot split a node's GPUs); an unknown level would be refused.
expect "a 2x2 gang that must lie within one clique is created" 'pod/nv-1 created' k apply -f "$WORK/nv.yaml"
eventually "it lands within one clique (both pods on gb-0, or both on gb-1)" '^(gb-0 gb-0|gb-1 gb-1)$' nodes_of nv
expect "kubectl describe shows no refusal of the level" '^0$' sh -c \
  "kubectl --cache-dir $WORK/cache describe pod nv-0 | grep -c InvalidSchedulingSpec || true"
kill "$KOZMO_PID"; wait "$KOZMO_PID" 2>/dev/null; KOZMO_PID=

# --- kozmo controller with a configuration file: topologyFromLabels (zone, rack, node) and VC
# quotas written in the derived types, a rack's type unqualified (Kozmo qualifies it with the
# zone's chain) and a node's type qualified by hand.
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; e2e_cleanup' EXIT
cat >"$WORK/cluster2.yaml" <<'YAML'
nodes:
  - {name: kozmo-node-0, gpus: 4, gpuType: A100, labels: {topology.kubernetes.io/zone: z1, kozmo.io/rack: r1}}
  - {name: kozmo-node-1, gpus: 4, gpuType: A100, labels: {topology.kubernetes.io/zone: z1, kozmo.io/rack: r2}}
  - {name: kozmo-node-2, gpus: 4, gpuType: A100, labels: {topology.kubernetes.io/zone: z1, kozmo.io/rack: r1}}
  - {name: kozmo-node-3, gpus: 4, gpuType: A100, labels: {topology.kubernetes.io/zone: z1, kozmo.io/rack: r2}}
YAML
cat >"$WORK/cells.yaml" <<'YAML'
topologyFromLabels:
  levels:
  - {name: zone, label: topology.kubernetes.io/zone}
  - {name: rack, label: kozmo.io/rack}
  - {name: node}
virtualClusters:
  team-a: {virtualCells: [{cellType: RACK-2x4-A100, cellNumber: 1}]}
  team-b: {virtualCells: [{cellType: ZONE-2x2x4-A100.RACK-2x4-A100.NODE-4-A100, cellNumber: 2}]}
YAML
printf 'scheduler:\n  configFile: %s\n' "$WORK/cells.yaml" >"$WORK/controller.yaml"
rm -f "$WORK/kc2"
"$KOZMO" apiserver --port 0 --write-kubeconfig "$WORK/kc2" >"$WORK/kozmo-apiserver.log" 2>&1 &
PIDS+=($!)
within 20 "kozmo apiserver writes its kubeconfig" '^yes$' sh -c "test -s $WORK/kc2 && echo yes"
export KUBECONFIG=$WORK/kc2
"$KOZMO" kubelet --cluster "$WORK/cluster2.yaml" >"$WORK/kozmo-kubelet.log" 2>&1 &
PIDS+=($!)
within 20 "the four labelled nodes register" '^4$' sh -c "kubectl get nodes --no-headers 2>/dev/null | grep -c Ready"
# Bad input: an unknown key under topologyFromLabels stops the start, naming its path; the
# standalone extender, which lists no nodes, refuses topologyFromLabels.
printf 'topologyFromLabels:\n  levels: [{name: rack, lable: kozmo.io/rack}, {name: node}]\n' >"$WORK/bad-cells.yaml"
printf 'scheduler:\n  configFile: %s\n' "$WORK/bad-cells.yaml" >"$WORK/bad-controller.yaml"
expect_fail "a misspelt key under topologyFromLabels is refused with its path" \
  "unknown key 'topologyFromLabels.levels\[0\].lable'" timeout 20 "$KOZMO" controller --config "$WORK/bad-controller.yaml" \
  --enable scheduler --metrics-bind-address 0 --health-probe-bind-address 0
expect_fail "kozmo extender refuses topologyFromLabels and says what to run instead" \
  "topologyFromLabels needs the cluster's nodes.*kozmo controller" "$KOZMO" extender --config "$WORK/cells.yaml"
"$KOZMO" controller --config "$WORK/controller.yaml" --enable scheduler --metrics-bind-address 0 \
  --health-probe-bind-address 0 >"$WORK/kozmo-controller.log" 2>&1 &
PIDS+=($!)
within 20 "the scheduler derives its cells from the labels with the VCs' quotas" \
  'configuration derived again from 4 GPU node|configuration derived from 4 GPU node' cat "$WORK/kozmo-controller.log"
team_gang() { # NAME VC
  local i
  for i in 0 1; do
    gpu_pod "$1-$i" "$(printf '    kozmo.io/gang: %s\n    kozmo.io/gang-members: "2x4"\n    kozmo.io/virtual-cluster: %s' "$1" "$2")" 4
  done
}
nodes_of2() { echo $(for i in 0 1; do kubectl get pod "$1-$i" -o 'jsonpath={.spec.nodeName}{"\n"}'; done | sort); }
team_gang ga team-a >"$WORK/ga.yaml"
expect "team-a's 2x4 gang is created" 'pod/ga-1 created' kubectl apply -f "$WORK/ga.yaml"
within 30 "team-a's gang gets its rack (kozmo-node-0 and -2, or -1 and -3)" \
  '^(kozmo-node-0 kozmo-node-2|kozmo-node-1 kozmo-node-3)$' nodes_of2 ga
team_gang gb team-b >"$WORK/gb.yaml"
expect "team-b's 2x4 gang is created" 'pod/gb-1 created' kubectl apply -f "$WORK/gb.yaml"
within 30 "team-b's gang gets its two nodes, the other rack" \
  '^(kozmo-node-0 kozmo-node-2|kozmo-node-1 kozmo-node-3)$' nodes_of2 gb
expect "the two gangs hold four distinct nodes" '^4$' sh -c \
  "kubectl get pods -o 'jsonpath={range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | sort -u | grep -c kozmo-node"
expect "no scheduler error in the controller's log" '^0$' sh -c "grep -c 'error' $WORK/kozmo-controller.log; true"
e2e_finish labels-topology
