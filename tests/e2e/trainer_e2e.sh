#!/usr/bin/env bash
# End-to-end: Kubeflow Trainer v2 (TrainJob, TrainingRuntime, ClusterTrainingRuntime) through
# kubectl against `kozmo local`: every examples/trainjob-*.yaml to Complete, the gang of a GPU
# job, suspend and resume, the deadline, the runtime snapshot, a missing runtime, deletion,
# managedBy, finished jobs left alone, a failing node, bad input, and a v1 PyTorchJob beside them.
# Jobs run side by side: everything is created first, then checked.
# Usage: trainer_e2e.sh PATH/TO/kozmo [REPO]
set -uo pipefail
KOZMO=${1:?usage: trainer_e2e.sh PATH/TO/kozmo [REPO]}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
REPO=${2:-$(cd "$HERE/../.." && pwd)}
EX=$REPO/examples
e2e_init kozmo-trainer-e2e 80


e2e_start_local "$WORK/kubeconfig" "$WORK/kozmo.log" --nodes 4 --gpus-per-node 8
within 15 "the server answers kubectl" 'Server Version' k version
within 15 "the trainer CRDs are installed" 'clustertrainingruntimes.trainer.kubeflow.org trainingruntimes.trainer.kubeflow.org trainjobs.trainer.kubeflow.org' \
  sh -c "kubectl --cache-dir $WORK/cache get crd -o name | grep trainer.kubeflow.org | sed 's|.*/||' | sort | tr '\n' ' '"
within 15 "the five built-in ClusterTrainingRuntimes exist" 'deepspeed-distributed jax-distributed mlx-distributed torch-distributed xgboost-distributed' \
  sh -c "kubectl --cache-dir $WORK/cache get clustertrainingruntimes -o name | sed 's|.*/||' | sort | tr '\n' ' '"

# cond JOB TYPE: "status/reason/message" of one condition of a TrainJob.
cond() {
  k get trainjob "$1" -o "jsonpath={.status.conditions[?(@.type==\"$2\")].status}/{.status.conditions[?(@.type==\"$2\")].reason}/{.status.conditions[?(@.type==\"$2\")].message}"
}
# jobs_status JOB: "name,ready,succeeded,failed,active,suspended ..." per replicated job.
jobs_status() {
  k get trainjob "$1" -o 'jsonpath={range .status.jobsStatus[*]}{.name},{.ready},{.succeeded},{.failed},{.active},{.suspended} {end}'
}
pods_of() { k get pods -l "jobset.sigs.k8s.io/jobset-name=$1" -o name | grep -c . || true; }
images_of() { k get pods -l "jobset.sigs.k8s.io/jobset-name=$1" -o 'jsonpath={range .items[*]}{.spec.containers[0].image}{"\n"}{end}' | sort -u | tr '\n' ' '; }
completes() { # completes JOB [SECONDS]: kubectl wait --for=condition=Complete
  expect "$1 reaches Complete" 'condition met' k wait --for=condition=Complete "trainjob/$1" --timeout="${2:-60}s"
}

# A TrainJob on the torch runtime whose pods run DURATION (the simulated kubelet's annotation,
# through a runtime patch), with extra spec lines (indented two spaces) and runtime name.
sim_job() {
  local name=$1 duration=$2 extra=${3:-} runtime=${4:-torch-distributed}
  cat <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: $name
spec:
  runtimeRef:
    name: $runtime
$extra
  runtimePatches:
  - manager: e2e.kozmo.io/sim
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
                      kozmo.io/sim-duration: "$duration"
EOF
}

# A copy of torch-distributed that the snapshot check edits and deletes, and a namespaced runtime
# whose node pods exit 1, with a backoffLimit of 1.
cat >"$WORK/runtimes.yaml" <<'EOF'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: e2e-torch
  labels:
    trainer.kubeflow.org/framework: torch
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
                  image: example.com/train:v1
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: e2e-failing
  labels:
    trainer.kubeflow.org/framework: torch
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
            backoffLimit: 1
            template:
              metadata:
                annotations:
                  kozmo.io/sim-duration: 300ms
                  kozmo.io/sim-exit-code: "1"
              spec:
                containers:
                - name: node
                  image: example.com/train:v1
EOF
expect "the test runtimes are created" 'e2e-torch created.*e2e-failing created' \
  sh -c "kubectl --cache-dir $WORK/cache apply -f $WORK/runtimes.yaml | tr '\n' ' '"
within 10 "kubectl sees the test runtimes" 'e2e-failing' k get trainingruntimes

{
  sim_job tj-suspend 10s
  echo ---
  sim_job tj-deadline forever "  activeDeadlineSeconds: 3"
  echo ---
  sim_job tj-snapshot 15s "" e2e-torch
  echo ---
  sim_job tj-delete forever
  echo ---
  cat <<'EOF'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: tj-missing
spec:
  runtimeRef:
    name: no-such-runtime
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: tj-elsewhere
spec:
  managedBy: kueue.x-k8s.io/multikueue
  runtimeRef:
    name: torch-distributed
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: tj-failing
spec:
  runtimeRef:
    kind: TrainingRuntime
    name: e2e-failing
EOF
} >"$WORK/jobs.yaml"

# ---- everything at once: the examples, the scenario jobs, a v1 PyTorchJob ----
for f in "$EX"/trainjob-*.yaml; do
  expect "kubectl apply -f examples/${f##*/}" 'created' k apply -f "$f"
done
expect "kubectl apply the scenario TrainJobs" 'tj-suspend created.*tj-failing created' \
  sh -c "kubectl --cache-dir $WORK/cache apply -f $WORK/jobs.yaml | tr '\n' ' '"
expect "kubectl apply -f examples/pytorch-simple.yaml (v1) beside them" 'created' k apply -f "$EX/pytorch-simple.yaml"

# ---- bad input: refused by the API with the field named ----
sed -e 's/name: trainjob-multi-node/name: tj-zero-nodes/' -e 's/numNodes: 2/numNodes: 0/' \
  "$EX/trainjob-multi-node.yaml" >"$WORK/zero.yaml"
expect_fail "numNodes 0 is refused (422) naming the field" 'spec.trainer.numNodes.*(greater than or equal to 1|should be)' \
  k apply -f "$WORK/zero.yaml"
expect "and nothing of it was created" '^$' k get trainjob tj-zero-nodes --ignore-not-found -o name

# ---- the runtime's snapshot: edits and deletion of the runtime do not reach a running job ----
# (first, while tj-snapshot's 15 s pod still runs; then tj-suspend's 10 s one)
within 20 "tj-snapshot runs on e2e-torch" '^True/' cond tj-snapshot Running
expect "its snapshot ConfigMap exists, owned by the TrainJob" '^TrainJob/tj-snapshot$' \
  k get configmap tj-snapshot-runtime-snapshot -o 'jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}'
expect "kubectl patch the runtime's image mid-run" 'patched' k patch clustertrainingruntime e2e-torch --type json \
  -p '[{"op":"replace","path":"/spec/template/spec/replicatedJobs/0/template/spec/template/spec/containers/0/image","value":"example.com/train:v2"}]'
expect "the runtime now says v2" 'train:v2' k get clustertrainingruntime e2e-torch -o 'jsonpath={..image}'
expect "the snapshot still holds v1" 'example.com/train:v1' k get configmap tj-snapshot-runtime-snapshot -o 'jsonpath={.data}'
expect "suspend tj-snapshot" 'patched' k patch trainjob tj-snapshot --type merge -p '{"spec":{"suspend":true}}'
within 20 "its pod is deleted" '^0$' pods_of tj-snapshot
expect "resume tj-snapshot" 'patched' k patch trainjob tj-snapshot --type merge -p '{"spec":{"suspend":false}}'
within 20 "the re-created pod is back" '^1$' pods_of tj-snapshot
expect "and runs the original image from the snapshot, not the edit" '^example.com/train:v1 $' images_of tj-snapshot
expect "delete the runtime mid-run" 'deleted' k delete clustertrainingruntime e2e-torch

# ---- suspend, then resume (tj-suspend's pods run 10 s) ----
within 20 "tj-suspend runs" '^True/' cond tj-suspend Running
expect "kubectl patch spec.suspend=true" 'patched' k patch trainjob tj-suspend --type merge -p '{"spec":{"suspend":true}}'
within 20 "suspending deletes its pods" '^0$' pods_of tj-suspend
within 10 "Suspended is True/Suspended" '^True/Suspended/TrainJob is suspended$' cond tj-suspend Suspended
expect "kubectl get trainjob shows it Suspended" 'tj-suspend +torch-distributed +Suspended' k get trainjob tj-suspend
expect "kubectl patch spec.suspend=false" 'patched' k patch trainjob tj-suspend --type merge -p '{"spec":{"suspend":false}}'
within 10 "Suspended turns False/Resumed" '^False/Resumed/TrainJob is resumed$' cond tj-suspend Suspended
within 20 "its pod is back" '^1$' pods_of tj-suspend

# ---- the GPU job: one gang of 2 pods x 2 GPUs, PET_* env, Complete ----
MN=trainjob-multi-node
within 30 "$MN's two pods are both bound by Kozmo's scheduler" '^node-[0-9] node-[0-9] $' \
  k get pods -l "jobset.sigs.k8s.io/jobset-name=$MN" -o 'jsonpath={range .items[*]}{.spec.nodeName} {end}'
expect "both carry the gang annotation: one gang of 2 members x 2 GPUs" '^kozmo scheduler: default/trainjob-multi-node 2x2 kozmo scheduler: default/trainjob-multi-node 2x2 $' \
  k get pods -l "jobset.sigs.k8s.io/jobset-name=$MN" \
  -o 'jsonpath={range .items[*]}{.spec.schedulerName} scheduler: {.metadata.annotations.kozmo\.io/gang} {.metadata.annotations.kozmo\.io/gang-members} {end}'
expect "each pod's bind info places the whole gang (both pods, 2 GPUs each)" '^2 2$' sh -c \
  "for p in $MN-node-0-0 $MN-node-0-1; do kubectl --cache-dir $WORK/cache get pod \$p -o 'jsonpath={.metadata.annotations.hivedscheduler\.microsoft\.com/pod-bind-info}' | grep -c physicalNode; done | tr '\n' ' ' | sed 's/ \$//'"
expect "the scheduler's Event names the GPUs it gave" 'Successfully assigned default/trainjob-multi-node-node-0-1 to node-[0-9] with GPUs [0-9]+,[0-9]+' \
  k get events --field-selector "involvedObject.name=$MN-node-0-1,reason=Scheduled" -o 'jsonpath={.items[*].message}'
expect "node 1 gets torchrun's PET_* variables" "^2 auto 1 $MN-node-0-0.$MN 29500$" \
  k get pod "$MN-node-0-1" -o 'jsonpath={.spec.containers[0].env[?(@.name=="PET_NNODES")].value} {.spec.containers[0].env[?(@.name=="PET_NPROC_PER_NODE")].value} {.spec.containers[0].env[?(@.name=="PET_NODE_RANK")].value} {.spec.containers[0].env[?(@.name=="PET_MASTER_ADDR")].value} {.spec.containers[0].env[?(@.name=="PET_MASTER_PORT")].value}'
expect "node 0 is rank 0" '^0$' k get pod "$MN-node-0-0" -o 'jsonpath={.spec.containers[0].env[?(@.name=="PET_NODE_RANK")].value}'
expect "the pods sit under the headless Service $MN" "^None $MN $MN$" sh -c \
  "echo \$(kubectl --cache-dir $WORK/cache get svc $MN -o 'jsonpath={.spec.clusterIP}') \$(kubectl --cache-dir $WORK/cache get pod $MN-node-0-1 -o 'jsonpath={.spec.subdomain}') \$(kubectl --cache-dir $WORK/cache get pod $MN-node-0-0 -o 'jsonpath={.metadata.labels.jobset\.sigs\.k8s\.io/jobset-name}')"

# ---- activeDeadlineSeconds 3 with pods that run forever ----
within 30 "tj-deadline fails with DeadlineExceeded" '^True/DeadlineExceeded/TrainJob exceeded its active deadline$' cond tj-deadline Failed
within 20 "its pods are stopped" '^0$' sh -c \
  "kubectl --cache-dir $WORK/cache get pods -l jobset.sigs.k8s.io/jobset-name=tj-deadline --field-selector=status.phase=Running -o name | grep -c ."
expect "kubectl get trainjob shows it Failed" 'tj-deadline +torch-distributed +Failed' k get trainjob tj-deadline

# ---- a runtime that does not exist (5 s grace) ----
within 20 "tj-missing fails with TrainingRuntimeNotFound naming the runtime" '^True/TrainingRuntimeNotFound/.*no-such-runtime.*not found' \
  cond tj-missing Failed
expect "and has no pods" '^0$' pods_of tj-missing

# ---- a node whose pods exit 1, backoffLimit 1 ----
within 30 "tj-failing's failed pod is re-created once (RestartingPod Event)" 'RestartingPod' \
  k get events --field-selector involvedObject.name=tj-failing -o 'jsonpath={.items[*].reason}'
within 30 "then the TrainJob fails with FailedJobs" '^True/FailedJobs/' cond tj-failing Failed
expect "kubectl describe trainjob shows the restart" 'RestartingPod.*re-creating it alone \(1 of backoffLimit 1\)' k describe trainjob tj-failing

# ---- deleting a running TrainJob deletes its pods, Service and snapshot ----
within 20 "tj-delete runs" '^True/' cond tj-delete Running
expect "its pod, Service and snapshot exist" '^1 tj-delete tj-delete-runtime-snapshot$' sh -c \
  "echo \$(kubectl --cache-dir $WORK/cache get pods -l jobset.sigs.k8s.io/jobset-name=tj-delete -o name | grep -c .) \$(kubectl --cache-dir $WORK/cache get svc tj-delete -o name | sed 's|.*/||') \$(kubectl --cache-dir $WORK/cache get cm tj-delete-runtime-snapshot -o name | sed 's|.*/||')"
expect "kubectl delete trainjob tj-delete" 'deleted' k delete trainjob tj-delete
within 20 "its pods are gone" '^0$' pods_of tj-delete
within 20 "its Service and snapshot ConfigMap are gone (garbage-collected)" '^$' \
  k get svc/tj-delete cm/tj-delete-runtime-snapshot --ignore-not-found -o name

# ---- every example completes ----
for f in "$EX"/trainjob-*.yaml; do
  name=$(basename "$f" .yaml) # each example's TrainJob is named after its file
  completes "$name" 60
  expect "kubectl get trainjob shows $name Complete" "$name +.*Complete" k get trainjob "$name"
done
expect "the Complete condition is the peer's" '^True/AllJobsCompleted/jobset completed successfully$' cond trainjob-hello Complete
expect "trainjob-hello's jobsStatus ends as the peer's: {node, ready 0, succeeded 1}" '^node,0,1,0,0,0 $' \
  jobs_status trainjob-hello
expect "trainjob-deepspeed runs 1 launcher pod (runLauncherAsNode: numNodes-1 node pods)" '^1 1$' \
  sh -c "echo \$(kubectl get pods -l jobset.sigs.k8s.io/jobset-name=trainjob-deepspeed,jobset.sigs.k8s.io/replicatedjob-name=launcher -o name | grep -c .) \$(kubectl get pods -l jobset.sigs.k8s.io/jobset-name=trainjob-deepspeed,jobset.sigs.k8s.io/replicatedjob-name=node -o name | grep -c .)"
expect "trainjob-deepspeed's jobsStatus: the launcher succeeded, the node Job counts nowhere or succeeded" \
  '^launcher,0,1,0,0,0 node,0,[01],0,0,0 $' jobs_status trainjob-deepspeed
expect "trainjob-deepspeed's hostfile lists the launcher and the node" \
  '^trainjob-deepspeed-launcher-0-0.trainjob-deepspeed slots=[0-9]+ trainjob-deepspeed-node-0-0.trainjob-deepspeed slots=[0-9]+$' \
  sh -c "echo \$(kubectl get configmap trainjob-deepspeed-mpi-hostfile -o 'jsonpath={.data.hostfile}')"
ssh_pair_matches() { # the Secret's private key derives its public key (ssh-keygen reads it as users' ssh does)
  local dir
  dir=$(mktemp -d)
  k get secret "$1" -o 'jsonpath={.data.ssh-privatekey}' | base64 -d >"$dir/key" && chmod 600 "$dir/key" &&
    test "$(ssh-keygen -y -f "$dir/key" | cut -d' ' -f1,2)" = \
      "$(k get secret "$1" -o 'jsonpath={.data.ssh-publickey}' | base64 -d | cut -d' ' -f1,2)"
  local rc=$?
  rm -rf "$dir"
  return $rc
}
if ssh_pair_matches trainjob-deepspeed-mpi-ssh-auth; then ok "trainjob-deepspeed's SSH Secret holds a matching ECDSA key pair"
else bad "trainjob-deepspeed's SSH Secret holds a matching ECDSA key pair"; fi
expect "trainjob-runtime-patches' pods carry the patch: labels, annotation, account, nodeSelector, toleration" \
  '^ml-platform research ml-platform default \{"kozmo.io/simulated":"true"\} example.com/training-only patches-demo$' \
  k get pod trainjob-runtime-patches-node-0-1 -o 'jsonpath={.metadata.labels.team} {.metadata.labels.cost-center} {.metadata.annotations.example\.com/owner} {.spec.serviceAccountName} {.spec.nodeSelector} {.spec.tolerations[0].key} {.spec.containers[0].env[?(@.name=="EXPERIMENT")].value}'
expect "trainjob-jax's node 1 is process 1 of 2" '^2 1 trainjob-jax-node-0-0.trainjob-jax:29500$' \
  k get pod trainjob-jax-node-0-1 -o 'jsonpath={.spec.containers[0].env[?(@.name=="JAX_NUM_PROCESSES")].value} {.spec.containers[0].env[?(@.name=="JAX_PROCESS_ID")].value} {.spec.containers[0].env[?(@.name=="JAX_COORDINATOR_ADDRESS")].value}'
expect "trainjob-xgboost's node 1 is task 1 of 2 workers" '^trainjob-xgboost-node-0-0.trainjob-xgboost 29500 1 2$' \
  k get pod trainjob-xgboost-node-0-1 -o 'jsonpath={.spec.containers[0].env[?(@.name=="DMLC_TRACKER_URI")].value} {.spec.containers[0].env[?(@.name=="DMLC_TRACKER_PORT")].value} {.spec.containers[0].env[?(@.name=="DMLC_TASK_ID")].value} {.spec.containers[0].env[?(@.name=="DMLC_NUM_WORKER")].value}'
expect "trainjob-custom-runtime's pods come from the namespaced runtime" '^python-slim python:3.11-slim$' \
  k get pod trainjob-custom-runtime-node-0-1 -o 'jsonpath={.metadata.labels.example\.com/runtime} {.spec.containers[0].image}'

# ---- the jobs started earlier finish ----
completes tj-suspend 30
expect "tj-suspend's conditions keep Suspended False/Resumed" '^False/Resumed/' cond tj-suspend Suspended
completes tj-snapshot 40
expect "tj-snapshot ran to the end without its runtime" 'Created=True.*Complete=True' \
  k get trainjob tj-snapshot -o 'jsonpath={range .status.conditions[*]}{.type}={.status} {end}'
within 60 "the v1 PyTorchJob pytorch-simple still reaches Succeeded" 'Succeeded=True' \
  k get pytorchjob pytorch-simple -o 'jsonpath={range .status.conditions[*]}{.type}={.status} {end}'

# ---- a finished job whose pods are deleted by hand is not re-created ----
expect "delete trainjob-hello's pods by hand" 'deleted' k delete pods -l jobset.sigs.k8s.io/jobset-name=trainjob-hello
sleep 4
expect "after 4 s trainjob-hello has no pods" '^0$' pods_of trainjob-hello
expect "and is still Complete" '^True/AllJobsCompleted/' cond trainjob-hello Complete

# ---- managedBy another controller: left alone (checked last, when the controller had time) ----
expect "tj-elsewhere (managedBy multikueue) has no pods" '^0$' pods_of tj-elsewhere
expect "and no status" '^$' k get trainjob tj-elsewhere -o 'jsonpath={.status}'

if ! kill -0 "$KOZMO_PID" 2>/dev/null; then bad "kozmo local is still running" "it exited"; fi
e2e_finish
