#!/usr/bin/env bash
# Conformance: the training controller (`kozmo kubelet --training`) against a real Kubernetes
# v1.20.2 control plane (kube-apiserver + etcd + kube-scheduler + kube-controller-manager from
# ../shared/tools/real-k8s): the CRDs from deploy/crds, a PyTorchJob and a JAXJob that succeed,
# an MPIJob written as v1 users write it, a PyTorchJob that fails at its backoffLimit, and a
# deleted job whose pods and services the real garbage collector removes.
#
# Usage: training_run.sh REPO KOZMO
# Env: KOZMO_CONFORMANCE_KEEP=1  keep the run directory (logs, PKI) for a look afterwards
set -uo pipefail

REPO=${1:?usage: training_run.sh REPO KOZMO}
KOZMO=${2:?kozmo executable}

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
conformance_init training-conformance
conformance_find_tools "$REPO"
CTRL_PID=""
conformance_make_rundir kozmo-training-conformance --child CTRL_PID kozmo.pid \
  --show-logs kozmo.log kube-apiserver.log kube-controller-manager.log

conformance_start_control_plane --scheduler --controller-manager
ok "kube-apiserver v1.20.2 is up"

conditions() { k get "$1" "$2" -n "$NS" -o 'jsonpath={range .status.conditions[*]}{.type}={.status} {end}'; }
count_of() { k get "$1" -n "$NS" -l "training.kubeflow.org/job-name=$2" -o name | grep -c .; }
count_workers() { k get pods -n "$NS" -l "training.kubeflow.org/job-name=$1,training.kubeflow.org/replica-type=worker" -o name | grep -c .; }

# --validate=false: kubectl checks a CRD against the server's own OpenAPI, and v1.20's
# JSONSchemaProps has no x-kubernetes-validations (trainjobs.yaml's immutability rules), so kubectl
# refuses the file; the v1.20 server itself accepts it and drops the rules (docs/trainer.md).
expect "the training CRDs apply" 'pytorchjobs.kubeflow.org (created|configured)' k apply --validate=false -f "$REPO/deploy/crds/"
expect "every other CRD passes kubectl's client-side validation on v1.20" 'pytorchjobs.kubeflow.org' \
  bash -c 'for f in "$1"/deploy/crds/*.yaml; do [ "${f##*/}" = trainjobs.yaml ] || kubectl --kubeconfig "$2" apply --dry-run=client -f "$f" || exit 1; done' _ "$REPO" "$KC"
within 30 "the PyTorchJob CRD is established" 'True' \
  k get crd pytorchjobs.kubeflow.org -o 'jsonpath={.status.conditions[?(@.type=="Established")].status}'

log "starting kozmo kubelet --training (2 simulated nodes + the training controller)"
"$KOZMO" kubelet --kubeconfig "$KC" --nodes 2 --gpus-per-node 4 --node-prefix conf --training --log-level debug \
  >"$RUNDIR/kozmo.log" 2>&1 &
CTRL_PID=$!
echo "$CTRL_PID" >"$RUNDIR/kozmo.pid"
NS=conf-training-$RANDOM
expect "a namespace for the jobs" "namespace/$NS created" k create namespace "$NS"
within 30 "the simulated nodes register" 'conf-1' k get nodes
within 30 "the namespace's default service account exists" 'default' k get serviceaccount default -n "$NS"

# job NAME WORKER_DURATION WORKER_RESTART [WORKER_EXIT] [BACKOFF]: a CPU-only PyTorchJob (the
# default scheduler places it), master running for MASTER_DURATION.
job() {
  cat <<EOF
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: $1
  namespace: $NS
spec:
  runPolicy:
    backoffLimit: ${5:-3}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        metadata:
          annotations:
            kozmo.io/sim-duration: "${MASTER_DURATION:-3s}"
            kozmo.io/sim-pull-duration: "200ms"
        spec:
          containers:
          - name: pytorch
            image: kubeflowkatib/pytorch-mnist:v1beta1-45c5727
    Worker:
      replicas: 2
      restartPolicy: $3
      template:
        metadata:
          annotations:
            kozmo.io/sim-duration: "$2"
            kozmo.io/sim-pull-duration: "200ms"
$([ -n "${4:-}" ] && echo "            kozmo.io/sim-exit-code: \"$4\"")
        spec:
          containers:
          - name: pytorch
            image: kubeflowkatib/pytorch-mnist:v1beta1-45c5727
EOF
}

expect "create a PyTorchJob (master + 2 workers)" 'created' k create -f - <<<"$(job ok-job 3s OnFailure)"
within 30 "its 3 pods are created" '^3$' count_of pods ok-job
within 30 "its 3 headless services are created" '^3$' count_of services ok-job
within 30 "the job is Running" 'Running=True' conditions pytorchjob ok-job
within 60 "the job reaches Succeeded" 'Succeeded=True' conditions pytorchjob ok-job
expect "its replica statuses count the succeeded master" '^1$' \
  k get pytorchjob ok-job -n "$NS" -o 'jsonpath={.status.replicaStatuses.Master.succeeded}'

# A kind beyond PyTorch: a JAXJob of two workers (worker-0 coordinates; all must succeed).
expect "create a JAXJob (2 workers)" 'created' k create -f - <<EOF
apiVersion: kubeflow.org/v1
kind: JAXJob
metadata:
  name: jax-job
  namespace: $NS
spec:
  jaxReplicaSpecs:
    Worker:
      replicas: 2
      template:
        metadata:
          annotations:
            kozmo.io/sim-duration: "3s"
            kozmo.io/sim-pull-duration: "200ms"
        spec:
          containers:
          - name: jax
            image: docker.io/kubeflow/jaxjob-simple:latest
EOF
within 30 "its 2 pods are created" '^2$' count_of pods jax-job
within 30 "its 2 headless services are created" '^2$' count_of services jax-job
expect "worker-1 is process 1 of 2, coordinated by worker-0 on port 6666" '^1 2 jax-job-worker-0 6666$' \
  k get pod jax-job-worker-1 -n "$NS" -o 'jsonpath={.spec.containers[0].env[?(@.name=="PROCESS_ID")].value} {.spec.containers[0].env[?(@.name=="NUM_PROCESSES")].value} {.spec.containers[0].env[?(@.name=="COORDINATOR_ADDRESS")].value} {.spec.containers[0].env[?(@.name=="COORDINATOR_PORT")].value}'
within 60 "the JAXJob reaches Succeeded" 'Succeeded=True' conditions jaxjob jax-job
expect "its replica statuses count both workers succeeded" '^2$' \
  k get jaxjob jax-job -n "$NS" -o 'jsonpath={.status.replicaStatuses.Worker.succeeded}'

# An MPIJob as v1 users write it: containers not named "mpi", the deprecated top-level
# cleanPodPolicy (kept by the real API server's pruning because the CRD declares it).
expect "create an MPIJob with the top-level cleanPodPolicy: Running" 'created' k create -f - <<EOF
apiVersion: kubeflow.org/v1
kind: MPIJob
metadata:
  name: mpi-v1
  namespace: $NS
spec:
  cleanPodPolicy: Running
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        metadata:
          annotations:
            kozmo.io/sim-duration: "3s"
        spec:
          containers:
          - name: mpi-launcher
            image: docker.io/kubeflow/mpi-horovod-mnist
    Worker:
      replicas: 2
      template:
        metadata:
          annotations:
            kozmo.io/sim-duration: "forever"
        spec:
          containers:
          - name: mpi-worker
            image: docker.io/kubeflow/mpi-horovod-mnist
EOF
expect "the API server kept the top-level cleanPodPolicy" '^Running$' \
  k get mpijob mpi-v1 -n "$NS" -o 'jsonpath={.spec.cleanPodPolicy}'
within 30 "its launcher's Role may exec into the two workers" 'mpi-v1-worker-0 mpi-v1-worker-1' \
  k get role mpi-v1-launcher -n "$NS" -o 'jsonpath={.rules[1].resourceNames[*]}'
within 60 "the launcher is created once its ServiceAccount exists (the API server's admission asks)" 'mpi-v1-launcher' \
  k get pod mpi-v1-launcher -n "$NS" -o 'jsonpath={.spec.serviceAccountName}'
within 60 "the MPIJob reaches Succeeded when its launcher does" 'Succeeded=True' conditions mpijob mpi-v1
within 60 "its sleeping workers are deleted per cleanPodPolicy Running" '^0$' count_workers mpi-v1

MASTER_DURATION=forever
expect "create a job whose workers are killed (exit 137) every time" 'created' \
  k create -f - <<<"$(job failing-job 500ms ExitCode 137 3)"
within 90 "it ends Failed at its backoffLimit" 'Failed=True' conditions pytorchjob failing-job
expect "the reason names the backoff limit" 'BackoffLimitExceeded' \
  k get pytorchjob failing-job -n "$NS" -o 'jsonpath={.status.conditions[?(@.type=="Failed")].reason}'
expect "the recreations are in its events" 'ExitedWithCode' \
  k get events -n "$NS" --field-selector involvedObject.name=failing-job -o 'jsonpath={.items[*].reason}'

expect "create a job that runs forever" 'created' k create -f - <<<"$(job endless forever OnFailure)"
within 60 "it runs" 'Running=True' conditions pytorchjob endless
expect "kubectl delete the running job" 'deleted' k delete pytorchjob endless -n "$NS"
within 60 "the garbage collector deletes its pods" '^0$' count_of pods endless
within 60 "and its services" '^0$' count_of services endless

# The peer's form of the PyTorchJob CRD: the whole pod-template schema (~500 KB, structural,
# with defaults), written by `kozmo crds --pod-schema` from this cluster's own OpenAPI document
# and installed instead of Kozmo's. kube-apiserver now prunes and defaults inside templates.
FULL="$RUNDIR/pytorchjobs-full.json"
k get --raw /openapi/v2 >"$RUNDIR/openapi-v2.json"
expect "kozmo crds writes the PyTorchJob CRD with the full pod-template schema" 'PodSpec' \
  bash -c '"$1" crds --kind PyTorchJob --pod-schema "$2" >"$3" && grep -m1 -o "PodSpec" "$3"' _ "$KOZMO" "$RUNDIR/openapi-v2.json" "$FULL"
full_size=$(wc -c <"$FULL")
if [ "$full_size" -gt 400000 ]; then ok "the full-schema CRD is $full_size bytes"; else bad "the full-schema CRD is large" "$full_size bytes"; fi
k delete pytorchjobs --all -n "$NS" >/dev/null
expect "Kozmo's PyTorchJob CRD is deleted" 'deleted' k delete crd pytorchjobs.kubeflow.org
expect "kube-apiserver accepts the full-schema CRD" 'created' k create -f "$FULL"
within 30 "the full-schema CRD is established" 'True' \
  k get crd pytorchjobs.kubeflow.org -o 'jsonpath={.status.conditions[?(@.type=="Established")].status}'
MASTER_DURATION=3s
within 30 "a PyTorchJob is accepted under it" 'created' k create -f - <<<"$(job full-ok 3s OnFailure)"
within 60 "it reaches Succeeded" 'Succeeded=True' conditions pytorchjob full-ok
MASTER_DURATION=forever
expect "create a job whose workers exit 137 every time (ExitCode: recreated)" 'created' \
  k create -f - <<<"$(job full-failing 500ms ExitCode 137 3)"
within 90 "it ends Failed at its backoffLimit although the peer's status schema has no place for Kozmo's count" \
  'Failed=True' conditions pytorchjob full-failing
expect "the count of recreated pods (2, the 3rd restart ends it) is in the job's annotation" '^[2-9]$' \
  k get pytorchjob full-failing -n "$NS" -o 'jsonpath={.metadata.annotations.kozmo\.io/recreated-pods}'

# The same job, written with a field no schema knows and a port without a protocol, on both
# servers: what each stores must be the same.
probe() {
  cat <<EOF
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: probe
  namespace: $1
spec:
  runPolicy:
    backoffLimit: 2
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        metadata:
          annotations:
            kozmo.io/sim-duration: forever
          bogusMeta: x
        spec:
          containers:
          - name: pytorch
            image: kubeflowkatib/pytorch-mnist:v1beta1-45c5727
            bogusField: 1
            ports:
            - containerPort: 23456
              name: pytorchjob-port
            resources:
              limits:
                cpu: 1
                nvidia.com/gpu: "2"
EOF
}
expect "kube-apiserver stores a job written with unknown template fields (kubectl --validate=false)" 'created' \
  k create --validate=false -f - <<<"$(probe "$NS")"
k get pytorchjob probe -n "$NS" -o 'jsonpath={.spec}' >"$RUNDIR/probe-real.json"
expect "... pruned inside the template, with protocol TCP and runPolicy.suspend false defaulted" \
  '"protocol":"TCP".*"suspend":false' cat "$RUNDIR/probe-real.json"
expect "... and the unknown fields are gone" '^0$' bash -c 'grep -c bogus "$1"; true' _ "$RUNDIR/probe-real.json"

warnings=$(grep -E 'training: .*(retrying|ended)' "$RUNDIR/kozmo.log" | head -n 20)
if [ -z "$warnings" ]; then ok "the training controller logged no failed API calls"; else
  # 409s while a deleted pod terminates are expected on a real cluster; show them, do not fail.
  echo "note - the controller retried some calls:"; printf '       %s\n' "$warnings"
fi
kill -TERM "$CTRL_PID"
wait "$CTRL_PID"
rc=$?
CTRL_PID=""
if [ "$rc" = 0 ]; then ok "kozmo kubelet --training stops on SIGTERM with status 0"; else bad "kozmo stops on SIGTERM" "status $rc"; fi
k delete namespace "$NS" --wait=false >/dev/null

# kozmo local with the same full-schema CRD installed instead of its own: the same job stores
# the same spec as on kube-apiserver, and a job runs to Succeeded under it.
log "starting kozmo local"
LKC="$RUNDIR/local.kubeconfig"
"$KOZMO" local --nodes 2 --gpus-per-node 4 --write-kubeconfig "$LKC" >"$RUNDIR/kozmo-local.log" 2>&1 &
CTRL_PID=$!
echo "$CTRL_PID" >"$RUNDIR/kozmo.pid"
kl() { kubectl --kubeconfig "$LKC" --cache-dir "$RUNDIR/kubectl-cache-local" --request-timeout=20s "$@" 2>&1; }
within 30 "kozmo local serves its PyTorchJob CRD" 'pytorchjobs.kubeflow.org' kl get crd
expect "kozmo local: Kozmo's PyTorchJob CRD is deleted" 'deleted' kl delete crd pytorchjobs.kubeflow.org
expect "kozmo local accepts the full-schema CRD" 'created' kl create -f "$FULL"
expect "kozmo local stores the job written with unknown template fields" 'created' \
  kl create --validate=false -f - <<<"$(probe default)"
kl get pytorchjob probe -n default -o 'jsonpath={.spec}' >"$RUNDIR/probe-local.json"
expect "... exactly the spec kube-apiserver stored (pruned and defaulted alike)" '^same$' \
  bash -c 'cmp -s "$1" "$2" && echo same || { echo differ; cat "$1"; echo; cat "$2"; }' _ "$RUNDIR/probe-real.json" "$RUNDIR/probe-local.json"
NS=default
MASTER_DURATION=3s
expect "kozmo local: a PyTorchJob under the full-schema CRD" 'created' kl create -f - <<<"$(job full-ok 3s OnFailure)"
within 60 "kozmo local: it reaches Succeeded" 'Succeeded=True' \
  kl get pytorchjob full-ok -n default -o 'jsonpath={range .status.conditions[*]}{.type}={.status} {end}'
kill -TERM "$CTRL_PID"
wait "$CTRL_PID"
rc=$?
CTRL_PID=""
if [ "$rc" = 0 ]; then ok "kozmo local stops on SIGTERM with status 0"; else bad "kozmo local stops on SIGTERM" "status $rc"; fi
finish
