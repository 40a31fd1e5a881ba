#!/usr/bin/env bash
# End-to-end: gang topology in `kozmo local` on a HiveD cluster with racks
# (tests/unit/scheduler_scenarios/clusters/v100.yaml: racks {0.0.0.1, 0.0.0.2} and
# {0.0.0.3, 0.0.0.4}, 8 GPUs per node). Pods bound by another scheduler leave 2, 2, 4 and 8 free
# GPUs on the four nodes (where a plain 4x2 gang spreads over both racks, as the scenario
# topology_subgroups_node_in_rack.yaml shows); a prefill/decode gang (2x2 each,
# kozmo.io/subgroup-level node, gang-level rack) lands each subgroup on one node and both in
# the second rack, and a 3x2 gang that prefers one node, which none can hold any more, lands
# across nodes with a TopologyRelaxed Event (kubectl get events) and inspect saying so.
# An unknown level is refused with an Event naming the annotation.
# Usage: subgroups_e2e.sh PATH/TO/kozmo
set -uo pipefail
KOZMO=${1:?usage: subgroups_e2e.sh PATH/TO/kozmo}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
CLUSTERS=$(cd "$HERE/../unit/scheduler_scenarios/clusters" && pwd)
e2e_init kozmo-subgroups-e2e 40
eventually() { within 30 "$@"; }
node_of() { k get pod "$1" -o 'jsonpath={.spec.nodeName}'; }
rack_of() { case "$1" in 0.0.0.1|0.0.0.2) echo 1 ;; 0.0.0.3|0.0.0.4) echo 2 ;; *) echo "?" ;; esac; }

e2e_start_local "$WORK/kubeconfig" "$WORK/kozmo.log" --cluster "$CLUSTERS/v100.yaml"
eventually "kozmo local answers kubectl" 'Server Version' k version

# Another scheduler's pods, bound by name: 6, 6 and 4 of the GPUs of 0.0.0.1-3.
for spec in 1:6 2:6 3:4; do
  n=${spec%%:*}
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata:
  name: other-$n
  annotations:
    kozmo.io/sim-duration: forever
spec:
  nodeName: 0.0.0.$n
  restartPolicy: Never
  containers:
  - name: main
    image: busybox:1.36
    resources:
      limits:
        nvidia.com/gpu: ${spec#*:}
YAML
done >"$WORK/others.yaml"
expect "pods of another scheduler take GPUs of three nodes" 'pod/other-3 created' k apply -f "$WORK/others.yaml"
eventually "they run" '^Running Running Running$' sh -c \
  "echo \$(kubectl --cache-dir $WORK/cache get pod other-1 other-2 other-3 -o 'jsonpath={.items[*].status.phase}')"

topo() { # SUBGROUP
  printf '    kozmo.io/gang: serve\n    kozmo.io/gang-members: "4x2"\n    kozmo.io/gang-level: rack\n'
  printf '    kozmo.io/subgroup: %s\n    kozmo.io/subgroup-level: node\n    kozmo.io/subgroup-min-members: "2"' "$1"
}
{
  gpu_pod prefill-0 "$(topo prefill)" 2
  gpu_pod prefill-1 "$(topo prefill)" 2
  gpu_pod decode-0 "$(topo decode)" 2
  gpu_pod decode-1 "$(topo decode)" 2
} >"$WORK/serve.yaml"
expect "the prefill/decode gang is created" 'pod/decode-1 created' k apply -f "$WORK/serve.yaml"
eventually "every pod of the gang is bound" '^0\.0\.0\.[1-4] 0\.0\.0\.[1-4] 0\.0\.0\.[1-4] 0\.0\.0\.[1-4]$' sh -c \
  "echo \$(kubectl --cache-dir $WORK/cache get pod prefill-0 prefill-1 decode-0 decode-1 -o 'jsonpath={.items[*].spec.nodeName}')"
P0=$(node_of prefill-0) P1=$(node_of prefill-1) D0=$(node_of decode-0) D1=$(node_of decode-1)
if [[ "$P0" == "$P1" ]]; then ok "the prefill subgroup is on one node ($P0)"; else bad "prefill spread" "$P0 $P1"; fi
if [[ "$D0" == "$D1" ]]; then ok "the decode subgroup is on one node ($D0)"; else bad "decode spread" "$D0 $D1"; fi
if [[ "$(rack_of "$P0")" == "$(rack_of "$D0")" ]]; then ok "both subgroups are in one rack (rack $(rack_of "$P0"))"
else bad "the subgroups are in two racks" "$P0 $D0"; fi
if [[ "$(rack_of "$P0")" == 2 ]]; then ok "the rack is the second, the only one with room for both"; else bad "rack" "$P0 $D0"; fi
expect "inspect shows the gang's levels and subgroups" '"gangLevel":"rack".*"subgroups":\[.*"name":"decode".*"level":"node"' sh -c \
  "$(declare -f kcurl server_url); kcurl -sf \$(server_url)/v1/inspect/affinitygroups/serve"

# Soft: three 2-GPU pods that prefer one node, where no node has 6 free GPUs left (2, 2, 0, 4).
wide() { printf '    kozmo.io/gang: wide\n    kozmo.io/gang-members: "3x2"\n    kozmo.io/preferred-level: node'; }
{
  gpu_pod wide-0 "$(wide)" 2
  gpu_pod wide-1 "$(wide)" 2
  gpu_pod wide-2 "$(wide)" 2
} >"$WORK/wide.yaml"
expect "a gang preferring one node is created" 'pod/wide-2 created' k apply -f "$WORK/wide.yaml"
eventually "it lands anyway" '^0\.0\.0\.[1-4] 0\.0\.0\.[1-4] 0\.0\.0\.[1-4]$' sh -c \
  "echo \$(kubectl --cache-dir $WORK/cache get pod wide-0 wide-1 wide-2 -o 'jsonpath={.items[*].spec.nodeName}')"
WIDE_NODES=$(printf '%s\n' "$(node_of wide-0)" "$(node_of wide-1)" "$(node_of wide-2)" | sort -u | wc -l)
if ((WIDE_NODES > 1)); then ok "its pods are on $WIDE_NODES nodes"; else bad "one node" "$(node_of wide-0)"; fi
eventually "kubectl get events shows TopologyRelaxed on its pods" \
  "TopologyRelaxed .*no one 'node' cell \(kozmo.io/preferred-level\) could hold the gang" k get events
expect "inspect records the fallback" '"relaxed":"no one' sh -c \
  "$(declare -f kcurl server_url); kcurl -sf \$(server_url)/v1/inspect/affinitygroups/wide"
expect "the prefill/decode gang was not relaxed (it asked nothing soft)" '^0$' sh -c \
  "kubectl --cache-dir $WORK/cache describe pod prefill-0 | grep -c TopologyRelaxed || true"

# An unknown level: refused, and the pod says which annotation.
gpu_pod shelf "$(printf '    kozmo.io/gang-level: shelf')" 1 >"$WORK/shelf.yaml"
expect "a pod with an unknown gang level is created" 'pod/shelf created' k apply -f "$WORK/shelf.yaml"
eventually "kubectl describe pod shows why it is refused" "InvalidSchedulingSpec .*kozmo.io/gang-level: 'shelf' is not a cell level" \
  k describe pod shelf
expect "it is not bound" '^$' node_of shelf

e2e_finish "# subgroups e2e:"
