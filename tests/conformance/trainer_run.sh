#!/usr/bin/env bash
# Conformance: the TrainJob controller (Kubeflow Trainer v2, in `kozmo kubelet --training`) against
# a real Kubernetes v1.20.2 control plane (kube-apiserver + etcd + kube-scheduler +
# kube-controller-manager from ../shared/tools/real-k8s): the Trainer CRDs from deploy/crds
# (--validate=false: v1.20 has no x-kubernetes-validations) and the built-in runtimes from
# deploy/runtimes; then what a user sees of a TrainJob's life:
#   - a CPU-only 2-node torch TrainJob placed by kube-scheduler: pods with JobSet's labels and
#     torchrun's PET_* env, the headless Service, the runtime snapshot ConfigMap, then Complete;
#   - suspend and resume; a runtime edited mid-run leaves the job on its snapshot;
#   - activeDeadlineSeconds → Failed/DeadlineExceeded; a missing runtime → TrainingRuntimeNotFound;
#   - kubectl delete trainjob → the real garbage collector removes its pods, Service and snapshot;
#   - kubectl explain trainjob.spec.trainer against v1.20's published schema;
#   - a 2-node x 2-GPU TrainJob bound as one gang by `kozmo controller --enable scheduler`.
#
# Usage: trainer_run.sh REPO KOZMO
# Env: KOZMO_CONFORMANCE_KEEP=1  keep the run directory (logs, PKI) for a look afterwards
set -uo pipefail

REPO=${1:?usage: trainer_run.sh REPO KOZMO}
KOZMO=${2:?kozmo executable}

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
conformance_init trainer-conformance
conformance_find_tools "$REPO"
CTRL_PID=""
conformance_make_rundir kozmo-trainer-conformance --child CTRL_PID kozmo.pid \
  --show-logs kozmo.log scheduler.log kube-apiserver.log kube-controller-manager.log

conformance_start_control_plane --scheduler --controller-manager
ok "kube-apiserver v1.20.2 is up"

# ---- the CRDs and the built-in runtimes ----
expect "the CRDs apply with --validate=false" 'trainjobs.trainer.kubeflow.org (created|configured)' \
  k apply --validate=false -f "$REPO/deploy/crds/"
for crd in trainjobs trainingruntimes clustertrainingruntimes; do
  within 30 "the $crd CRD is established" 'True' \
    k get crd "$crd.trainer.kubeflow.org" -o 'jsonpath={.status.conditions[?(@.type=="Established")].status}'
done
expect "the five built-in ClusterTrainingRuntimes apply" 'torch-distributed created' k apply -f "$REPO/deploy/runtimes/"
expect "each carries its framework label" '^deepspeed jax mlx torch xgboost$' \
  k get clustertrainingruntimes -o 'jsonpath={.items[*].metadata.labels.trainer\.kubeflow\.org/framework}'
# v1.20 publishes a CRD's schema into /openapi/v2 a few seconds after it is established.
explain_fields() { k explain trainjob.spec.trainer | grep -oE '^ +(image|numNodes|resourcesPerNode)\b' | tr -d ' ' | sort | tr '\n' ' '; }
within 60 "kubectl explain trainjob.spec.trainer describes image, numNodes and resourcesPerNode" \
  '^image numNodes resourcesPerNode $' explain_fields

log "starting kozmo kubelet --training (2 simulated nodes of 4 GPUs + the training controllers)"
"$KOZMO" kubelet --kubeconfig "$KC" --nodes 2 --gpus-per-node 4 --node-prefix conf --training --log-level debug \
  >"$RUNDIR/kozmo.log" 2>&1 &
CTRL_PID=$!
echo "$CTRL_PID" >"$RUNDIR/kozmo.pid"
NS=conf-trainer-$RANDOM
expect "a namespace for the jobs" "namespace/$NS created" k create namespace "$NS"
within 30 "the simulated nodes register" 'conf-1' k get nodes
within 30 "the namespace's default service account exists" 'default' k get serviceaccount default -n "$NS"

# trainjob NAME RUNTIME DURATION [KIND] [EXTRA SPEC LINES]: a 2-node TrainJob whose `node` pods the
# simulated kubelet runs for DURATION (set through runtimePatches, as a user or Kueue would).
trainjob() {
  cat <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: $1
  namespace: $NS
spec:
  runtimeRef:
    name: $2
    kind: ${4:-ClusterTrainingRuntime}
  trainer:
    numNodes: 2
    resourcesPerNode:
      requests: {cpu: 100m, memory: 64Mi}
${5:-}
  runtimePatches:
  - manager: conformance.kozmo.io/sim
    trainingRuntimeSpec:
      template:
        spec:
          replicatedJobs:
          - name: node
            template:
              spec:
                template:
                  metadata:
                    annotations:
                      kozmo.io/sim-duration: "$3"
                      kozmo.io/sim-pull-duration: 200ms
EOF
}
conditions() { k get trainjob "$1" -n "$NS" -o 'jsonpath={range .status.conditions[*]}{.type}={.status} {end}'; }
condition() { # NAME TYPE: "status reason message"
  k get trainjob "$1" -n "$NS" -o "jsonpath={.status.conditions[?(@.type==\"$2\")].status} {.status.conditions[?(@.type==\"$2\")].reason} {.status.conditions[?(@.type==\"$2\")].message}"
}
pods_of() { k get pods -n "$NS" -l "jobset.sigs.k8s.io/jobset-name=$1" -o name | grep -c . || true; }
running_of() { k get pods -n "$NS" -l "jobset.sigs.k8s.io/jobset-name=$1" --field-selector status.phase=Running -o name | grep -c . || true; }
jobs_status() {
  k get trainjob "$1" -n "$NS" -o 'jsonpath={range .status.jobsStatus[*]}{.name},{.ready},{.succeeded},{.failed},{.active},{.suspended} {end}'
}

# ---- a CPU-only torch TrainJob, placed by kube-scheduler ----
expect "create a 2-node CPU-only TrainJob on torch-distributed" 'created' \
  k create -f - <<<"$(trainjob mnist torch-distributed 6s)"
within 30 "its 2 pods are created" '^2$' pods_of mnist
expect "they are named <job>-node-0-<index>" '^mnist-node-0-0 mnist-node-0-1$' \
  k get pods -n "$NS" -l jobset.sigs.k8s.io/jobset-name=mnist -o 'jsonpath={.items[*].metadata.name}'
within 30 "kube-scheduler places both on the simulated nodes" '^conf-[01] conf-[01]$' \
  k get pods -n "$NS" -l jobset.sigs.k8s.io/jobset-name=mnist -o 'jsonpath={.items[*].spec.nodeName}'
expect "no GPUs: the default scheduler's pods, no gang" '^default-scheduler,;default-scheduler,;$' \
  k get pods -n "$NS" -l jobset.sigs.k8s.io/jobset-name=mnist -o 'jsonpath={range .items[*]}{.spec.schedulerName},{.metadata.annotations.kozmo\.io/gang};{end}'
expect "pod 1 carries JobSet's labels and the ancestor step" '^mnist node 1 trainer$' \
  k get pod mnist-node-0-1 -n "$NS" -o 'jsonpath={.metadata.labels.jobset\.sigs\.k8s\.io/jobset-name} {.metadata.labels.jobset\.sigs\.k8s\.io/replicatedjob-name} {.metadata.labels.batch\.kubernetes\.io/job-completion-index} {.metadata.labels.trainer\.kubeflow\.org/trainjob-ancestor-step}'
# (PET_NPROC_PER_NODE: "auto" without GPUs is the CPU count, 100m rounded up to 1.)
expect "pod 1 is torchrun's node 1 of 2 with 1 process, rendezvous at node 0 through the Service" '^2 1 1 mnist-node-0-0.mnist 29500$' \
  k get pod mnist-node-0-1 -n "$NS" -o 'jsonpath={.spec.containers[0].env[?(@.name=="PET_NNODES")].value} {.spec.containers[0].env[?(@.name=="PET_NODE_RANK")].value} {.spec.containers[0].env[?(@.name=="PET_NPROC_PER_NODE")].value} {.spec.containers[0].env[?(@.name=="PET_MASTER_ADDR")].value} {.spec.containers[0].env[?(@.name=="PET_MASTER_PORT")].value}'
expect "the pods' hostname and subdomain make that address" '^mnist-node-0-0 mnist$' \
  k get pod mnist-node-0-0 -n "$NS" -o 'jsonpath={.spec.hostname} {.spec.subdomain}'
expect "the TrainJob is the pods' controller owner" '^TrainJob mnist true$' \
  k get pod mnist-node-0-0 -n "$NS" -o 'jsonpath={.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name} {.metadata.ownerReferences[0].controller}'
within 30 "the headless Service <job> selects the job's pods" '^None mnist$' \
  k get service mnist -n "$NS" -o 'jsonpath={.spec.clusterIP} {.spec.selector.jobset\.sigs\.k8s\.io/jobset-name}'
within 30 "the runtime snapshot ConfigMap holds torch-distributed" 'torch-distributed' \
  k get configmap mnist-runtime-snapshot -n "$NS" -o 'jsonpath={.data.runtime\.json}'
within 30 "the TrainJob is Running" 'Running=True' conditions mnist
within 60 "the TrainJob reaches Complete" 'Complete=True' conditions mnist
expect "... for the peer's reason" '^True AllJobsCompleted jobset completed successfully$' condition mnist Complete
expect "jobsStatus as the peer's: the node Job succeeded, none ready, failed, active or suspended" '^node,0,1,0,0,0 $' jobs_status mnist
expect "kubectl get trainjob shows its runtime, nodes and state Complete" 'mnist +torch-distributed +2 +Complete' \
  k get trainjob mnist -n "$NS"
expect "both pods Succeeded" '^Succeeded Succeeded$' \
  k get pods -n "$NS" -l jobset.sigs.k8s.io/jobset-name=mnist -o 'jsonpath={.items[*].status.phase}'
sleep 2
expect "a finished job's pods are not re-created" '^2$' pods_of mnist

# ---- a runtime edited mid-run, suspend and resume: the job keeps its snapshot ----
expect "create a namespaced TrainingRuntime (image v1)" 'created' k create -f - <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: pinned-rt
  namespace: $NS
spec:
  mlPolicy:
    numNodes: 1
    torch: {}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels:
              trainer.kubeflow.org/trainjob-ancestor-step: trainer
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: registry.example.com/train:v1
                  command: [torchrun, train.py]
EOF
expect "create a TrainJob on it that runs until stopped" 'created' \
  k create -f - <<<"$(trainjob pinned pinned-rt forever TrainingRuntime)"
within 30 "both its pods run" '^2$' running_of pinned
expect "... with the runtime's image v1" '^registry.example.com/train:v1 registry.example.com/train:v1$' \
  k get pods -n "$NS" -l jobset.sigs.k8s.io/jobset-name=pinned -o 'jsonpath={.items[*].spec.containers[0].image}'
within 30 "its snapshot ConfigMap is written" 'train:v1' \
  k get configmap pinned-runtime-snapshot -n "$NS" -o 'jsonpath={.data.runtime\.json}'
old_uids=$(k get pods -n "$NS" -l jobset.sigs.k8s.io/jobset-name=pinned -o 'jsonpath={.items[*].metadata.uid}')
expect "edit the runtime's image to v2 mid-run" 'patched' k patch trainingruntime pinned-rt -n "$NS" --type json \
  -p '[{"op":"replace","path":"/spec/template/spec/replicatedJobs/0/template/spec/template/spec/containers/0/image","value":"registry.example.com/train:v2"}]'
expect "suspend the TrainJob" 'patched' k patch trainjob pinned -n "$NS" --type merge -p '{"spec":{"suspend":true}}'
within 30 "it is Suspended" '^True Suspended TrainJob is suspended$' condition pinned Suspended
within 60 "its pods are stopped and deleted" '^0$' pods_of pinned
within 30 "jobsStatus counts the node job suspended" '^node,0,0,0,0,1 $' jobs_status pinned
expect "resume the TrainJob" 'patched' k patch trainjob pinned -n "$NS" --type merge -p '{"spec":{"suspend":false}}'
within 30 "it is resumed" '^False Resumed TrainJob is resumed$' condition pinned Suspended
within 60 "its 2 pods run again" '^2$' running_of pinned
new_uids=$(k get pods -n "$NS" -l jobset.sigs.k8s.io/jobset-name=pinned -o 'jsonpath={.items[*].metadata.uid}')
if [ -n "$new_uids" ] && [ "$new_uids" != "$old_uids" ]; then ok "... as new pods"; else bad "... as new pods" "before: $old_uids" "after: $new_uids"; fi
expect "the re-created pods keep the snapshot's image v1" '^registry.example.com/train:v1 registry.example.com/train:v1$' \
  k get pods -n "$NS" -l jobset.sigs.k8s.io/jobset-name=pinned -o 'jsonpath={.items[*].spec.containers[0].image}'
expect "a new TrainJob on the edited runtime gets v2" 'created' \
  k create -f - <<<"$(trainjob fresh pinned-rt forever TrainingRuntime)"
within 30 "... its pods are created" '^2$' pods_of fresh
expect "... with image v2" '^registry.example.com/train:v2 registry.example.com/train:v2$' \
  k get pods -n "$NS" -l jobset.sigs.k8s.io/jobset-name=fresh -o 'jsonpath={.items[*].spec.containers[0].image}'

# ---- kubectl delete trainjob: the real garbage collector removes what the job owned ----
expect "kubectl delete the running TrainJob" 'deleted' k delete trainjob pinned -n "$NS"
within 60 "the garbage collector deletes its pods" '^0$' pods_of pinned
within 60 "... its headless Service" 'NotFound' k get service pinned -n "$NS"
within 60 "... and its runtime snapshot ConfigMap" 'NotFound' k get configmap pinned-runtime-snapshot -n "$NS"
expect "the other job's pods are untouched" '^2$' pods_of fresh
k delete trainjob fresh -n "$NS" >/dev/null

# ---- activeDeadlineSeconds ----
expect "create a TrainJob with activeDeadlineSeconds: 5 that would run forever" 'created' \
  k create -f - <<<"$(trainjob late torch-distributed forever ClusterTrainingRuntime '  activeDeadlineSeconds: 5')"
within 30 "it runs" 'Running=True' conditions late
within 60 "it fails at its deadline" '^True DeadlineExceeded TrainJob exceeded its active deadline$' condition late Failed
within 60 "its pods are stopped and deleted" '^0$' pods_of late
expect "kubectl get trainjob shows state Failed" 'late +torch-distributed +2 +Failed' k get trainjob late -n "$NS"

# ---- a runtime that does not exist ----
expect "create a TrainJob naming a runtime that does not exist" 'created' \
  k create -f - <<<"$(trainjob orphan no-such-runtime 1s)"
within 60 "it fails with TrainingRuntimeNotFound" '^True TrainingRuntimeNotFound' condition orphan Failed
expect "... naming the runtime" 'no-such-runtime' condition orphan Failed
expect "... and has no pods" '^0$' pods_of orphan

# ---- a 2 nodes x 2 GPUs TrainJob bound as one gang by Kozmo's scheduler ----
conformance_free_ports 2
log "starting kozmo controller --enable scheduler"
setsid "$KOZMO" controller --kubeconfig "$KC" --enable scheduler \
  --metrics-bind-address "127.0.0.1:$FREE_PORT" --health-probe-bind-address "127.0.0.1:$((FREE_PORT + 1))" \
  >"$RUNDIR/scheduler.log" 2>&1 </dev/null &
echo "kozmo $!" >>"$RUNDIR/pids"
within 30 "kozmo controller --enable scheduler answers /readyz" '^ok$' curl -s --max-time 2 "http://127.0.0.1:$((FREE_PORT + 1))/readyz"
expect "create a 2-node TrainJob with 2 GPUs per node" 'created' k create -f - <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: gpu
  namespace: $NS
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: 2
    resourcesPerNode:
      limits: {nvidia.com/gpu: 2}
  runtimePatches:
  - manager: conformance.kozmo.io/sim
    trainingRuntimeSpec:
      template:
        spec:
          replicatedJobs:
          - name: node
            template:
              spec:
                template:
                  metadata:
                    annotations: {kozmo.io/sim-duration: 5s, kozmo.io/sim-pull-duration: 200ms}
EOF
within 30 "its 2 pods are created" '^2$' pods_of gpu
expect "they are Kozmo's, one gang of 2 pods x 2 GPUs" "^kozmo $NS/gpu 2x2 kozmo $NS/gpu 2x2 \$" \
  k get pods -n "$NS" -l jobset.sigs.k8s.io/jobset-name=gpu -o 'jsonpath={range .items[*]}{.spec.schedulerName} {.metadata.annotations.kozmo\.io/gang} {.metadata.annotations.kozmo\.io/gang-members} {end}'
bind_info() { k get pod "$1" -n "$NS" -o 'jsonpath={.metadata.annotations.hivedscheduler\.microsoft\.com/pod-bind-info}'; }
within 30 "Kozmo's scheduler binds both" '^conf-[01] conf-[01]$' \
  k get pods -n "$NS" -l jobset.sigs.k8s.io/jobset-name=gpu -o 'jsonpath={.items[*].spec.nodeName}'
for p in gpu-node-0-0 gpu-node-0-1; do
  # The bind-info lists every member's placement: both pods, as one affinity group.
  expect "$p's bind-info places the whole gang (2 members)" '^2$' \
    bash -c 'grep -c physicalLeafCellIndices <<<"$1"' _ "$(bind_info "$p")"
done
expect "the two members' bind-info agree" '^same$' \
  bash -c '[ -n "$1" ] && [ "$1" = "$2" ] && echo same || printf "%s\n---\n%s\n" "$1" "$2"' _ \
  "$(bind_info gpu-node-0-0 | sed -n '/affinityGroupBindInfo/,$p')" "$(bind_info gpu-node-0-1 | sed -n '/affinityGroupBindInfo/,$p')"
expect "pod 1's torchrun uses its GPUs (PET_NPROC_PER_NODE auto)" '^auto$' \
  k get pod gpu-node-0-1 -n "$NS" -o 'jsonpath={.spec.containers[0].env[?(@.name=="PET_NPROC_PER_NODE")].value}'
within 60 "the GPU TrainJob reaches Complete" 'Complete=True' conditions gpu

# ---- the end ----
# The kit's pass loop warns "TrainJob NS/NAME: ... (retrying in N ms)" on a failed write; its
# supervisor ("trainer") logs an error when an actor ends.
warnings=$(grep -E '^[0-9:.]+ (warn|error|critical) +(trainer|TrainJob)' "$RUNDIR/kozmo.log" | head -n 20)
if [ -z "$warnings" ]; then ok "the TrainJob controller logged no failed API calls"; else
  # 409s while a deleted pod terminates are expected on a real cluster; show them, do not fail.
  echo "note - the controller retried some calls:"; printf '       %s\n' "$warnings"
fi
kill -TERM "$CTRL_PID"
wait "$CTRL_PID"
rc=$?
CTRL_PID=""
if [ "$rc" = 0 ]; then ok "kozmo kubelet --training stops on SIGTERM with status 0"; else bad "kozmo stops on SIGTERM" "status $rc"; fi
finish
