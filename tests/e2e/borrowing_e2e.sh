#!/usr/bin/env bash
# End-to-end: borrowing on whole cells in `kozmo local` (scheduler_core.hpp note 9), on the
# scenario cluster v100_lending.yaml (team-a and team-b own two 8-GPU nodes each; team-a lends
# up to two, team-b borrows up to two; reclaimTimeout 10s). team-a is idle, so team-b's gang of
# four nodes runs on its own two and two borrowed; team-a's gang arrives and gets its two nodes
# back at the reclaim timeout; Events, inspect and the metrics say who lent what to whom.
# Usage: borrowing_e2e.sh PATH/TO/kozmo
set -uo pipefail
KOZMO=${1:?usage: borrowing_e2e.sh PATH/TO/kozmo}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
CLUSTERS=$(cd "$HERE/../unit/scheduler_scenarios/clusters" && pwd)
e2e_init kozmo-borrowing-e2e 80
eventually() { within 40 "$@"; }

# gang_pods GANG VC PODS: a gang of PODS whole-node pods of team VC that run until deleted.
gang_pods() {
  local i
  for ((i = 0; i < $3; i++)); do
    gpu_pod "$1-$i" "$(printf '    kozmo.io/virtual-cluster: %s\n    kozmo.io/gang: %s\n    kozmo.io/gang-members: "%sx8"' "$2" "$1" "$3")" 8
  done
}
node_list() { # POD...: the nodes, sorted, one line
  local p out=""
  for p in "$@"; do out+="$(k get pod "$p" -o 'jsonpath={.spec.nodeName}' 2>/dev/null) "; done
  echo $(tr ' ' '\n' <<<"$out" | sort)
}
inspect() { kcurl -sf "$(server_url)$1"; }

e2e_start_local "$WORK/kubeconfig" "$WORK/kozmo.log" --cluster "$CLUSTERS/v100_lending.yaml"
eventually "kozmo local answers kubectl" 'Server Version' k version

gang_pods b4 team-b 4 >"$WORK/b4.yaml"
expect "team-b's gang of four 8-GPU pods is created" 'pod/b4-3 created' k apply -f "$WORK/b4.yaml"
eventually "it runs on all four nodes: two of its own and two borrowed from idle team-a" \
  '^0\.0\.0\.1 0\.0\.0\.2 0\.0\.0\.3 0\.0\.0\.4$' node_list b4-0 b4-1 b4-2 b4-3
eventually "kubectl describe pod says what was borrowed from whom" \
  'Borrowed .*borrowed 2 cells \(V100-RACK\.V100-NODE on 0\.0\.0\.[1-4], 0\.0\.0\.[1-4]\) from VC team-a' k describe pod b4-0
expect "inspect shows team-a's two cells lent to team-b" '"lent":"team-b".*"lent":"team-b"' \
  inspect /v1/inspect/clusterstatus/virtualclusters/team-a
expect "inspect shows team-b's two borrowed cells" '"borrowed":"team-a".*"borrowed":"team-a"' \
  inspect /v1/inspect/clusterstatus/virtualclusters/team-b
expect "inspect of the gang names its lender" '"borrowedFrom":\["team-a"\]' inspect /v1/inspect/affinitygroups/b4
eventually "the metrics count 16 of team-a's GPUs lent and 16 borrowed by team-b" \
  'state="lent",virtual_cluster="team-a"} 16|virtual_cluster="team-a",state="lent"} 16' \
  sh -c "$(declare -f kcurl server_url); kcurl -sf \$(server_url)/metrics | grep -E 'kozmo_virtual_cluster_gpus.*lent.*team-a|kozmo_virtual_cluster_gpus.*team-a.*lent'"
expect "... and team-b's borrowed GPUs" 'team-b.*16|16$' sh -c \
  "$(declare -f kcurl server_url); kcurl -sf \$(server_url)/metrics | grep -E 'kozmo_virtual_cluster_gpus' | grep team-b | grep borrowed"

# team-a's gang: its quota is all lent out, so it takes its two nodes back.
gang_pods a2 team-a 2 >"$WORK/a2.yaml"
asked=$(date +%s)
expect "team-a's gang of two 8-GPU pods is created" 'pod/a2-1 created' k apply -f "$WORK/a2.yaml"
eventually "team-b's pods hear that team-a reclaims its cells, with the deadline" \
  "Reclaimed .*VC team-a reclaims 2 cells \(V100-RACK\.V100-NODE on .*\) lent to VC team-b for its gang 'a2'; the gang's pods are deleted in 10s unless they finish first" \
  k describe pod b4-0
expect "team-a's pods say they wait for the reclaim" "reclaiming 16 GPUs on 0\.0\.0\.[34], 0\.0\.0\.[34] lent to VC team-b for the gang 'a2'" \
  k describe pod a2-0
expect "team-b's pods still run while the reclaim waits (not killed at once)" '^Running Running Running Running$' \
  sh -c "echo \$(kubectl --cache-dir $WORK/cache get pod b4-0 b4-1 b4-2 b4-3 -o 'jsonpath={.items[*].status.phase}')"
eventually "team-a's gang binds on its two nodes once the borrowers are gone" '^0\.0\.0\.3 0\.0\.0\.4$' node_list a2-0 a2-1
echo "# team-a's gang was bound $(($(date +%s) - asked)) s after it was created (reclaimTimeout 10s)"
expect "team-b's gang was preempted to give them back" 'b4-0' sh -c \
  "kubectl --cache-dir $WORK/cache get events --field-selector involvedObject.name=b4-0 -o 'jsonpath={range .items[*]}{.reason} {.involvedObject.name}{\"\\n\"}{end}' | grep -E 'Preempt|Reclaimed'"
expect "nothing is lent any more" '^0$' sh -c \
  "$(declare -f kcurl server_url); kcurl -sf \$(server_url)/v1/inspect/clusterstatus/virtualclusters/team-a | grep -c '\"lent\"' || true"

# team-b again: it may borrow, but team-a lends nothing now, so a gang of three waits.
gang_pods b3 team-b 3 >"$WORK/b3.yaml"
expect "team-b's gang of three is created" 'pod/b3-2 created' k apply -f "$WORK/b3.yaml"
eventually "it waits, saying its VC's quota" "VC team-b has 16 of 16 V100 GPUs free" k describe pod b3-0

e2e_finish "# borrowing e2e:"
