#!/usr/bin/env bash
# End-to-end: Kozmo's GPU scheduler in `kozmo local` with HiveD's design configuration, driven
# with the real kubectl; then a SIGKILL and a restart on the same --data-dir.
# Usage: scheduler_e2e.sh PATH/TO/kozmo
set -uo pipefail
KOZMO=${1:?usage: scheduler_e2e.sh PATH/TO/kozmo}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
ROOT=$(cd "$HERE/../.." && pwd)
CONFIG=${KOZMO_HIVED_CONFIG:-$ROOT/../shared/reference/hived-design-config.yaml}
e2e_init kozmo-sched-e2e 80
eventually() { within 45 "$@"; } # eventually NAME PATTERN CMD...: within 45 s

if [ ! -f "$CONFIG" ]; then echo "1..0 # SKIP no HiveD config at $CONFIG"; exit 77; fi

start_kozmo() { # $1: log name
  e2e_start_local "$WORK/kubeconfig" "$WORK/kozmo-$1.log" --cluster "$CONFIG" --data-dir "$WORK/data"
}

hived() { # VC LEAF-TYPE GPUS [extra spec lines]
  printf '    hivedscheduler.microsoft.com/pod-scheduling-spec: |\n      virtualCluster: %s\n      leafCellType: %s\n      leafCellNumber: %s\n' "$1" "$2" "$3"
  [ $# -gt 3 ] && printf '      %s\n' "${@:4}"
  return 0
}
gang() { # NAME PODS GPUS VC LEAF-TYPE
  local i
  for i in $(seq 0 $(($2 - 1))); do
    gpu_pod "$1-$i" "$(printf '    kozmo.io/gang: %s\n    kozmo.io/gang-members: "%sx%s"\n    kozmo.io/virtual-cluster: %s\n    kozmo.io/leaf-cell-type: %s' "$1" "$2" "$3" "$4" "$5")" "$3"
  done
}
# Each gang pod's two GPUs form one DGX2-V100-NODE-2-GPU cell (addresses omitted in the
# config, so the pairs are {0,1}, {2,3}, ...).
gang_pairs_under_switch() {
  local good=0 total=0 node gpus a b
  while read -r node gpus; do
    total=$((total + 1))
    IFS=, read -r a b <<<"$gpus"
    [ -n "$b" ] && [ $((a / 2)) -eq $((b / 2)) ] && good=$((good + 1))
  done < <(k get pods -o 'jsonpath={range .items[*]}{.metadata.name}{" "}{.spec.nodeName}{" "}{.metadata.annotations.hivedscheduler\.microsoft\.com/pod-leaf-cell-isolation}{"\n"}{end}' |
    awk '$1 ~ /^gang-4x2-/ { print $2, $3 }')
  echo "$good of $total"
}
same_claims() { diff <(gpu_claims | sort) "$WORK/claims-before" >/dev/null && echo same || { echo changed; gpu_claims; }; }
# node:gpu for every pod holding GPUs, one per line.
gpu_claims() {
  k get pods -o 'jsonpath={range .items[*]}{.spec.nodeName}{" "}{.metadata.annotations.hivedscheduler\.microsoft\.com/pod-leaf-cell-isolation}{"\n"}{end}' |
    awk 'NF == 2 { n = split($2, g, ","); for (i = 1; i <= n; i++) print $1 ":" g[i] }'
}
no_double_claims() {
  local dup; dup=$(gpu_claims | sort | uniq -d)
  if [ -z "$dup" ] && [ "$(gpu_claims | wc -l)" -gt 0 ]; then echo "distinct $(gpu_claims | wc -l)"; else echo "twice: $dup"; fi
}

start_kozmo first
eventually "the server answers kubectl" 'Server Version' k version
eventually "every node of the HiveD config registers (20 nodes)" '^20$' sh -c "kubectl --cache-dir $WORK/cache get nodes --no-headers | grep -c ' Ready'"
expect "the nodes carry the GPUs the cell tree implies (270)" '^270$' sh -c \
  "kubectl --cache-dir $WORK/cache get nodes -o jsonpath='{range .items[*]}{.status.capacity.nvidia\\.com/gpu}{\"\\n\"}{end}' | awk '{s+=\$1} END {print s}'"
expect "node 1.0.0.2 has two leaf types: 8 DGX1-P100 and 2 CT1" '8 2' sh -c \
  "kubectl --cache-dir $WORK/cache get node 1.0.0.2 -o jsonpath='{.metadata.labels.kozmo\\.io/gpus\\.DGX1-P100} {.metadata.labels.kozmo\\.io/gpus\\.CT1}'"

{
  gpu_pod vc1-dgx2 "$(hived VC1 DGX2-V100 4)" 4
  gpu_pod vc2-p100 "$(hived VC2 DGX1-P100 8)" 8
  gpu_pod vc2-ct1 "$(hived VC2 CT1 2)" 2
  gpu_pod vc1-ib "$(hived VC1 IB-DGX2-V100-V100 16 'pinnedCellId: VC1-YQW-IB-DGX2')" 16
  gpu_pod too-big "$(hived VC2 DGX1-P100 16)" 16
} >"$WORK/pods.yaml"
expect "kubectl apply creates pods for each VC and leaf type" 'pod/vc1-ib created' k apply -f "$WORK/pods.yaml"
eventually "a VC1 DGX2-V100 pod runs on a DGX-2 node" 'vc1-dgx2 .*Running .*0\.0\.[1-5]\.[0-9]' k get pods -o wide
eventually "a VC2 DGX1-P100 pod runs on a DGX-1 node" 'vc2-p100 .*Running .*1\.0\.0\.[0-2]' k get pods -o wide
eventually "a VC2 CT1 pod runs on a CT1 node" 'vc2-ct1 .*Running .*(0\.0\.0\.[01]|1\.0\.0\.2)' k get pods -o wide
eventually "a pinned VC1 IB pod runs on an IB node" 'vc1-ib .*Running .*0\.1\.0\.[01]' k get pods -o wide
expect "the P100 pod holds 8 GPU indices" '^8$' sh -c \
  "kubectl --cache-dir $WORK/cache get pod vc2-p100 -o jsonpath='{.metadata.annotations.hivedscheduler\\.microsoft\\.com/pod-leaf-cell-isolation}' | awk -F, '{print NF}'"
eventually "describe shows why a pod that cannot fit waits" 'PodScheduled +False|FailedScheduling' k describe pod too-big
expect "the waiting pod is not bound" '^$' k get pod too-big -o 'jsonpath={.spec.nodeName}'

sed -e 's/kozmo.io\/gang-members: "4x2"/&\n    kozmo.io\/virtual-cluster: VC1\n    kozmo.io\/leaf-cell-type: DGX2-V100/' \
  "$ROOT/examples/gang-4x2.yaml" >"$WORK/gang.yaml"
expect "kubectl apply -f examples/gang-4x2.yaml" 'pod/gang-4x2-3 created' k apply -f "$WORK/gang.yaml"
eventually "the 4x2 gang runs as a whole" '^4$' sh -c "kubectl --cache-dir $WORK/cache get pods --no-headers | grep -c '^gang-4x2-.*Running'"
expect "each gang pod's two GPUs sit under one switch" '^4 of 4$' gang_pairs_under_switch
expect "the gang's pods share one node" '^1$' sh -c \
  "kubectl --cache-dir $WORK/cache get pods -o wide --no-headers | grep '^gang-4x2' | awk '{print \$7}' | sort -u | wc -l"
# The P100s: vc2-p100 holds 8, gang "hold" takes the other 16; gang "later", the same shape,
# must wait until "hold" is deleted.
gang hold 4 4 VC2 DGX1-P100 >"$WORK/hold.yaml"
expect "a 4x4 P100 gang is created" 'pod/hold-3 created' k apply -f "$WORK/hold.yaml"
eventually "it runs" '^4$' sh -c "kubectl --cache-dir $WORK/cache get pods --no-headers | grep -c '^hold-.*Running'"
gang later 4 4 VC2 DGX1-P100 >"$WORK/later.yaml"
expect "a second 4x4 P100 gang is created" 'pod/later-3 created' k apply -f "$WORK/later.yaml"
eventually "it waits: every P100 is taken" 'FailedScheduling|PodScheduled +False' k describe pod later-0
expect "no GPU is given twice" '^distinct' no_double_claims
gpu_claims | sort >"$WORK/claims-before"

kill -9 "$KOZMO_PID"; wait "$KOZMO_PID" 2>/dev/null; KOZMO_PID=
start_kozmo second
eventually "after SIGKILL, kozmo restarts on the same data dir" 'Server Version' k version
eventually "the bound pods are still there" 'hold-3' k get pods
eventually "the inspect API lists the recovered gang" 'gang-4x2' sh -c "$(declare -f kcurl server_url); kcurl -sf \$(server_url)/v1/inspect/affinitygroups/"
sleep 2
expect "no GPU is given twice after the restart" '^distinct' no_double_claims
expect "the recovered placements are unchanged" '^same$' same_claims
expect "the pending gang is still pending" '^$' k get pod later-0 -o 'jsonpath={.spec.nodeName}'
expect "deleting the gang that holds the P100s" 'deleted' k delete pod hold-0 hold-1 hold-2 hold-3 --wait=false
eventually "the pending gang is placed once GPUs are free" '^4$' sh -c "kubectl --cache-dir $WORK/cache get pods --no-headers | grep -c '^later-.*Running'"
expect "still no GPU given twice" '^distinct' no_double_claims

e2e_finish "# scheduler e2e:"
