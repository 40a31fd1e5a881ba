#!/usr/bin/env bash
# Records a pod watch stream from a REAL kube-apiserver v1.20.2 (../shared/tools/real-k8s, with
# its kube-scheduler and controller-manager) for bench/watch_decode_bench --stream: the training
# controller and simulated kubelets of `kozmo kubelet --training` run JOBS PyTorchJobs (a master
# and three workers each, env, ports, resources, OnFailure; CPU pods, so that the real
# kube-scheduler binds them) from creation to Succeeded, while
# `GET /api/v1/pods?watch=true&allowWatchBookmarks=true` is written line by line. The objects are
# the server's own: its managedFields (one entry per manager and operation), defaults, status.
#
#   bench/record_watch_stream.sh BUILD_DIR [OUT=bench/data/pod-watch-v1.20.2.jsonl.xz] [JOBS=150]
#
# The first run builds the control plane (~8 min, cached afterwards). Not part of the suite.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(cd "$HERE/.." && pwd -P)
KOZMO=$(cd "${1:?usage: record_watch_stream.sh BUILD_DIR [OUT] [JOBS]}" && pwd -P)/kozmo
OUT=${2:-$HERE/data/pod-watch-v1.20.2.jsonl.xz}
JOBS=${3:-150}
source "$REPO/tests/conformance/lib.sh"
conformance_init record-watch
conformance_find_tools "$REPO"
CTRL_PID=""
conformance_make_rundir kozmo-record-watch --child CTRL_PID kozmo.pid --show-logs kozmo.log
conformance_start_control_plane --scheduler --controller-manager
k apply -f "$REPO/deploy/crds/" >/dev/null
within 30 "the PyTorchJob CRD is established" 'True' \
  k get crd pytorchjobs.kubeflow.org -o 'jsonpath={.status.conditions[?(@.type=="Established")].status}' >/dev/null
"$KOZMO" kubelet --kubeconfig "$KC" --nodes 80 --gpus-per-node 8 --node-prefix gpu --training \
  --kube-api-qps 500 --log-level warn >"$RUNDIR/kozmo.log" 2>&1 &
CTRL_PID=$!
echo "$CTRL_PID" >"$RUNDIR/kozmo.pid"
within 60 "the simulated nodes register" 'gpu-79' k get nodes >/dev/null
within 30 "the default service account exists" 'default' k get serviceaccount default >/dev/null

source "$RUNDIR/cluster.env"
curl -sN --cacert "$K8S_CA_FILE" --cert "$K8S_ADMIN_CERT_FILE" --key "$K8S_ADMIN_KEY_FILE" \
  "$K8S_APISERVER/api/v1/pods?watch=true&allowWatchBookmarks=true" >"$RUNDIR/stream.jsonl" &
CURL_PID=$!
sleep 1
replica() { # COUNT DURATION: a replica spec of the recorded jobs
  cat <<EOF
      replicas: $1
      restartPolicy: OnFailure
      template:
        metadata:
          annotations: {kozmo.io/sim-duration: "$2", kozmo.io/sim-pull-duration: "500ms"}
        spec:
          containers:
          - name: pytorch
            image: kubeflowkatib/pytorch-mnist:v1beta1-45c5727
            command: [python3, /opt/pytorch-mnist/mnist.py, --epochs=1, --backend=nccl]
            resources: {limits: {cpu: "1", memory: 2Gi}, requests: {cpu: "1", memory: 2Gi}}
EOF
}
{
  for i in $(seq 0 $((JOBS - 1))); do
    cat <<EOF
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: train-$i
spec:
  runPolicy: {cleanPodPolicy: None, backoffLimit: 3}
  pytorchReplicaSpecs:
    Master:
$(replica 1 "$((5 + i % 7))s")
    Worker:
$(replica 3 "$((5 + i % 7))s")
EOF
  done
} >"$RUNDIR/jobs.yaml"
k apply -f "$RUNDIR/jobs.yaml" >/dev/null
within 240 "every pod Succeeded" "^$((JOBS * 4))\$" \
  bash -c "kubectl --kubeconfig '$KC' get pods --no-headers 2>/dev/null | grep -c Completed"
sleep 2
kill "$CURL_PID" 2>/dev/null
# The last line may be cut off by the kill.
head -n -1 "$RUNDIR/stream.jsonl" | xz -9 >"$OUT"
log "recorded $(xz -dc "$OUT" | wc -l) watch events ($(xz -dc "$OUT" | wc -c) bytes) into $OUT"
finish
