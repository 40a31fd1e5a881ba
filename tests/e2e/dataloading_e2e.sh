#!/usr/bin/env bash
# End-to-end: container tasks whose data really goes in and out, on `kozmo local --runtime
# process` (pods as local processes): `kozmo copilot download` as the init container, the task's
# own command, `kozmo copilot upload` as the sidecar, over the filesystem and over a real S3 server
# (s3rver behind a SigV4-checking gate, tests/copilot/s3_server.sh). Also: `_ERROR` as the task's
# failure, a missing input, a Secret the task sees and nobody else does, `kubectl logs` of a
# task's pod, and a cache hit whose outputs are the first task's real files.
# Usage: dataloading_e2e.sh PATH/TO/kozmo REPO
set -uo pipefail
KOZMO=${1:?usage: dataloading_e2e.sh PATH/TO/kozmo REPO}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
REPO=${2:-$(cd "$HERE/../.." && pwd)}
source "$REPO/tests/copilot/s3_server.sh"
e2e_init kozmo-dataloading 60
KOZMO=$(realpath "$KOZMO")
phase_reason() { k get tx "$1" -o 'jsonpath={.status.phase}/{.status.reason}/{.status.attempt}'; }
status_of() { k get tx "$1" -o 'jsonpath={.status.phase}/{.status.reason}/{.status.message}'; }
cleanup_all() { s3_stop; e2e_cleanup; }
trap cleanup_all EXIT

if ! s3_start "$WORK" "$REPO"; then
  bad "s3rver 3.7.1 behind the SigV4 gate starts" "$(tail -5 "$WORK"/*.log 2>/dev/null)"
  e2e_finish "# data loading e2e:"
fi
ok "s3rver 3.7.1 behind the SigV4 gate listens on 127.0.0.1:$GATE_PORT"

printf 'tasks:\n  copilot:\n    s3-endpoint: http://127.0.0.1:%s\n    s3-credentials-secret: s3-creds\n' "$GATE_PORT" \
  >"$WORK/config.yaml"
# The file:// stores are this user's private directories (and the copilot is this build's
# binary): the containers run as this user, not as the nobody a root kozmo picks by default.
e2e_start_local "$WORK/kubeconfig" "$WORK/kozmo.log" --nodes 1 --runtime process --config "$WORK/config.yaml" \
  --data-dir "$WORK/data" --process-user "$(id -u):$(id -g)"
within 15 "the server answers kubectl" 'Server Version' k version
expect "the S3 credentials are a Secret" 'created' \
  k create secret generic s3-creds --from-literal=AWS_ACCESS_KEY_ID=S3RVER --from-literal=AWS_SECRET_ACCESS_KEY=S3RVER

# task NAME INPUT-URI OUTPUT-PREFIX COMMAND [EXTRA-SPEC-LINES]
task() {
  printf '%s\n' "---" "apiVersion: kozmo.io/v1alpha1" "kind: TaskExecution" "metadata:" "  name: $1" "spec:" \
    "  type: container" "  container:" "    image: busybox:1.36" "    command: [sh, -c, '$4']" \
    "  inputs: {text: \"$2\"}" "  outputPrefix: \"$3\"" "  dataLoading: {}"
  [ -n "${5:-}" ] && printf '%s\n' "$5"
  true
}
UPPER='tr a-z A-Z < /var/kozmo/inputs/text > /var/kozmo/outputs/upper; echo converted'

# ---- the filesystem ----
mkdir -p "$WORK/in"
echo "hello kozmo" >"$WORK/in/text.txt"
task upper-fs "file://$WORK/in/text.txt" "file://$WORK/out/fs/" "$UPPER" >"$WORK/fs.yaml"
expect "an upper-casing task over file:// is created" 'created' k apply -f "$WORK/fs.yaml"
within 40 "it succeeds" '^Succeeded//0$' phase_reason upper-fs
expect "its input file became its output file, upper-cased" '^HELLO KOZMO$' cat "$WORK/out/fs/upper"
expect "the outputs metadata lists it" '"upper"' cat "$WORK/out/fs/_outputs.json"
expect "kubectl logs shows the task container's own output" '^converted$' k logs upper-fs-0 -c primary
expect "kubectl logs shows the downloader's part" 'text' k logs upper-fs-0 -c kozmo-copilot-downloader

# ---- S3 ----
mkdir -p "$WORK/s3in"
echo "hello from s3" >"$WORK/s3in/text"
echo 0 >"$WORK/s3in/_EXIT"
expect "the input object is put into s3rver (kozmo copilot upload)" '' \
  env AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER "$KOZMO" copilot upload --output-path "$WORK/s3in" \
  --output-prefix s3://inputs/run1/ --s3-endpoint "http://127.0.0.1:$GATE_PORT" --timeout 10s
task upper-s3 "s3://inputs/run1/text" "s3://outputs/upper/" "$UPPER" >"$WORK/s3.yaml"
expect "an upper-casing task over s3:// is created" 'created' k apply -f "$WORK/s3.yaml"
within 40 "it succeeds" '^Succeeded//0$' phase_reason upper-s3
expect "its output object is read back from s3rver" '' \
  env AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER "$KOZMO" copilot download --input-path "$WORK/s3check" \
  --input upper=s3://outputs/upper/upper --s3-endpoint "http://127.0.0.1:$GATE_PORT"
expect "upper-cased" '^HELLO FROM S3$' cat "$WORK/s3check/upper"
expect "every request passed the gate's signature check" '^0$' sh -c "grep -c 'gate: refused' '$WORK/gate.log'; true"
expect "the S3 credentials are in no argument or value of the pod" '^0$' sh -c \
  "kubectl --cache-dir $WORK/cache get pod upper-s3-0 -o yaml | grep -c 'S3RVER'; true"

# ---- _ERROR ----
task diverged "file://$WORK/in/text.txt" "file://$WORK/out/err/" \
  'echo "the loss diverged at step 7" > /var/kozmo/outputs/_ERROR; exit 1' >"$WORK/err.yaml"
expect "a task that writes _ERROR is created" 'created' k apply -f "$WORK/err.yaml"
within 60 "it fails with the text it wrote" '^Failed/.*the loss diverged at step 7' status_of diverged

# ---- a missing input ----
task no-input "file://$WORK/in/nothing.txt" "file://$WORK/out/none/" "$UPPER" >"$WORK/none.yaml"
expect "a task whose input does not exist is created" 'created' k apply -f "$WORK/none.yaml"
within 40 "it fails with InputDownloadFailed, naming the input" '^Failed/InputDownloadFailed/.*nothing.txt' status_of no-input

# ---- a secret: the task sees it, nobody else does ----
expect "kubectl create secret generic db" 'created' k create secret generic db --from-literal=password=s3cr3t-v4lue
task secretive "file://$WORK/in/text.txt" "file://$WORK/out/secret/" \
  'printf %s "$KOZMO_SECRET_DB_PASSWORD" > /var/kozmo/outputs/seen' \
  '  secrets: [{name: db, key: password}]' >"$WORK/secret.yaml"
expect "a task with a secret is created" 'created' k apply -f "$WORK/secret.yaml"
within 40 "it succeeds" '^Succeeded//0$' phase_reason secretive
expect "the task's process saw the value" '^s3cr3t-v4lue$' cat "$WORK/out/secret/seen"
expect "kubectl get tx -o yaml does not show it" '^0$' sh -c \
  "kubectl --cache-dir $WORK/cache get tx secretive -o yaml | grep -c s3cr3t; true"
expect "the pod's logs do not show it" '^0$' sh -c \
  "for c in primary kozmo-copilot-downloader kozmo-copilot-uploader; do kubectl --cache-dir $WORK/cache logs secretive-0 -c \$c; done | grep -c s3cr3t; true"
expect "Kozmo's log does not show it" '^0$' sh -c "grep -c s3cr3t '$WORK/kozmo.log'; true"

# ---- the cache over real outputs ----
CACHE='  cache: {enabled: true, version: "1"}'
task cached-a "file://$WORK/in/text.txt" "file://$WORK/out/cached-a/" "$UPPER" "$CACHE" >"$WORK/ca.yaml"
expect "a cached upper-casing task is created" 'created' k apply -f "$WORK/ca.yaml"
within 40 "it computes" '^Succeeded//0$' phase_reason cached-a
task cached-b "file://$WORK/in/text.txt" "file://$WORK/out/cached-b/" "$UPPER" "$CACHE" >"$WORK/cb.yaml"
expect "an identical one is created" 'created' k apply -f "$WORK/cb.yaml"
within 15 "it completes as CacheHit" '^Succeeded/CacheHit/0$' phase_reason cached-b
expect "its status points at the first task's real outputs" '^HELLO KOZMO$' sh -c \
  "cat \"\$(kubectl --cache-dir $WORK/cache get tx cached-b -o jsonpath='{.status.outputs}' | sed 's|^file://||')upper\""
expect "and it ran no pod" '^$' k get pods -l kozmo.io/task-name=cached-b -o name

e2e_finish "# data loading e2e:"
