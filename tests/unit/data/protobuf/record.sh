#!/usr/bin/env bash
# Records the fixtures of tests/unit/protobuf_test.cpp from a REAL kube-apiserver v1.20.2
# (../shared/tools/real-k8s): one namespace's pods as JSON (pods.json) and as protobuf (pods.pb)
# at the same resourceVersion, the first page of them (limit=1: a continue token and
# remainingItemCount; page.json, page.pb) and a 404 Status in protobuf (status-404.pb).
#
#   tests/unit/data/protobuf/record.sh        (rewrites the files beside it; not part of the suite)
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(cd "$HERE/../../../.." && pwd -P)
source "$REPO/tests/conformance/lib.sh"
conformance_init record-protobuf
conformance_find_tools "$REPO"
conformance_make_rundir kozmo-record-protobuf
conformance_start_control_plane
source "$RUNDIR/cluster.env"
C=(curl -sS --cacert "$K8S_CA_FILE" --cert "$K8S_ADMIN_CERT_FILE" --key "$K8S_ADMIN_KEY_FILE")
PODS=$K8S_APISERVER/api/v1/namespaces/proto-fixture/pods
k apply -f "$HERE/pods.yaml" >/dev/null || { bad "pods.yaml applies"; finish; }
# A pending pod of Kozmo's behind a finalizer, deleted: it stays, with a deletionTimestamp.
k create -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {generateName: finalized-, namespace: proto-fixture, finalizers: [kozmo.io/test]}
spec:
  schedulerName: kozmo
  containers: [{name: main, image: busybox}]
YAML
"${C[@]}" -X POST -H 'Content-Type: application/json' "$PODS/gpu-bound/binding" \
  -d '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"gpu-bound"},"target":{"apiVersion":"v1","kind":"Node","name":"gpu-node-7"}}' >/dev/null
"${C[@]}" -X PATCH -H 'Content-Type: application/merge-patch+json' "$PODS/gpu-bound/status" -d '{"status":{"phase":"Running"}}' >/dev/null
k -n proto-fixture delete pods --all --wait=false >/dev/null
"${C[@]}" "$PODS" -o "$HERE/pods.json"
"${C[@]}" -H 'Accept: application/vnd.kubernetes.protobuf' "$PODS" -o "$HERE/pods.pb"
"${C[@]}" "$PODS?limit=1" -o "$HERE/page.json"
"${C[@]}" -H 'Accept: application/vnd.kubernetes.protobuf' "$PODS?limit=1" -o "$HERE/page.pb"
"${C[@]}" -H 'Accept: application/vnd.kubernetes.protobuf, application/json' "$PODS/nope" -o "$HERE/status-404.pb"
expect "the lists name the same resourceVersion" "$(grep -o '"resourceVersion":"[0-9]*"' "$HERE/pods.json" | head -1)" \
  sh -c "grep -o '\"resourceVersion\":\"[0-9]*\"' '$HERE/page.json' | head -1"
ls -l "$HERE"
finish
