#!/usr/bin/env bash
# End-to-end: a TrainJob's dataset and model initializers really fetch, on `kozmo local --runtime
# process` (pods as local processes). The dataset comes from a real S3 server (s3rver behind a
# SigV4-checking gate, tests/copilot/s3_server.sh), the model from the filesystem; both land in the
# TrainJob's shared claim (provisioned by kozmo local), and the trainer's two nodes, started only
# after both initializers completed, read them. An hf:// initializer fails at once, saying why.
# Usage: trainer_initializers_e2e.sh PATH/TO/kozmo REPO
set -uo pipefail
KOZMO=${1:?usage: trainer_initializers_e2e.sh PATH/TO/kozmo REPO}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
REPO=${2:-$(cd "$HERE/../.." && pwd)}
source "$REPO/tests/copilot/s3_server.sh"
e2e_init kozmo-trainer-initializers 60
KOZMO=$(realpath "$KOZMO")
cleanup_all() { s3_stop; e2e_cleanup; }
trap cleanup_all EXIT
cond() { k get trainjob "$1" -o "jsonpath={.status.conditions[?(@.type==\"$2\")].status}/{.status.conditions[?(@.type==\"$2\")].reason}"; }

if ! s3_start "$WORK" "$REPO"; then
  bad "s3rver behind the SigV4 gate starts" "$(tail -5 "$WORK"/*.log 2>/dev/null)"
  e2e_finish "# trainer initializers e2e:"
fi
ok "s3rver behind the SigV4 gate listens on 127.0.0.1:$GATE_PORT"
e2e_start_local "$WORK/kubeconfig" "$WORK/kozmo.log" --nodes 2 --runtime process --data-dir "$WORK/data" \
  --process-user "$(id -u):$(id -g)"
within 15 "the server answers kubectl" 'Server Version' k version

# The dataset: two objects under s3://inputs/mnist/; the model: a directory on this host.
mkdir -p "$WORK/dataset" "$WORK/model"
echo "train,1000" >"$WORK/dataset/train.csv"
echo "test,100" >"$WORK/dataset/test.csv"
echo "weights-v1" >"$WORK/model/weights.bin"
echo 0 >"$WORK/dataset/_EXIT" # what `copilot upload` waits for (a task container's exit marker)
expect "the dataset is put into s3rver (kozmo copilot upload)" '' \
  env AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER "$KOZMO" copilot upload --output-path "$WORK/dataset" \
  --output-prefix s3://inputs/mnist/ --s3-endpoint "http://127.0.0.1:$GATE_PORT" --timeout 10s
expect "the S3 credentials are a Secret" 'created' \
  k create secret generic s3-creds --from-literal=AWS_ACCESS_KEY_ID=S3RVER --from-literal=AWS_SECRET_ACCESS_KEY=S3RVER

# A runtime in the peer's shape: initializer images without a command, the trainer after both.
cat >"$WORK/job.yaml" <<YAML
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: torch-with-initializers
  labels: {trainer.kubeflow.org/framework: torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: dataset-initializer
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}}
          spec: {template: {spec: {containers: [{name: dataset-initializer, image: ghcr.io/kubeflow/trainer/dataset-initializer}]}}}
      - name: model-initializer
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: model-initializer}}
          spec: {template: {spec: {containers: [{name: model-initializer, image: ghcr.io/kubeflow/trainer/model-initializer}]}}}
      - name: node
        dependsOn: [{name: dataset-initializer, status: Complete}, {name: model-initializer, status: Complete}]
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node, image: busybox:1.36}]}}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: fetch
spec:
  runtimeRef: {name: torch-with-initializers, kind: TrainingRuntime}
  initializer:
    dataset:
      storageUri: s3://inputs/mnist/
      env: [{name: ENDPOINT, value: "http://127.0.0.1:$GATE_PORT"}]
      secretRef: {name: s3-creds}
    model:
      storageUri: file://$WORK/model/
  trainer:
    numNodes: 2
    command: [sh, -c, 'echo "rank \$PET_NODE_RANK sees"; cat /workspace/dataset/train.csv /workspace/dataset/test.csv /workspace/model/weights.bin']
YAML
expect "a TrainingRuntime with initializers and a TrainJob fetching from s3:// and file:// apply" \
  'trainjob.trainer.kubeflow.org/fetch created' k apply -f "$WORK/job.yaml"
within 60 "the TrainJob reaches Complete" '^True/AllJobsCompleted$' cond fetch Complete
expect "its shared claim was provisioned and bound" '^Bound$' k get pvc initializer-fetch -o 'jsonpath={.status.phase}'
expect "the dataset initializer ran the copilot" '"kozmo","copilot","download"' \
  k get pod fetch-dataset-initializer-0-0 -o 'jsonpath={.spec.containers[0].command}'
for rank in 0 1; do
  expect "node $rank read the dataset from S3 and the model from the filesystem" \
    "rank $rank sees train,1000 test,100 weights-v1" sh -c "echo \$(kubectl logs fetch-node-0-$rank)"
done
# The nodes started only after both initializers finished.
finished() { k get pod "$1" -o 'jsonpath={.status.containerStatuses[0].state.terminated.finishedAt}'; }
started() { k get pod "$1" -o 'jsonpath={.status.containerStatuses[0].state.terminated.startedAt}'; }
expect "node 0 started after both initializers had finished" '^ok$' sh -c \
  "[ '$(started fetch-node-0-0)' \\> '$(finished fetch-dataset-initializer-0-0)' ] || [ '$(started fetch-node-0-0)' = '$(finished fetch-dataset-initializer-0-0)' ]; \
   [ '$(started fetch-node-0-0)' \\> '$(finished fetch-model-initializer-0-0)' ] || [ '$(started fetch-node-0-0)' = '$(finished fetch-model-initializer-0-0)' ]; echo ok"
expect "every S3 request passed the gate's signature check" '^0$' sh -c "grep -c 'gate: refused' '$WORK/gate.log'; true"

# hf:// cannot be fetched here: the job fails at once and says what to use.
cat >"$WORK/hf.yaml" <<YAML
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: from-hf}
spec:
  runtimeRef: {name: torch-with-initializers, kind: TrainingRuntime}
  initializer: {dataset: {storageUri: hf://tatsu-lab/alpaca}, model: {storageUri: "file://$WORK/model/"}}
YAML
expect "a TrainJob with an hf:// dataset applies" 'created' k apply -f "$WORK/hf.yaml"
within 15 "it fails at once with InitializerNotSupported" '^True/InitializerNotSupported$' cond from-hf Failed
expect "its message says what to use instead" 'file:// path or an S3 bucket' \
  k get trainjob from-hf -o 'jsonpath={.status.conditions[?(@.type=="Failed")].message}'
expect "and it ran no pod" '^$' k get pods -l jobset.sigs.k8s.io/jobset-name=from-hf -o name

e2e_finish "# trainer initializers e2e:"
