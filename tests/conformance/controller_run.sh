#!/usr/bin/env bash
# Conformance: `kozmo controller` as deploy/ installs it, on a real Kubernetes v1.20.2 control
# plane (kube-apiserver with RBAC + kube-controller-manager for ServiceAccount tokens and garbage
# collection + kube-scheduler for the CPU task pods, from ../shared/tools/real-k8s):
#  - `kubectl apply -k deploy/` installs everything (the Deployment's pods stay Pending: no kubelet);
#  - two `kozmo controller` processes run on this host with a kubeconfig holding the
#    ServiceAccount kozmo-system/kozmo-controller's token, so deploy/'s RBAC is exactly what they
#    may do; simulated GPU nodes come from `kozmo kubelet` (admin credentials, it is not Kozmo);
#  - one leads (the Lease, an Event, the leading gauge); a 4x2 GPU gang with schedulerName: kozmo
#    is bound with bind-info; a GPU PyTorchJob, a container and a pytorch TaskExecution succeed;
#  - /metrics over TLS: 401 without a token, 403 for a token without the right, 200 for a
#    ServiceAccount bound to deploy/'s kozmo-metrics-reader;
#  - `kozmo status --inspect-url` at the leader's address, as a user with docs/status.md's
#    ClusterRole: the VC's GPUs and the waiting 16-GPU pod (tables and -o json); a bad token: 401;
#  - kill -9 of the leader: the standby leads within leaseDuration + its jittered retries, binds a
#    new gang, and no GPU is held by two live pods;
#  - neither controller's log shows a forbidden request.
#
# Usage: controller_run.sh REPO KOZMO [RULE-TO-DROP]
#   RULE-TO-DROP (an index into deploy/controller/clusterrole.yaml's rules) runs the same checks
#   with that rule removed, to show that it is needed (tests/conformance/rbac_needed.sh).
# Env: KOZMO_CONFORMANCE_KEEP=1  keep the run directory (logs, PKI) for a look afterwards
set -uo pipefail

REPO=${1:?usage: controller_run.sh REPO KOZMO [RULE-TO-DROP]}
KOZMO=${2:?kozmo executable}
DROP=${3:-}

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
conformance_init controller-conformance
conformance_find_tools "$REPO"
CTRL_PID=""
conformance_make_rundir kozmo-controller-conformance --child CTRL_PID kubelet.pid \
  --show-logs controller-a.log controller-b.log kubelet.log kube-apiserver.log

conformance_start_control_plane --scheduler --controller-manager
ok "kube-apiserver v1.20.2 is up (RBAC on)"

# deploy/ as a user applies it; with RULE-TO-DROP, the ClusterRole without that rule.
DEPLOY=$RUNDIR/deploy
cp -r "$REPO/deploy" "$DEPLOY"
if [ -n "$DROP" ]; then
  python3 - "$DEPLOY/controller/clusterrole.yaml" "$DROP" <<'EOF' || { bad "rule $DROP can be dropped"; finish; }
import sys, yaml
path, drop = sys.argv[1], int(sys.argv[2])
docs = list(yaml.safe_load_all(open(path)))
role = next(d for d in docs if d and d.get("kind") == "ClusterRole" and d["metadata"]["name"] == "kozmo-controller")
gone = role["rules"].pop(drop)
print("dropped:", gone, file=sys.stderr)
yaml.safe_dump_all(docs, open(path, "w"))
EOF
  log "ClusterRole kozmo-controller without rule $DROP"
fi
# --validate=false: v1.20's kubectl-side check refuses trainjobs.yaml's x-kubernetes-validations,
# which the v1.20 server accepts and drops (docs/trainer.md, "CRDs and built-in runtimes").
expect "kubectl apply -k deploy/ installs Kozmo" 'deployment.apps/kozmo-controller created' k apply --validate=false -k "$DEPLOY"
within 30 "the TaskExecution CRD is established" 'True' \
  k get crd taskexecutions.kozmo.io -o 'jsonpath={.status.conditions[?(@.type=="Established")].status}'
within 30 "the ClusterTrainingRuntime CRD is established" 'True' \
  k get crd clustertrainingruntimes.trainer.kubeflow.org -o 'jsonpath={.status.conditions[?(@.type=="Established")].status}'
expect "kubectl apply -f deploy/runtimes/ then creates the built-in runtimes" 'torch-distributed created' \
  k apply -f "$DEPLOY/runtimes/"
within 30 "the ServiceAccount's token exists" 'kozmo-controller-token' \
  k -n kozmo-system get serviceaccount kozmo-controller -o 'jsonpath={.secrets[*].name}'

# sa_kubeconfig NS NAME FILE: a kubeconfig for that ServiceAccount's token (v1.20: its Secret).
sa_token() {
  local secret
  secret=$(k -n "$1" get serviceaccount "$2" -o 'jsonpath={.secrets[0].name}')
  k -n "$1" get secret "$secret" -o 'jsonpath={.data.token}' | base64 -d
}
sa_kubeconfig() {
  cat >"$3" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: real
  cluster:
    server: $(k config view --raw -o 'jsonpath={.clusters[0].cluster.server}')
    certificate-authority-data: $(k config view --raw -o 'jsonpath={.clusters[0].cluster.certificate-authority-data}')
users:
- name: $2
  user:
    token: $(sa_token "$1" "$2")
contexts:
- name: real
  context: {cluster: real, user: $2}
current-context: real
EOF
}
sa_kubeconfig kozmo-system kozmo-controller "$RUNDIR/kozmo-sa.kubeconfig"
expect "the controller's kubeconfig authenticates as its ServiceAccount (its Lease Role applies)" '^yes' \
  kubectl --kubeconfig "$RUNDIR/kozmo-sa.kubeconfig" auth can-i update leases/kozmo-controller -n kozmo-system

log "starting kozmo kubelet (2 simulated nodes of 8 GPUs, admin credentials)"
"$KOZMO" kubelet --kubeconfig "$KC" --nodes 2 --gpus-per-node 8 --node-prefix ctl >"$RUNDIR/kubelet.log" 2>&1 &
CTRL_PID=$!
echo "$CTRL_PID" >"$RUNDIR/kubelet.pid"
within 30 "the simulated GPU nodes register" 'ctl-1' k get nodes

cat >"$RUNDIR/kozmo.yaml" <<EOF
leaderElection:
  leaseDuration: 4s
  renewDeadline: 3s
  retryPeriod: 1s
client: {qps: 200, burst: 400}
EOF
conformance_free_ports 4
BASE=$FREE_PORT
start_controller() { # NAME METRICS-PORT PROBE-PORT
  POD_NAME=kozmo-controller-$1 POD_NAMESPACE=kozmo-system setsid "$KOZMO" controller \
    --kubeconfig "$RUNDIR/kozmo-sa.kubeconfig" --config "$RUNDIR/kozmo.yaml" --leader-elect \
    --metrics-bind-address "127.0.0.1:$2" --metrics-secure --health-probe-bind-address "127.0.0.1:$3" \
    >"$RUNDIR/controller-$1.log" 2>&1 </dev/null &
  echo "kozmo $!" >>"$RUNDIR/pids"
  eval "PID_$1=$!"
}
start_controller a "$BASE" $((BASE + 1))
start_controller b $((BASE + 2)) $((BASE + 3))
metrics_port() { [ "$1" = a ] && echo "$BASE" || echo $((BASE + 2)); }

holder() { k -n kozmo-system get lease kozmo-controller -o 'jsonpath={.spec.holderIdentity}'; }
within 20 "one replica holds the Lease" 'kozmo-controller-[ab]_' holder
leader_log() { grep -l "now leads" "$RUNDIR"/controller-a.log "$RUNDIR"/controller-b.log 2>/dev/null; }
within 10 "the replica that says it leads is the Lease's holder" 'controller-[ab].log' leader_log
sleep 2
expect "exactly one replica leads" '^1$' sh -c "grep -l 'now leads' $RUNDIR/controller-a.log $RUNDIR/controller-b.log | wc -l"
LEADER=$(leader_log | sed 's/.*controller-\(.\)\.log/\1/')
STANDBY=$([ "$LEADER" = a ] && echo b || echo a)
expect "the Lease's holder is the leader's pod name with a suffix" "^kozmo-controller-${LEADER}_" holder
within 20 "an Event on the Lease says who became leader" "kozmo-controller-${LEADER}_[a-z0-9]* became leader" \
  k -n kozmo-system get events --field-selector involvedObject.kind=Lease -o 'jsonpath={.items[*].message}'

# /metrics: TLS, TokenReview and SubjectAccessReview.
NS=ctl-$RANDOM
expect "a namespace for the workloads" "namespace/$NS created" k create namespace "$NS"
within 30 "the namespace's default ServiceAccount has its token" 'default-token' \
  k -n "$NS" get serviceaccount default -o 'jsonpath={.secrets[*].name}'
expect "a ServiceAccount for a scraper" 'created' k -n "$NS" create serviceaccount scraper
expect "bound to deploy/'s kozmo-metrics-reader" 'created' \
  k create clusterrolebinding "kozmo-metrics-$NS" --clusterrole kozmo-metrics-reader --serviceaccount "$NS:scraper"
within 30 "the scraper's token exists" 'scraper-token' k -n "$NS" get serviceaccount scraper -o 'jsonpath={.secrets[*].name}'
SCRAPER=$(sa_token "$NS" scraper)
NOBODY=$(sa_token "$NS" default)
scrape() { # PORT [TOKEN]: the HTTP status of GET /metrics
  curl -sk -o "$RUNDIR/scrape.out" -w '%{http_code}' ${2:+-H "Authorization: Bearer $2"} "https://127.0.0.1:$1/metrics"
}
MP=$(metrics_port "$LEADER")
expect "/metrics without a token: 401" '^401$' scrape "$MP"
expect "/metrics with a token the cluster does not know: 401" '^401$' scrape "$MP" not-a-token
expect "/metrics with a token lacking the right: 403" '^403$' scrape "$MP" "$NOBODY"
expect "the 403 names the user" "system:serviceaccount:$NS:default" cat "$RUNDIR/scrape.out"
expect "/metrics with the scraper's token: 200" '^200$' scrape "$MP" "$SCRAPER"
expect "the leader's gauge says it leads" '^kozmo_leader_election_leading 1' cat "$RUNDIR/scrape.out"
expect "the standby's gauge says it does not" '^kozmo_leader_election_leading 0' \
  sh -c "curl -sk -H 'Authorization: Bearer $SCRAPER' https://127.0.0.1:$(metrics_port "$STANDBY")/metrics"
expect "/metrics is not served as plain HTTP" '^000$' \
  sh -c "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$MP/metrics; true"
expect "a 401 asks for a bearer token" 'WWW-Authenticate: Bearer' \
  sh -c "curl -sk -i https://127.0.0.1:$MP/metrics | tr -d '\r'"
expect "the probes stay plain and open: /readyz" '^ok$' curl -sf "http://127.0.0.1:$((BASE + 1))/readyz"

# A 4x2 GPU gang for Kozmo's scheduler.
gang() { # NAME
  local i
  for i in 0 1 2 3; do
    cat <<EOF
---
apiVersion: v1
kind: Pod
metadata:
  name: $1-$i
  namespace: $NS
  annotations:
    kozmo.io/gang: $1
    kozmo.io/gang-members: "4x2"
    kozmo.io/sim-duration: forever
spec:
  schedulerName: kozmo
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: busybox
    resources:
      limits: {nvidia.com/gpu: 2}
EOF
  done
}
bound() { # PREFIX: its pods bound with bind-info
  k -n "$NS" get pods -o 'jsonpath={range .items[*]}{.metadata.name}{" "}{.spec.nodeName}{" "}{.metadata.annotations.hivedscheduler\.microsoft\.com/pod-bind-info}{"\n"}{end}' |
    awk -v p="$1-" 'index($1, p) == 1 && $2 != "" && $3 != "" { n++ } END { print n + 0 }'
}
expect "create a 4x2 gang" 'created' k apply -f - <<<"$(gang g1)"
within 30 "the leader binds the 4x2 gang with bind-info" '^4$' bound g1

# A pod no node can hold: the scheduler tells it why (PodScheduled=False, Unschedulable).
expect "create a 16-GPU pod (nodes have 8)" 'created' k create -f - <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: too-big
  namespace: $NS
spec:
  schedulerName: kozmo
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: busybox
    resources:
      limits: {nvidia.com/gpu: 16}
EOF
within 30 "the scheduler marks it Unschedulable" '^False Unschedulable' \
  k -n "$NS" get pod too-big -o 'jsonpath={.status.conditions[?(@.type=="PodScheduled")].status} {.status.conditions[?(@.type=="PodScheduled")].reason}'
# `kozmo status` against the leader's inspect address, as a user whose ServiceAccount may read
# inspect and list jobs and tasks (docs/status.md's ClusterRole), with its token in a kubeconfig.
expect "a ClusterRole for kozmo status, bound to a user's ServiceAccount" 'created' k apply -f - <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: kozmo-status-reader-$NS}
rules:
- nonResourceURLs: ["/v1/inspect/*"]
  verbs: [get]
- apiGroups: [kubeflow.org]
  resources: [pytorchjobs, tfjobs, mpijobs, xgboostjobs, paddlejobs, jaxjobs, caffe2jobs]
  verbs: [list]
- apiGroups: [trainer.kubeflow.org]
  resources: [trainjobs]
  verbs: [list]
- apiGroups: [kozmo.io]
  resources: [taskexecutions]
  verbs: [list]
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: status-user, namespace: $NS}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: kozmo-status-reader-$NS}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kozmo-status-reader-$NS}
subjects:
- {kind: ServiceAccount, name: status-user, namespace: $NS}
EOF
within 30 "the status user's token exists" 'status-user-token' k -n "$NS" get serviceaccount status-user -o 'jsonpath={.secrets[*].name}'
sa_kubeconfig "$NS" status-user "$RUNDIR/status-user.kubeconfig"
kstatus() { # PORT [FLAGS...]: kozmo status against the inspect address on PORT, as the status user
  local port=$1
  shift
  "$KOZMO" status --kubeconfig "$RUNDIR/status-user.kubeconfig" --inspect-url "https://127.0.0.1:$port" \
    --insecure-skip-tls-verify "$@"
}
kstatus "$MP" >"$RUNDIR/status.out" 2>"$RUNDIR/status.err"
expect "kozmo status --inspect-url (the leader): exit 0, nothing on stderr" '^0 0$' echo "$? $(wc -c <"$RUNDIR/status.err")"
expect "  ... the VC 'default': 16 GPUs, the bound gang's 8 used, 8 free" '^default +16 +8 +8 +0$' \
  sed -n '/^VIRTUAL CLUSTERS/,/^$/p' "$RUNDIR/status.out"
expect "  ... the 16-GPU pod waits, with a reason" "^$NS/too-big +default +[0-9]+ +1 +16 +[0-9]+[smh][0-9smh]* +[A-Za-z]" \
  sed -n '/^WAITING GANGS/,/^$/p' "$RUNDIR/status.out"
status_json() { kstatus "$MP" -o json | jq -r '"\(.virtualClusters[0].usedGPUs) \([.waitingGangs[] | select(.name | endswith("/too-big"))] | length)"'; }
expect "  ... -o json says the same" '^8 1$' status_json
kstatus "$(metrics_port "$STANDBY")" >"$RUNDIR/status-standby.out" 2>"$RUNDIR/status-standby.err"
expect "  ... at the standby's address: exit 1 (its scheduler does not run)" '^1$' echo "$?"
expect "  ... saying so in one line on stderr" '^kozmo status: .*503' cat "$RUNDIR/status-standby.err"
expect "  ... and still listing the jobs it could read" '^JOBS AND TASKS$' grep '^JOBS AND TASKS' "$RUNDIR/status-standby.out"
sed 's/^\(    token:\).*/\1 not-a-token/' "$RUNDIR/status-user.kubeconfig" >"$RUNDIR/bad-token.kubeconfig"
"$KOZMO" status --kubeconfig "$RUNDIR/bad-token.kubeconfig" --inspect-url "https://127.0.0.1:$MP" \
  --insecure-skip-tls-verify >"$RUNDIR/status-401.out" 2>"$RUNDIR/status-401.err"
expect "  ... a token the cluster does not know: exit 1" '^1$' echo "$?"
expect "  ... the inspect address's 401, said on stderr" \
  "^kozmo status: the GPU scheduler's cell map: 401 Unauthorized at https://127.0.0.1:$MP/v1/inspect/cellmap" cat "$RUNDIR/status-401.err"

k -n "$NS" delete pod too-big --wait=false >/dev/null

expect "create a PyTorchJob of two 2-GPU pods" 'created' k create -f - <<EOF
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: train
  namespace: $NS
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        metadata:
          annotations: {kozmo.io/sim-duration: "3s", kozmo.io/sim-pull-duration: "200ms"}
        spec:
          containers:
          - name: pytorch
            image: kubeflowkatib/pytorch-mnist:v1beta1-45c5727
            resources: {limits: {nvidia.com/gpu: 2}}
    Worker:
      replicas: 1
      restartPolicy: OnFailure
      template:
        metadata:
          annotations: {kozmo.io/sim-duration: "3s", kozmo.io/sim-pull-duration: "200ms"}
        spec:
          containers:
          - name: pytorch
            image: kubeflowkatib/pytorch-mnist:v1beta1-45c5727
            resources: {limits: {nvidia.com/gpu: 2}}
EOF
within 60 "the PyTorchJob reaches Succeeded" 'Succeeded=True' \
  k -n "$NS" get pytorchjob train -o 'jsonpath={range .status.conditions[*]}{.type}={.status} {end}'

# An MPIJob: its launcher's ServiceAccount, Role and RoleBinding and the hostfile ConfigMap are
# Kozmo's to create (CPU pods: kube-scheduler places them on the simulated nodes).
expect "create an MPIJob (launcher + 2 workers)" 'created' k create -f - <<EOF
apiVersion: kubeflow.org/v1
kind: MPIJob
metadata:
  name: mpi
  namespace: $NS
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        metadata:
          annotations: {kozmo.io/sim-duration: "3s"}
        spec:
          containers:
          - name: launcher
            image: docker.io/kubeflow/mpi-horovod-mnist
    Worker:
      replicas: 2
      template:
        metadata:
          annotations: {kozmo.io/sim-duration: forever}
        spec:
          containers:
          - name: worker
            image: docker.io/kubeflow/mpi-horovod-mnist
EOF
within 30 "its launcher's Role lets it exec into the workers" 'mpi-worker-0 mpi-worker-1' \
  k get role mpi-launcher -n "$NS" -o 'jsonpath={.rules[1].resourceNames[*]}'
within 30 "its RoleBinding names the launcher's ServiceAccount" 'mpi-launcher' \
  k get rolebinding mpi-launcher -n "$NS" -o 'jsonpath={.subjects[0].name}'
within 90 "the MPIJob reaches Succeeded" 'Succeeded=True' \
  k -n "$NS" get mpijob mpi -o 'jsonpath={range .status.conditions[*]}{.type}={.status} {end}'

expect "create a container TaskExecution in a pool of one" 'created' k create -f - <<EOF
apiVersion: kozmo.io/v1alpha1
kind: ResourcePool
metadata:
  name: ctl-pool-$NS
spec:
  quota: 1
---
apiVersion: kozmo.io/v1alpha1
kind: TaskExecution
metadata:
  name: hello
  namespace: $NS
  annotations: {kozmo.io/sim-duration: "2s"}
spec:
  type: container
  resourcePool: ctl-pool-$NS
  container:
    image: busybox:1.36
    command: ["sh", "-c", "echo hello"]
    resources:
      requests: {cpu: 100m, memory: 64Mi}
EOF
within 60 "the TaskExecution reaches Succeeded" '^Succeeded$' k -n "$NS" get taskexecution hello -o 'jsonpath={.status.phase}'
within 30 "its pool's token is given back" '^0$' \
  sh -c "kubectl --kubeconfig '$KC' get resourcepool ctl-pool-$NS -o 'jsonpath={.status.inUse}' | sed 's/^$/0/'"

# A training task: its attempt is a PyTorchJob the task controller creates and watches.
REPLICA='{metadata: {annotations: {kozmo.io/sim-duration: "2s", kozmo.io/sim-pull-duration: "200ms"}},
          spec: {containers: [{name: pytorch, image: kubeflowkatib/pytorch-mnist:v1beta1-45c5727, resources: {limits: {nvidia.com/gpu: 2}}}]}}'
expect "create a pytorch TaskExecution (master + worker, 2 GPUs each)" 'created' k create -f - <<EOF
apiVersion: kozmo.io/v1alpha1
kind: TaskExecution
metadata:
  name: train-task
  namespace: $NS
spec:
  type: pytorch
  job:
    pytorchReplicaSpecs:
      Master: {replicas: 1, template: $REPLICA}
      Worker: {replicas: 1, template: $REPLICA}
EOF
within 30 "the task's attempt is a PyTorchJob it owns" '^TaskExecution$' \
  k -n "$NS" get pytorchjob train-task-0 -o 'jsonpath={.metadata.ownerReferences[0].kind}'
within 60 "the pytorch TaskExecution reaches Succeeded" '^Succeeded$' \
  k -n "$NS" get taskexecution train-task -o 'jsonpath={.status.phase}'

# The output cache through the real API server: TaskCacheEntry objects, two identical
# serializable tasks running one pod, a later identical task completing as CacheHit.
cached_task() { # NAME
  cat <<EOF
---
apiVersion: kozmo.io/v1alpha1
kind: TaskExecution
metadata:
  name: $1
  namespace: $NS
  annotations: {kozmo.io/sim-duration: "3s"}
spec:
  type: container
  container:
    image: busybox:1.36
    command: ["sh", "-c", "tr a-z A-Z < /var/kozmo/inputs/text"]
    resources:
      requests: {cpu: 100m, memory: 64Mi}
  inputs: {text: "s3://bucket/in/text.txt"}
  outputPrefix: "s3://bucket/out/$1/"
  cache: {enabled: true, version: "1", serializable: true}
EOF
}
expect "create two identical serializable cached tasks together" 'cached-2 created' k create -f - <<<"$(cached_task cached-1; cached_task cached-2)"
within 30 "one waits for the other's outputs" 'WaitingForCache' \
  k -n "$NS" get taskexecution cached-1 cached-2 -o 'jsonpath={.items[*].status.phase}'
within 60 "both reach Succeeded" '^Succeeded Succeeded$' \
  k -n "$NS" get taskexecution cached-1 cached-2 -o 'jsonpath={.items[*].status.phase}'
expect "one of them as CacheHit" '^1$' sh -c \
  "kubectl --kubeconfig '$KC' -n $NS get taskexecution cached-1 cached-2 -o 'jsonpath={.items[*].status.reason}' | grep -o CacheHit | wc -l"
expect "they ran one pod" '^1$' sh -c \
  "kubectl --kubeconfig '$KC' -n $NS get pods -l 'kozmo.io/task-name in (cached-1,cached-2)' -o name | wc -l"
expect "kubectl get taskcacheentries shows the stored outputs" "$NS/cached-[12] +s3://bucket/out/cached-[12]/" \
  k -n "$NS" get taskcacheentries

# Take-over.
eval "kill -9 \$PID_$LEADER"
KILLED=$(date +%s.%N)
within 20 "the standby leads after the leader's kill -9" "now leads" cat "$RUNDIR/controller-$STANDBY.log"
TOOK=$(echo "$(date +%s.%N) - $KILLED" | bc)
echo "     (take-over after ${TOOK} s; lease 4 s, retry 1-2.2 s)"
expect "take-over within leaseDuration + twice the jittered retry" '^1$' sh -c "echo '$TOOK <= 4 + 2 * 2.2 + 1' | bc"
expect "create a second 4x2 gang" 'created' k apply -f - <<<"$(gang g2)"
within 30 "the new leader binds it" '^4$' bound g2
dups() { # GPUs (node/index) held by more than one live pod
  k -n "$NS" get pods --field-selector=status.phase!=Succeeded,status.phase!=Failed \
    -o 'jsonpath={range .items[*]}{.spec.nodeName}{" "}{.metadata.annotations.hivedscheduler\.microsoft\.com/pod-leaf-cell-isolation}{"\n"}{end}' |
    awk '$2 != "" { n = split($2, g, ","); for (i = 1; i <= n; i++) print $1 "/" g[i] }' | sort | uniq -d | wc -l
}
expect "no GPU is held by two live pods" '^0$' dups
expect "create a third identical cached task after the take-over" 'created' k create -f - <<<"$(cached_task cached-3)"
within 30 "the new leader completes it as CacheHit from the stored entry" '^Succeeded/CacheHit$' \
  k -n "$NS" get taskexecution cached-3 -o 'jsonpath={.status.phase}/{.status.reason}'
expect "the new leader's /metrics answers the scraper" '^200$' scrape "$(metrics_port "$STANDBY")" "$SCRAPER"

# RBAC was enough: no request of either controller was refused.
expect "no forbidden request in the controllers' logs" '^0$' \
  sh -c "cat '$RUNDIR/controller-a.log' '$RUNDIR/controller-b.log' | sed 's/^[0-9:.]* //' | grep -iE 'forbidden|\b403\b' | grep -vcE '\b403 ms\b'; true"

finish
