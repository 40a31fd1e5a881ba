#!/usr/bin/env bash
# End-to-end: `kozmo controller` against an API server it does not own (`kozmo apiserver`, with
# simulated GPU nodes from `kozmo kubelet`), driven with kubectl: a bad configuration stops it
# before any write; two replicas with --leader-elect elect one (the Lease says which); the
# leader's scheduler, on a configuration derived from the GPU nodes, binds a 4x2 gang with
# bind-info; kill -9 the leader: the standby leads within leaseDuration + its jittered retry,
# recovers the bound pods and binds a new gang on other GPUs; GPUs that another scheduler's pod
# holds are not given; the endpoints answer where configured. Short lease timings (4 s / 3 s / 1 s) from the configuration file keep it quick.
# Usage: controller_e2e.sh PATH/TO/kozmo
set -uo pipefail
KOZMO=${1:?usage: controller_e2e.sh PATH/TO/kozmo}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
e2e_init kozmo-controller-e2e 60
PIDS=()
cleanup_all() {
  local p
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  e2e_cleanup
}
trap cleanup_all EXIT

# The API server and the simulated nodes.
e2e_start_apiserver_and_nodes 2 8
k create namespace kozmo-system >/dev/null

# A configuration that cannot work is refused, naming the field, and nothing is written.
printf 'leaderElection:\n  leaseDuration: 4s\n  renewDeadline: 5s\n' >"$WORK/bad.yaml"
expect_fail "renewDeadline above leaseDuration is refused with the field's name" \
  "leaderElection.leaseDuration: must be greater than renewDeadline" \
  "$KOZMO" controller --config "$WORK/bad.yaml" --leader-elect
printf 'scheduler:\n  schedulerNmae: kozmo\n' >"$WORK/bad2.yaml"
expect_fail "an unknown key is refused with its name" "scheduler.schedulerNmae: unknown key" \
  "$KOZMO" controller --config "$WORK/bad2.yaml"
expect_fail "an unknown --enable part is refused" "unknown part \"gpus\"" "$KOZMO" controller --enable gpus
expect_fail "no Lease was written by the refused starts" "NotFound|not found" \
  k -n kozmo-system get lease kozmo-controller

# A pod for another scheduler: the scheduler alone (--enable scheduler) does not even list it.
gpu_pod bystander "" 1 | sed 's/schedulerName: kozmo/schedulerName: default-scheduler/' >"$WORK/bystander.yaml"
expect "a pod for another scheduler exists before the controllers start" "pod/bystander created" \
  k apply -f "$WORK/bystander.yaml"

cat >"$WORK/config.yaml" <<EOF
leaderElection:
  leaseDuration: 4s
  renewDeadline: 3s
  retryPeriod: 1s
client: {qps: 200, burst: 400}
EOF
BASE=$(e2e_free_ports 4)
start_controller() { # NAME METRICS-PORT PROBE-PORT
  "$KOZMO" controller --config "$WORK/config.yaml" --enable scheduler --leader-elect \
    --metrics-bind-address "127.0.0.1:$2" --health-probe-bind-address "127.0.0.1:$3" >"$WORK/kozmo-$1.log" 2>&1 &
  PIDS+=($!)
  eval "PID_$1=$!"
}
start_controller a $BASE $((BASE + 1))
start_controller b $((BASE + 2)) $((BASE + 3))
holder() { k -n kozmo-system get lease kozmo-controller -o 'jsonpath={.spec.holderIdentity}'; }
within 15 "one replica holds the Lease" "_" holder
leader_log() { grep -l "now leads" "$WORK"/kozmo-a.log "$WORK"/kozmo-b.log 2>/dev/null; }
within 10 "the Lease's holder is the replica that says it leads" "kozmo-[ab].log" leader_log
sleep 3 # a few renewals
expect "exactly one replica leads" "^1$" sh -c "grep -l 'now leads' $WORK/kozmo-a.log $WORK/kozmo-b.log | wc -l"
LEADER=$(leader_log | sed 's/.*kozmo-\(.\)\.log/\1/')
STANDBY=$([ "$LEADER" = a ] && echo b || echo a)
expect "the leader's log names the Lease's holder" "$(holder)" grep "now leads" "$WORK/kozmo-$LEADER.log"
within 10 "an Event on the Lease says who became leader" "$(holder) became leader" \
  k -n kozmo-system get events --field-selector involvedObject.kind=Lease -o 'jsonpath={.items[*].message}'
LEADER_METRICS=$([ "$LEADER" = a ] && echo $BASE || echo $((BASE + 2)))
STANDBY_METRICS=$([ "$LEADER" = a ] && echo $((BASE + 2)) || echo $BASE)
expect "the leader's kozmo_leader_election_leading is 1" "^kozmo_leader_election_leading 1" \
  curl -sf "http://127.0.0.1:$LEADER_METRICS/metrics"
expect "the standby's is 0" "^kozmo_leader_election_leading 0" curl -sf "http://127.0.0.1:$STANDBY_METRICS/metrics"
expect "the leader derived the scheduler's configuration from the GPU nodes" "derived from 2 GPU node" \
  cat "$WORK/kozmo-$LEADER.log"

expect "the scheduler alone lists only its own pods (not another scheduler's)" \
  "watch=pods \(spec.schedulerName=kozmo\) listed 0 objects" cat "$WORK/kozmo-$LEADER.log"
k delete pod bystander --grace-period=0 --force >/dev/null 2>&1

expect "/readyz answers ok on the standby too" "^ok$" curl -sf "http://127.0.0.1:$((BASE + 3))/readyz"
expect "/healthz answers ok" "^ok$" curl -sf "http://127.0.0.1:$((BASE + 1))/healthz"
expect "/metrics is served on the metrics address" "kozmo_client_requests_total" \
  curl -sf "http://127.0.0.1:$BASE/metrics"
expect "/metrics is not on the probe address" "^404$" \
  curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$((BASE + 1))/metrics"

# A 4x2 gang (4 pods of 2 GPUs) for Kozmo's scheduler.
gang() { # NAME
  local i
  for i in 0 1 2 3; do
    gpu_pod "$1-$i" "$(printf '    kozmo.io/gang: %s\n    kozmo.io/gang-members: "4x2"' "$1")" 2
  done
}
gang g1 | k apply -f - >/dev/null
bound() { # PREFIX: the number of its pods bound with bind-info
  k get pods -o 'jsonpath={range .items[*]}{.metadata.name}{" "}{.spec.nodeName}{" "}{.metadata.annotations.hivedscheduler\.microsoft\.com/pod-bind-info}{"\n"}{end}' |
    awk -v p="$1-" 'index($1, p) == 1 && $2 != "" && $3 != "" { n++ } END { print n + 0 }'
}
within 20 "the leader binds the 4x2 gang with bind-info" "^4$" bound g1

eval "kill -9 \$PID_$LEADER"
KILLED=$(date +%s.%N)
within 20 "the standby leads after the leader's kill -9" "now leads" cat "$WORK/kozmo-$STANDBY.log"
TOOK=$(echo "$(date +%s.%N) - $KILLED" | bc)
echo "     (take-over after ${TOOK} s; lease 4 s, retry 1-2.2 s)"
expect "take-over within leaseDuration + twice the jittered retry" "^1$" sh -c "echo '$TOOK <= 4 + 2 * 2.2 + 1' | bc"
expect "the new leader recovered the bound gang" "[1-9][0-9]* group\(s\) recovered" cat "$WORK/kozmo-$STANDBY.log"
gang g2 | k apply -f - >/dev/null
within 20 "the new leader binds a second gang" "^4$" bound g2
dups() { # GPUs (node/index) held by more than one pod
  k get pods -o 'jsonpath={range .items[*]}{.spec.nodeName}{" "}{.metadata.annotations.hivedscheduler\.microsoft\.com/pod-leaf-cell-isolation}{"\n"}{end}' |
    awk '$2 != "" { n = split($2, g, ","); for (i = 1; i <= n; i++) print $1 "/" g[i] }' | sort | uniq -d | wc -l
}
expect "no GPU is held by two pods" "^0$" dups
expect "the Lease counts one transition" "^1$" k -n kozmo-system get lease kozmo-controller -o 'jsonpath={.spec.leaseTransitions}'

# The derived configuration follows the nodes: the two nodes are full, a third gang waits until
# a third GPU node joins (no restart), and the running gangs keep their GPUs.
placements() { # the bound pods of g1 and g2 with their node and GPUs
  k get pods -o 'jsonpath={range .items[*]}{.metadata.name}{" "}{.spec.nodeName}{" "}{.metadata.annotations.hivedscheduler\.microsoft\.com/pod-leaf-cell-isolation}{"\n"}{end}' |
    grep -E '^g[12]-' | sort
}
BEFORE=$(placements)
gang g3 | k apply -f - >/dev/null
within 10 "a third gang waits while both nodes are full" "Unschedulable" \
  k get pod g3-0 -o 'jsonpath={.status.conditions[?(@.type=="PodScheduled")].reason}'
"$KOZMO" kubelet --nodes 1 --gpus-per-node 8 --node-prefix late >"$WORK/kozmo-kubelet-late.log" 2>&1 &
LATE=$!
PIDS+=($LATE)
within 20 "a third GPU node joins" "late-0" k get nodes
within 20 "the scheduler derives its configuration again from 3 GPU nodes, without a restart" \
  "configuration derived again from 3 GPU node" cat "$WORK/kozmo-$STANDBY.log"
within 20 "the waiting gang binds on the new node" "^4$" bound g3
g3_nodes() { k get pods -o 'jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' | awk '/^g3-/ {print $2}' | sort -u; }
expect "it is on the new node" "^late-0$" g3_nodes
AFTER=$(placements)
if [ -n "$BEFORE" ] && [ "$BEFORE" = "$AFTER" ]; then ok "the running gangs kept their nodes and GPUs"; else
  bad "the running gangs kept their nodes and GPUs" "before: $BEFORE" "after: $AFTER"; fi
expect "no GPU is held by two pods after the new node joined" "^0$" dups
# ... and leaves: its kubelet gone, its pods and the Node deleted.
kill "$LATE"
k delete pod g3-0 g3-1 g3-2 g3-3 --grace-period=0 --force >/dev/null 2>&1
k delete node late-0 >/dev/null
within 20 "a GPU node that leaves is dropped from the configuration" \
  "configuration derived again from 2 GPU node" cat "$WORK/kozmo-$STANDBY.log"
AFTER=$(placements)
if [ "$BEFORE" = "$AFTER" ]; then ok "the running gangs still hold their nodes and GPUs"; else
  bad "the running gangs still hold their nodes and GPUs" "before: $BEFORE" "after: $AFTER"; fi

# GPUs that another scheduler's pod holds are taken: with g2 gone, 8 GPUs are free; a pod that
# another scheduler bound (nodeName set) takes 2 of them, and a new 4x2 gang waits, saying why,
# until that pod is gone.
G2_NODE=$(awk '$1 == "g2-0" { print $2 }' <<<"$BEFORE")
k delete pod g2-0 g2-1 g2-2 g2-3 --grace-period=0 --force >/dev/null 2>&1
gpu_pod theirs "" 2 | sed "s/schedulerName: kozmo/schedulerName: default-scheduler\n  nodeName: $G2_NODE/" >"$WORK/theirs.yaml"
expect "another scheduler's 2-GPU pod is bound to $G2_NODE" "pod/theirs created" k apply -f "$WORK/theirs.yaml"
gang g4 | k apply -f - >/dev/null
within 10 "a 4x2 gang waits: 2 of the 8 free GPUs are held by the other scheduler's pod" \
  "held by other schedulers' pods" \
  k get pod g4-0 -o 'jsonpath={.status.conditions[?(@.type=="PodScheduled")].message}'
expect "none of the gang's pods is bound" "^0$" bound g4
k delete pod theirs --grace-period=0 --force >/dev/null 2>&1
within 20 "once that pod is gone the gang binds" "^4$" bound g4

# A graceful stop gives the Lease up (an empty holder), so that a standby need not wait.
eval "kill -TERM \$PID_$STANDBY"
within 10 "a SIGTERM releases the Lease" "^$" holder

# kube-scheduler's extender verbs (scheduler.extender): without a client CA the configuration is
# refused unless plain HTTP is asked for; then the leader answers the verbs and a standby says
# it stands by (503), so that kube-scheduler retries rather than placing on a stale view.
printf 'scheduler:\n  extender: {bindAddress: "127.0.0.1:0"}\n' >"$WORK/ext-bad.yaml"
expect_fail "an extender without a client CA is refused unless insecure: true" \
  "scheduler.extender.clientCAFile: required" "$KOZMO" controller --config "$WORK/ext-bad.yaml"
cat >"$WORK/ext.yaml" <<EOF
scheduler:
  extender: {bindAddress: "127.0.0.1:0", insecure: true}
leaderElection: {leaseDuration: 4s, renewDeadline: 3s, retryPeriod: 1s, resourceName: kozmo-extender-e2e}
EOF
EXT=$(e2e_free_ports 4)
start_extender() { # NAME EXTENDER-PORT PROBE-PORT
  sed "s/127.0.0.1:0/127.0.0.1:$2/" "$WORK/ext.yaml" >"$WORK/ext-$1.yaml"
  "$KOZMO" controller --config "$WORK/ext-$1.yaml" --enable scheduler --leader-elect --metrics-bind-address 0 \
    --health-probe-bind-address "127.0.0.1:$3" >"$WORK/kozmo-ext-$1.log" 2>&1 &
  PIDS+=($!)
}
start_extender a $EXT $((EXT + 1))
within 15 "the first extender replica leads" "now leads" cat "$WORK/kozmo-ext-a.log"
start_extender b $((EXT + 2)) $((EXT + 3))
within 10 "the second extender replica stands by" "^ok$" curl -sS --max-time 2 "http://127.0.0.1:$((EXT + 3))/readyz"
expect "it warns that the verbs are served over plain HTTP" "plain HTTP, for anyone who can reach it" \
  cat "$WORK/kozmo-ext-a.log"
filter() { # PORT: a filter for a pod that asks for no GPU
  curl -sS --max-time 5 -w ' %{http_code}' -X POST "http://127.0.0.1:$1/v1/extender/filter" \
    -d '{"Pod":{"metadata":{"name":"p","namespace":"default","uid":"u-p"},"spec":{"containers":[{"name":"c"}]}},"NodeNames":["kozmo-node-0"]}'
}
within 10 "the leader answers kube-scheduler's filter" "asks for no GPU.* 200$" filter $EXT
expect "the standby answers 503, saying it stands by" "stands by .* 503$" filter $((EXT + 2))

e2e_finish "controller e2e:"
