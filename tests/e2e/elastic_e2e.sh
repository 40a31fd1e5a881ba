#!/usr/bin/env bash
# End-to-end: an elastic PyTorchJob in `kozmo local` (scheduler_core.hpp note 10). Four nodes of
# 8 GPUs; a 2-node job holds half of them for a while; an elastic job of up to 4 workers
# (elasticPolicy minReplicas 2, maxReplicas 4) starts at 2 with torchrun's elastic env, and
# grows to 4 when the other job ends; the pods that waited say why, and a Grown Event says so.
# Usage: elastic_e2e.sh PATH/TO/kozmo
set -uo pipefail
KOZMO=${1:?usage: elastic_e2e.sh PATH/TO/kozmo}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
e2e_init kozmo-elastic-e2e 80
eventually() { within 60 "$@"; }

# job NAME WORKERS DURATION [ELASTIC-POLICY-LINES]: a PyTorchJob of 8-GPU workers.
job() {
  cat <<EOF2
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: $1
spec:
$4
  pytorchReplicaSpecs:
    Worker:
      replicas: $2
      restartPolicy: OnFailure
      template:
        metadata:
          annotations:
            kozmo.io/sim-duration: "$3"
        spec:
          containers:
          - name: pytorch
            image: pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime
            command: ["torchrun", "train.py"]
            resources:
              limits:
                nvidia.com/gpu: 8
EOF2
}
phases() { echo $(k get pods -l "training.kubeflow.org/job-name=$1" -o 'jsonpath={range .items[*]}{.status.phase}{"\n"}{end}' | sort | uniq -c); }
running() { k get pods -l "training.kubeflow.org/job-name=$1" --field-selector=status.phase=Running --no-headers 2>/dev/null | wc -l; }

e2e_start_local "$WORK/kubeconfig" "$WORK/kozmo.log" --nodes 4 --gpus-per-node 8
eventually "kozmo local answers kubectl" 'Server Version' k version

job other 2 12s "" >"$WORK/other.yaml"
expect "a 2-node job is created" 'created' k apply -f "$WORK/other.yaml"
eventually "it runs on two of the four nodes" '^2$' running other

job elastic 4 forever "  elasticPolicy:
    rdzvBackend: c10d
    minReplicas: 2
    maxReplicas: 4" >"$WORK/elastic.yaml"
expect "an elastic job of up to 4 workers (at least 2) is created" 'created' k apply -f "$WORK/elastic.yaml"
eventually "it starts at its minimum: 2 workers run on the 2 free nodes" '^2$' running elastic
expect "its pods ask the scheduler for 2 to 4 pods" '^2 4x8$' sh -c \
  "kubectl --cache-dir $WORK/cache get pod elastic-worker-0 -o 'jsonpath={.metadata.annotations.kozmo\\.io/gang-min-members} {.metadata.annotations.kozmo\\.io/gang-members}'"
expect "torchrun's elastic env: PET_NNODES=2:4 and a c10d rendezvous" 'PET_NNODES=2:4.*PET_RDZV_BACKEND=c10d|PET_RDZV_BACKEND=c10d.*PET_NNODES=2:4' sh -c \
  "kubectl --cache-dir $WORK/cache get pod elastic-worker-0 -o 'jsonpath={range .spec.containers[0].env[*]}{.name}={.value} {end}'"
pending=$(k get pods -l training.kubeflow.org/job-name=elastic --field-selector=status.phase=Pending -o 'jsonpath={.items[0].metadata.name}')
eventually "a worker that waits says how many run" "the elastic gang 'default/elastic' runs 2 of its 4 pods \(at least 2\)" \
  k describe pod "$pending"
eventually "when the other job ends, the elastic job grows to 4 workers" '^4$' running elastic
expect "the other job completed" 'Succeeded' phases other
eventually "kubectl describe says the gang grew" 'Grown .*grew from 2 pods to (3|4) \(at least 2, at most 4\)' \
  k describe pod elastic-worker-0
expect "the job reports its four workers running" '4 Running' phases elastic

e2e_finish "# elastic e2e:"
