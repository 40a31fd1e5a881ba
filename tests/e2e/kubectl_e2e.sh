#!/usr/bin/env bash
# End-to-end: the real kubectl (default validation on) against `kozmo local`.
# Usage: kubectl_e2e.sh PATH/TO/kozmo
set -uo pipefail
KOZMO=${1:?usage: kubectl_e2e.sh PATH/TO/kozmo}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
M=$HERE/manifests
e2e_init kozmo-e2e 60
eventually() { within 30 "$@"; } # eventually NAME PATTERN CMD...: within 30 s

e2e_start_local "$WORK/kubeconfig" "$WORK/kozmo.log" --nodes 2 --gpus-per-node 4

eventually "the server answers kubectl" 'Server Version' k version

expect "create namespace (protobuf body)" 'namespace/e2e created' k create namespace e2e
eventually "get nodes lists the simulated nodes Ready" 'node-1 +Ready' k get nodes
expect "nodes report their GPU capacity" '^4 4$' k get nodes -o 'jsonpath={.items[*].status.capacity.nvidia\.com/gpu}'

expect "create -f a pod with default validation" 'pod/e2e-pod created' k create -f "$M/pod.yaml"
eventually "the pod is bound and runs" 'e2e-pod +1/1 +Running' k get pods -n e2e
expect "the pod was bound to a node" 'node-[01]' k get pod e2e-pod -n e2e -o 'jsonpath={.spec.nodeName}'
expect_fail "create -f of an existing pod is refused" 'AlreadyExists|already exists' k create -f "$M/pod.yaml"
expect_fail "an unknown field is rejected by server-side validation" 'bogusField' k create -f "$M/bad-field.yaml"

expect "apply -f creates a configmap" 'configmap/e2e-config created' k apply -f "$M/configmap.yaml"
k get configmaps -n e2e -w >"$WORK/watch-cm.out" 2>&1 &
WATCH_PID=$!
sleep 1
expect "apply -f again with a change updates it" 'configmap/e2e-config configured' k apply -f "$M/configmap-v2.yaml"
expect "delete a configmap" 'configmap "gen-tmp" deleted' sh -c "kubectl --cache-dir $WORK/cache create configmap gen-tmp -n e2e >/dev/null && kubectl --cache-dir $WORK/cache delete configmap gen-tmp -n e2e"
eventually "get -w on configmaps shows the new one" 'gen-tmp' cat "$WORK/watch-cm.out"
kill "$WATCH_PID" 2>/dev/null; WATCH_PID=
expect "the update is visible" '^careful$' k get configmap e2e-config -n e2e -o 'jsonpath={.data.mode}'
expect "apply -f unchanged says unchanged" 'configmap/e2e-config unchanged' k apply -f "$M/configmap-v2.yaml"

sed -e 's/e2e-pod/e2e-applied/' "$M/pod.yaml" >"$WORK/applied.yaml"
sed -e 's/e2e-pod/e2e-applied/' "$M/pod-v2.yaml" >"$WORK/applied-v2.yaml"
expect "apply -f creates a pod" 'pod/e2e-applied created' k apply -f "$WORK/applied.yaml"
expect "apply -f of a changed pod sends a strategic merge patch" 'pod/e2e-applied configured' k apply -f "$WORK/applied-v2.yaml"
expect "the patched image is stored" '^busybox:1.37$' k get pod e2e-applied -n e2e -o 'jsonpath={.spec.containers[0].image}'

expect "create configmap from literals (protobuf body)" 'configmap/gen created' k create configmap gen -n e2e --from-literal=k=v
expect "the generated configmap holds its data" '^v$' k get configmap gen -n e2e -o 'jsonpath={.data.k}'

k get pods -n e2e -w >"$WORK/watch.out" 2>&1 &
WATCH_PID=$!
sleep 1
sed -e 's/e2e-pod/e2e-watched/' -e 's/"forever"/"1s"/' -e 's/^spec:/spec:\n  restartPolicy: Never/' "$M/pod.yaml" |
  k create -f - >/dev/null 2>&1
eventually "get -w shows a new pod through to completion" 'e2e-watched +0/1 +Completed' cat "$WORK/watch.out"
kill "$WATCH_PID" 2>/dev/null; WATCH_PID=

expect "describe pod shows its events" 'Started' k describe pod e2e-watched -n e2e

sed -e 's/e2e-pod/e2e-typo/' -e 's|image: .*|image: "busybox:1.36:latest"|' "$M/pod.yaml" | k create -f - >/dev/null 2>&1
eventually "a pod whose image name does not parse shows InvalidImageName" 'e2e-typo +0/1 +InvalidImageName' k get pod e2e-typo -n e2e
within 10 "describe pod shows the kubelet's reason" \
  'Warning +InspectFailed .*couldn.t parse image reference "busybox:1.36:latest": invalid reference format' \
  k describe pod e2e-typo -n e2e
expect "  ... and no pull" '^0$' sh -c "kubectl --cache-dir $WORK/cache describe pod e2e-typo -n e2e | grep -c Pulling || true"

expect "cordon marks a node unschedulable" 'node/node-0 cordoned' k cordon node-0
expect "get nodes shows SchedulingDisabled" 'node-0 +Ready,SchedulingDisabled' k get nodes
expect "uncordon makes it schedulable again" 'node/node-0 uncordoned' k uncordon node-0

expect "create -f a CRD" 'customresourcedefinition.apiextensions.k8s.io/gizmos.e2e.kozmo.io created' k create -f "$M/crd.yaml"
eventually "apply -f a custom resource of the new CRD" 'gizmo.e2e.kozmo.io/g1 created' k apply -f "$M/gizmo.yaml"
k get gizmos -n e2e -w >"$WORK/watch-cr.out" 2>&1 &
WATCH_PID=$!
sleep 1
expect "apply -f it again with a change (merge patch)" 'gizmo.e2e.kozmo.io/g1 configured' k apply -f "$M/gizmo-v2.yaml"
eventually "get -w on the custom resource shows the change" 'g1 +2' cat "$WORK/watch-cr.out"
kill "$WATCH_PID" 2>/dev/null; WATCH_PID=
expect "get by plural shows the printer column" 'g1 +2' k get gizmos -n e2e
expect "get by short name works" 'g1' k get gz -n e2e
expect "delete the custom resource" 'gizmo.e2e.kozmo.io "g1" deleted' k delete gizmo g1 -n e2e

# --- Trainer v2: the CRDs, the built-in runtimes, a TrainJob's immutable spec (docs/trainer.md) --
ctr_frameworks() {
  kubectl --cache-dir "$WORK/cache" get clustertrainingruntimes -L trainer.kubeflow.org/framework --no-headers |
    awk '{printf "%s=%s ", $1, $NF}'
}
eventually "get clustertrainingruntimes lists the five built-ins with their framework label" \
  '^deepspeed-distributed=deepspeed jax-distributed=jax mlx-distributed=mlx torch-distributed=torch xgboost-distributed=xgboost $' \
  ctr_frameworks
expect "explain trainjob.spec.trainer describes numNodes and resourcesPerNode" '^numNodes resourcesPerNode $' \
  sh -c "kubectl --cache-dir $WORK/cache explain trainjob.spec.trainer | grep -oE '^ +(numNodes|resourcesPerNode)\b' | tr -d ' ' | sort | tr '\n' ' '"
trainjob() { # trainjob NAME NUM_NODES
  printf 'apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: %s\n  namespace: e2e\nspec:\n  runtimeRef:\n    name: torch-distributed\n  trainer:\n    numNodes: %s\n' "$1" "$2"
}
expect "create a TrainJob on torch-distributed" 'trainjob.trainer.kubeflow.org/tj created' k apply -f - <<<"$(trainjob tj 2)"
expect "get trainjobs shows its runtime and nodes" 'tj +torch-distributed +2 ' k get trainjobs -n e2e
expect "runtimeRef's kind and apiGroup are defaulted" '^ClusterTrainingRuntime trainer.kubeflow.org$' \
  k get trainjob tj -n e2e -o 'jsonpath={.spec.runtimeRef.kind} {.spec.runtimeRef.apiGroup}'
expect_fail "changing spec.trainer.numNodes is refused, naming spec.trainer" \
  'The TrainJob "tj" is invalid: spec.trainer: Invalid value: "object": field is immutable' \
  k patch trainjob tj -n e2e --type merge -p '{"spec":{"trainer":{"numNodes":3}}}'
expect "  ... and numNodes stays 2" '^2$' k get trainjob tj -n e2e -o 'jsonpath={.spec.trainer.numNodes}'
expect "spec.suspend may change" 'trainjob.trainer.kubeflow.org/tj patched' \
  k patch trainjob tj -n e2e --type merge -p '{"spec":{"suspend":true}}'
expect "  ... and is stored" '^true$' k get trainjob tj -n e2e -o 'jsonpath={.spec.suspend}'
expect_fail "a TrainJob with numNodes 0 is refused by the schema" 'spec.trainer.numNodes in body should be greater than or equal to 1' \
  k apply -f - <<<"$(trainjob tj0 0)"
expect_fail "a TrainJob with numNodes 100000 is refused by the schema" 'spec.trainer.numNodes in body should be less than or equal to 10000' \
  k apply -f - <<<"$(trainjob tjbig 100000)"
expect_fail "numProcPerNode is 1 to 1024 or auto, cpu, gpu" "spec.trainer.numProcPerNode in body should match '\\^\\(auto\\|cpu\\|gpu\\)\\$'" \
  k apply -f - <<<"$(trainjob tjproc 1)
    numProcPerNode: many"
expect "delete the TrainJob" 'trainjob.trainer.kubeflow.org "tj" deleted' k delete trainjob tj -n e2e

expect "delete a running pod waits for its kubelet" 'pod "e2e-pod" deleted' k delete pod e2e-pod -n e2e --timeout=30s
expect_fail "the deleted pod is gone" 'NotFound' k get pod e2e-pod -n e2e

expect "create an owner" 'configmap/owner created' k apply -f "$M/owned-configmap.yaml"
OWNER_UID=$(k get configmap owner -n e2e -o 'jsonpath={.metadata.uid}')
cat >"$WORK/owned.yaml" <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: e2e-owned
  namespace: e2e
  ownerReferences:
  - apiVersion: v1
    kind: ConfigMap
    name: owner
    uid: $OWNER_UID
spec:
  containers:
  - name: main
    image: busybox
YAML
expect "create a pod owned by it" 'pod/e2e-owned created' k create -f "$WORK/owned.yaml"
expect "delete the owner" 'configmap "owner" deleted' k delete configmap owner -n e2e
eventually "the owned pod is garbage-collected" 'NotFound' k get pod e2e-owned -n e2e

# --- restart safety of `kozmo local --data-dir`, and --cluster shapes ---------------------
kill -TERM "$KOZMO_PID"; wait "$KOZMO_PID"; rc=$?
if [ $rc -eq 0 ]; then ok "kozmo local exits 0 on SIGTERM"; else bad "kozmo local exits 0 on SIGTERM" "rc=$rc"; fi
KOZMO_PID=
start_local() {
  e2e_start_local "$WORK/kubeconfig2" "$WORK/kozmo.log" --cluster "$HERE/../../examples/cluster.yaml" --data-dir "$WORK/data"
}
start_local
eventually "a --cluster file gives exactly its nodes" '^k80 v100-0 v100-1$' \
  k get nodes -o 'jsonpath={.items[*].metadata.name}'
expect "the cluster file's GPU type and labels are on the nodes" '^K80 b$' \
  k get node k80 -o 'jsonpath={.metadata.labels.kozmo\.io/gpu-type} {.metadata.labels.zone}'
expect "create a configmap to keep" 'configmap/kept created' k create configmap kept --from-literal=a=b
eventually "the built-in runtimes are there with --data-dir" '^1$' \
  k get clustertrainingruntime torch-distributed -o 'jsonpath={.spec.mlPolicy.numNodes}'
expect "edit a built-in runtime" 'clustertrainingruntime.trainer.kubeflow.org/torch-distributed patched' \
  k patch clustertrainingruntime torch-distributed --type merge -p '{"spec":{"mlPolicy":{"numNodes":3}}}'
expect "delete a built-in runtime" 'clustertrainingruntime.trainer.kubeflow.org "jax-distributed" deleted' \
  k delete clustertrainingruntime jax-distributed
kill -TERM "$KOZMO_PID"; wait "$KOZMO_PID"; KOZMO_PID=
start_local
eventually "objects survive a restart with --data-dir" '^b$' k get configmap kept -o 'jsonpath={.data.a}'
expect "a user's edit of a built-in runtime survives the restart" '^3$' \
  k get clustertrainingruntime torch-distributed -o 'jsonpath={.spec.mlPolicy.numNodes}'
expect "a deleted built-in runtime is back after the restart" '^jax$' \
  k get clustertrainingruntime jax-distributed -o 'jsonpath={.metadata.labels.trainer\.kubeflow\.org/framework}'

# --- a HiveD configuration as the cluster shape ------------------------------------------
kill -TERM "$KOZMO_PID"; wait "$KOZMO_PID"; KOZMO_PID=
HIVED=$HERE/../../../shared/reference/hived-design-config.yaml
if [ -f "$HIVED" ]; then
  e2e_start_local "$WORK/kubeconfig3" "$WORK/kozmo.log" --cluster "$HIVED"
  eventually "HiveD's design config gives its twenty nodes" '^20$' \
    sh -c "kubectl --cache-dir $WORK/cache get nodes -o name | wc -l"
  expect "the node in two chains has ten GPUs of two types" '^10 2 8$' \
    k get node 1.0.0.2 -o 'jsonpath={.status.capacity.nvidia\.com/gpu} {.metadata.labels.kozmo\.io/gpus\.CT1} {.metadata.labels.kozmo\.io/gpus\.DGX1-P100}'
  expect "a DGX2 node has sixteen GPUs" '^16$' k get node 0.0.3.2 -o 'jsonpath={.status.capacity.nvidia\.com/gpu}'
else
  bad "HiveD's design config is at ../shared/reference" "missing: $HIVED"
fi

e2e_finish
