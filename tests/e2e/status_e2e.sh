#!/usr/bin/env bash
# End-to-end: `kozmo status` and `kubectl kozmo status` against `kozmo local` (2 nodes of 8 GPUs):
# a 4x2 gang that binds, a 3x8 gang that waits (more than the cluster's 16 GPUs), a PyTorchJob
# and TaskExecutions; the tables (plain, on a terminal under tmux and script(1), -o wide), -o json
# (jq) and -o yaml (PyYAML), -n, --finished, --watch, --inspect-url, and the errors a user meets:
# an unreachable server, a token the server refuses, a bad flag.
# Usage: status_e2e.sh PATH/TO/kozmo
set -uo pipefail
KOZMO=$(realpath "${1:?usage: status_e2e.sh PATH/TO/kozmo}")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
e2e_init kozmo-status-e2e 60
TMUX_SOCKET=kozmo-status-$$
trap 'tmux -L "$TMUX_SOCKET" kill-server 2>/dev/null; e2e_cleanup' EXIT

st() { "$KOZMO" status "$@"; }

e2e_start_local "$WORK/kubeconfig" "$WORK/kozmo.log" --nodes 2 --gpus-per-node 8
within 20 "the server answers kubectl" 'Server Version' k version
within 20 "two simulated 8-GPU nodes are Ready" '^2$' sh -c "kubectl --cache-dir $WORK/cache get nodes --no-headers | grep -c ' Ready'"

gang() { # NAME PODS GPUS
  local i
  for i in $(seq 0 $(($2 - 1))); do
    gpu_pod "$1-$i" "$(printf '    kozmo.io/gang: %s\n    kozmo.io/gang-members: "%sx%s"' "$1" "$2" "$3")" "$3"
  done
}
bound() { k get pods -o 'jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' | awk -v p="$1-" 'index($1, p) == 1 && NF == 2' | wc -l; }
expect "a 4x2 gang is created" 'created' k apply -f - <<<"$(gang fits 4 2)"
within 30 "  ... and bound" '^4$' bound fits
expect "a 3x8 gang (24 GPUs, the cluster has 16) is created" 'created' k apply -f - <<<"$(gang big 3 8)"

expect "a PyTorchJob (CPU) that runs until deleted" 'created' k apply -f - <<'EOF2'
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: train
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        metadata:
          annotations: {kozmo.io/sim-duration: forever}
        spec:
          containers:
          - name: pytorch
            image: kubeflowkatib/pytorch-mnist:v1beta1-45c5727
EOF2
task() { # NAME DURATION
  printf 'apiVersion: kozmo.io/v1alpha1\nkind: TaskExecution\nmetadata:\n  name: %s\n  annotations: {kozmo.io/sim-duration: "%s"}\nspec:\n  type: container\n  container: {image: "busybox:1.36", command: [sh, -c, "echo hi"]}\n' "$1" "$2"
}
expect "a TaskExecution that runs until deleted" 'created' k apply -f - <<<"$(task prep forever)"
expect "a TaskExecution that finishes at once" 'created' k apply -f - <<<"$(task done 100ms)"
within 30 "  ... the PyTorchJob runs" 'Running' k get pytorchjob train -o 'jsonpath={.status.conditions[-1:].type}'
within 30 "  ... one task runs, the other succeeded" '^Running Succeeded$' k get taskexecution prep done -o 'jsonpath={.items[*].status.phase}'

# ---- plain output (not a terminal: nothing cut) ----
within 30 "kozmo status lists the waiting gang" '^big +' st
st >"$WORK/plain.out" 2>"$WORK/plain.err"; rc=$?
expect "  ... and exits 0 with nothing on stderr" '^0 0$' sh -c "echo $rc \$(wc -c <'$WORK/plain.err')"
expect "  ... three sections" '^VIRTUAL CLUSTERS WAITING GANGS JOBS AND TASKS $' sh -c \
  "grep -E '^(VIRTUAL CLUSTERS|WAITING GANGS|JOBS AND TASKS)$' '$WORK/plain.out' | tr '\n' ' '"
expect "  ... the VC table's columns" '^NAME +GUARANTEED +USED +FREE +BORROWED$' sed -n 2p "$WORK/plain.out"
expect "  ... the VC: 16 GPUs guaranteed, the bound gang's 8 used, 8 free" '^[a-z0-9-]+ +16 +8 +8 +0$' sed -n 3p "$WORK/plain.out"
expect "  ... the waiting gang: its VC, 3 pods, 24 GPUs, an age and a reason" \
  '^big +default +0 +3 +24 +[0-9]+[smh][0-9smh]* +VC default has 8 of 16 .*GPUs free; .*needs 3 × 8' grep '^big' "$WORK/plain.out"
expect "  ... the bound gang does not wait" '^0$' sh -c "grep -c '^fits' '$WORK/plain.out'; true"
expect "  ... the PyTorchJob, Running" '^default +PyTorchJob +train +Running +[0-9]+[smh]' grep PyTorchJob "$WORK/plain.out"
expect "  ... the running task" '^default +TaskExecution +prep +Running ' grep prep "$WORK/plain.out"
expect "  ... not the finished one" '^0$' sh -c "grep -c ' done ' '$WORK/plain.out'; true"
expect "--finished shows it, Succeeded" '^default +TaskExecution +done +Succeeded ' sh -c "$KOZMO status --finished | grep ' done '"
expect "-n default drops the NAMESPACE column" '^KIND +NAME +PHASE +AGE$' sh -c "$KOZMO status -n default | sed -n '/^JOBS AND TASKS/{n;p}'"
expect "-n elsewhere lists no job" '^JOBS AND TASKS.\(none\)' sh -c "$KOZMO status -n elsewhere | sed -n '/^JOBS AND TASKS/,\$p' | tr '\n' '.'"

# ---- -o json / -o yaml: one document with the three lists ----
st -o json >"$WORK/status.json"
expect "-o json: the VC's numbers" '^16 8 8 0$' jq -r '.virtualClusters[0] | "\(.guaranteedGPUs) \(.usedGPUs) \(.freeGPUs) \(.borrowedGPUs)"' "$WORK/status.json"
expect "-o json: the waiting gang with its reason's kind" '^3 24 VirtualClusterFull VC default has 8 of 16 ' \
  jq -r '.waitingGangs[] | select(.name == "big") | "\(.pods) \(.gpus) \(.reasonKind) \(.reason)"' "$WORK/status.json"
expect "-o json: jobs and tasks with phase and age" '^PyTorchJob/train/Running/true TaskExecution/prep/Running/true $' \
  sh -c "jq -r '.jobsAndTasks[] | \"\(.kind)/\(.name)/\(.phase)/\(.ageSeconds >= 0)\"' '$WORK/status.json' | tr '\n' ' '"
expect "-o json: no errors key when all was read" '^false$' jq 'has("errors")' "$WORK/status.json"
st -o yaml >"$WORK/status.yaml"
expect "-o yaml reads back (PyYAML) as the same document as -o json, ages aside" '^same$' /usr/bin/python3 -c '
import json, sys, yaml
y = yaml.safe_load(open(sys.argv[1])); j = json.load(open(sys.argv[2]))
for d in (y, j):
    for g in d["waitingGangs"]: g.pop("waitingSeconds")
    for w in d["jobsAndTasks"]: w.pop("ageSeconds")
print("same" if y == j else "differ:\n%s\n%s" % (y, j))' "$WORK/status.yaml" "$WORK/status.json"

# ---- a terminal: script(1) gives a pty of 70 columns; the reason is cut with an ellipsis ----
script -qec "stty cols 70; COLUMNS= $KOZMO status 2>/dev/null" /dev/null | tr -d '\r' >"$WORK/tty.out"
expect "on a 70-column terminal the gang's line is cut to fit, ending in …" '^big .*…$' grep '^big' "$WORK/tty.out"
expect "  ... no line is wider than 70 columns" '^0$' /usr/bin/python3 -c \
  'import sys; print(sum(len(l.rstrip("\n")) > 70 for l in open(sys.argv[1], encoding="utf-8")))' "$WORK/tty.out"
script -qec "stty cols 70; COLUMNS= $KOZMO status -o wide 2>/dev/null" /dev/null | tr -d '\r' >"$WORK/wide.out"
KIND=$(jq -r '.waitingGangs[] | select(.name == "big") | .reasonKind' "$WORK/status.json")
REASON=$(jq -r '.waitingGangs[] | select(.name == "big") | .reason' "$WORK/status.json")
expect "-o wide on the terminal: the reason in full after its kind" '^yes$' /usr/bin/python3 -c '
import sys
line = [l.rstrip("\n") for l in open(sys.argv[1], encoding="utf-8") if l.startswith("big")][0]
print("yes" if line.endswith(sys.argv[2] + "   " + sys.argv[3]) else line)' "$WORK/wide.out" "$KIND" "$REASON"

# ---- --watch: not a terminal, snapshots one after another; under tmux, redrawn in place ----
timeout -s INT --preserve-status 4 "$KOZMO" status --watch --interval 0.5 >"$WORK/watch.out" 2>&1; rc=$?
expect "--watch on a pipe ends on Ctrl-C (SIGINT) with 0" '^0$' echo "$rc"
expect "  ... having printed several snapshots, a blank line between them" '^([2-9]|[1-9][0-9]+) ok$' sh -c \
  "n=\$(grep -c '^VIRTUAL CLUSTERS' '$WORK/watch.out'); b=\$(grep -B1 '^VIRTUAL CLUSTERS' '$WORK/watch.out' | grep -c '^\$'); [ \$b -eq \$((n - 1)) ] && echo \"\$n ok\" || echo \"\$n snapshots, \$b blank\""
tmux -L "$TMUX_SOCKET" new-session -d -s status -x 90 -y 40 "KUBECONFIG=$KUBECONFIG $KOZMO status --watch --interval 0.3; echo exited=\$?; sleep 30"
screen() { tmux -L "$TMUX_SOCKET" capture-pane -p -t status; }
within 20 "under tmux, --watch shows the tables" '^big ' screen
sleep 1
expect "  ... redrawn in place: one snapshot on the screen" '^1$' sh -c "tmux -L $TMUX_SOCKET capture-pane -p -t status | grep -c '^VIRTUAL CLUSTERS'"
expect "  ... the reason cut to the 90 columns" '^big .*…$' sh -c "tmux -L $TMUX_SOCKET capture-pane -p -t status | grep '^big'"
tmux -L "$TMUX_SOCKET" send-keys -t status C-c
within 10 "  ... Ctrl-C ends it with 0" 'exited=0' screen

# ---- kubectl kozmo: the same binary as a kubectl plugin ----
mkdir -p "$WORK/bin" && ln -s "$KOZMO" "$WORK/bin/kubectl-kozmo"
expect "kubectl plugin list finds kubectl-kozmo" 'kubectl-kozmo' env PATH="$WORK/bin:$PATH" kubectl plugin list
expect "kubectl kozmo status (KUBECONFIG from the environment) shows the VC" '^[a-z0-9-]+ +16 +8 +8 +0$' \
  sh -c "PATH='$WORK/bin:$PATH' kubectl kozmo status | sed -n 3p"
expect "kubectl kozmo status -o json lists the waiting gang" '^big$' \
  sh -c "PATH='$WORK/bin:$PATH' kubectl kozmo status -o json | jq -r '.waitingGangs[].name'"
expect_fail "kubectl kozmo names itself in its errors" '^kubectl kozmo: .*unknown command' env PATH="$WORK/bin:$PATH" kubectl kozmo nonsense

# ---- --inspect-url: the same server named directly ----
expect "--inspect-url at the server's own address (its CA from the kubeconfig)" '^big ' \
  sh -c "$KOZMO status --inspect-url '$(server_url)' | grep '^big'"

kubectl config view --raw -o 'jsonpath={.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$WORK/ca.crt"
expect "--inspect-url with --inspect-ca (the server's CA as a file)" '^big ' \
  sh -c "$KOZMO status --inspect-url '$(server_url)' --inspect-ca '$WORK/ca.crt' | grep '^big'"
expect_fail "--inspect-ca that cannot be read: said, exit 1" "^kozmo status: --inspect-ca $WORK/none.crt: cannot be read" \
  "$KOZMO" status --inspect-url "$(server_url)" --inspect-ca "$WORK/none.crt"

# ---- what goes wrong, said in one line, exit 1 ----
sed "s#server: .*#server: https://127.0.0.1:1#" "$KUBECONFIG" >"$WORK/unreachable.kubeconfig"
"$KOZMO" status --kubeconfig "$WORK/unreachable.kubeconfig" >"$WORK/unr.out" 2>"$WORK/unr.err"; rc=$?
expect "an unreachable server: exit 1" '^1$' echo "$rc"
expect "  ... one line on stderr naming it" '^1 kozmo status: cannot reach https://127.0.0.1:1' sh -c "echo \$(wc -l <'$WORK/unr.err') \$(cat '$WORK/unr.err')"
expect "  ... the sections say they could not be read" '^3$' grep -c 'could not be read' "$WORK/unr.out"
cp "$KUBECONFIG" "$WORK/badtoken.kubeconfig"
USER_NAME=$(kubectl --kubeconfig "$WORK/badtoken.kubeconfig" config view -o 'jsonpath={.users[0].name}')
kubectl --kubeconfig "$WORK/badtoken.kubeconfig" config unset "users.$USER_NAME.client-certificate-data" >/dev/null
kubectl --kubeconfig "$WORK/badtoken.kubeconfig" config unset "users.$USER_NAME.client-key-data" >/dev/null
kubectl --kubeconfig "$WORK/badtoken.kubeconfig" config set-credentials "$USER_NAME" --token=not-a-token >/dev/null
"$KOZMO" status --kubeconfig "$WORK/badtoken.kubeconfig" >"$WORK/401.out" 2>"$WORK/401.err"; rc=$?
expect "a token the server refuses: exit 1" '^1$' echo "$rc"
expect "  ... and says 401 Unauthorized" 'kozmo status: .*401 Unauthorized' cat "$WORK/401.err"
expect_fail "--interval below 0.2 is refused" 'outside 0.2..3600' "$KOZMO" status --watch --interval 0.1
expect_fail "an unknown output format is refused" 'not one of wide, json, yaml' "$KOZMO" status -o table

e2e_finish status
