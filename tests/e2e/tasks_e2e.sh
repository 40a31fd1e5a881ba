#!/usr/bin/env bash
# End-to-end: task executions (TaskExecution, ResourcePool) through kubectl against `kozmo local`
# (embedded API server, simulated nodes, the task controller), then a kill -9 and restart with
# --data-dir while pooled tasks run and wait.
# Usage: tasks_e2e.sh PATH/TO/kozmo [REPO]
set -uo pipefail
KOZMO=${1:?usage: tasks_e2e.sh PATH/TO/kozmo [REPO]}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
REPO=${2:-$(cd "$HERE/../.." && pwd)}
EX=$REPO/examples
e2e_init kozmo-tasks-e2e 120

# field TASK JSONPATH: one field of a task.
field() { k get tx "$1" -o "jsonpath={$2}"; }
phase_reason() { k get tx "$1" -o 'jsonpath={.status.phase}/{.status.reason}/{.status.attempt}'; }

# A task whose pod the simulated kubelet scripts with ANNOTATIONS (YAML lines, 4 spaces).
task() { # NAME RETRIES ANNOTATION-LINES [EXTRA-SPEC-LINES]
  cat <<EOF
---
apiVersion: kozmo.io/v1alpha1
kind: TaskExecution
metadata:
  name: $1
  annotations:
$3
spec:
  type: container
  retries: $2
  container:
    image: busybox:1.36
    command: ["sh", "-c", "echo run"]
${4:-}
EOF
}

# ---- a short image-pull grace period, from the configuration file ----
cat >"$WORK/config.yaml" <<'EOF'
tasks:
  image-pull-backoff-grace-period: 4s
  create-container-config-error-grace-period: 3s
  default-labels:
    platform: kozmo
EOF
e2e_start_local "$WORK/kubeconfig" "$WORK/kozmo.log" --nodes 2 --gpus-per-node 8 --config "$WORK/config.yaml"
within 15 "the server answers kubectl" 'Server Version' k version
within 15 "the TaskExecution and ResourcePool CRDs are installed at start" 'resourcepools.kozmo.io.*taskexecutions.kozmo.io' \
  sh -c "kubectl --cache-dir $WORK/cache get crd -o name | sort | tr '\n' ' '"

# ---- a container task succeeds; kubectl get shows its columns ----
expect "kubectl apply -f examples/task-container.yaml" 'created' k apply -f "$EX/task-container.yaml"
within 30 "the container task succeeds" '^Succeeded//0$' phase_reason hello-task
expect "kubectl get tx shows PHASE, ATTEMPT, REASON and AGE" 'NAME +PHASE +ATTEMPT +REASON +AGE' k get tx hello-task
expect "the task's pod carries the platform's default label and the task's labels" 'kozmo' \
  k get pod hello-task-0 -o 'jsonpath={.metadata.labels.platform}'
expect "the task's command template was rendered in the pod" 'writes to file:///tmp/kozmo/outputs/hello-task' \
  k get pod hello-task-0 -o 'jsonpath={.spec.containers[0].args[0]}'
expect "kubectl describe shows the phase Events" 'Normal +Succeeded +.*kozmo-tasks' k describe tx hello-task

# ---- failures in plain words ----
{
  task oom 2 "    kozmo.io/sim-fail: OOMKilled
    kozmo.io/sim-duration: 300ms"
  task bad-image 2 "    kozmo.io/sim-fail: InvalidImageName"
  task pull 0 "    kozmo.io/sim-fail: ImagePullBackOff"
  task broken 0 "    kozmo.io/sim-duration: 1s" | sed 's/    image: busybox:1.36/    imagePullPolicy: Always/'
  task typo-image 2 "    kozmo.io/sim-duration: 1s" | sed 's/    image: busybox:1.36/    image: BusyBox:1.36/'
} >"$WORK/failures.yaml"
expect "kubectl apply creates the failing tasks" 'taskexecution.kozmo.io/pull created' k apply -f "$WORK/failures.yaml"
within 10 "ImagePullBackOff first waits out its grace period" '^Initializing/ImagePullBackOff/0$' phase_reason pull
within 30 "a task OOM-killed every time is retried spec.retries times and ends Failed with OOMKilled" \
  '^Failed/OOMKilled/2$' phase_reason oom
expect "each of its attempts was a fresh pod" 'oom-0.*oom-1.*oom-2' \
  sh -c "kubectl --cache-dir $WORK/cache get tx oom -o jsonpath='{.status.attempts[*].pod}'"
expect "kubectl describe shows the failed attempts as Events" 'AttemptFailed .*attempt 1 failed: OOMKilled' k describe tx oom
within 15 "InvalidImageName fails at once, without a retry" '^Failed/InvalidImageName/0$' phase_reason bad-image
expect "its message says what to fix" 'fix the image name' field bad-image .status.message
within 15 "an image name a kubelet cannot parse, unscripted, fails the same way" '^Failed/InvalidImageName/0$' \
  phase_reason typo-image
expect "  ... with the kubelet's own words" 'couldn.t parse image reference "BusyBox:1.36": invalid reference format: repository name must be lowercase' \
  field typo-image .status.message
within 20 "ImagePullBackOff fails after its grace period, with that reason" '^Failed/ImagePullBackOff/0$' phase_reason pull
expect "the message names the grace period" 'Grace period \[4s\] exceeded' field pull .status.message
within 10 "an invalid spec fails at once and names the field" 'spec.container.image: Required value' \
  field broken .status.message
expect "  ... with reason InvalidSpec" '^Failed/InvalidSpec/0$' phase_reason broken
expect_fail "the API server refuses a task without spec.type" 'spec.type: Required value' \
  sh -c "printf 'apiVersion: kozmo.io/v1alpha1\nkind: TaskExecution\nmetadata: {name: typeless}\nspec: {container: {image: x}}\n' | kubectl --cache-dir $WORK/cache apply -f -"

# ---- data loading: the copilot's containers and volumes in the task's pod ----
expect "kubectl apply -f examples/task-copilot.yaml" 'created' k apply -f "$EX/task-copilot.yaml"
within 30 "the task with data loading succeeds on the simulated nodes" '^Succeeded//0$' phase_reason upper-case
expect "its pod has the downloader as an init container" '^kozmo-copilot-downloader$' \
  k get pod upper-case-0 -o 'jsonpath={.spec.initContainers[*].name}'
expect "  ... and the uploader beside the task's container" '^primary kozmo-copilot-uploader$' \
  k get pod upper-case-0 -o 'jsonpath={.spec.containers[*].name}'
expect "  ... and the data volumes sized from its ephemeral-storage request" '^kozmo-inputs=1Gi kozmo-outputs=1Gi *$' \
  k get pod upper-case-0 -o 'jsonpath={range .spec.volumes[*]}{.name}={.emptyDir.sizeLimit}{" "}{end}' 
expect "  ... and the task's command wrapped so that its exit code reaches the uploader" "^/bin/sh -c .*_EXIT.*kozmo-wrapped sh -c tr a-z A-Z" \
  k get pod upper-case-0 -o 'jsonpath={.spec.containers[0].command[*]}'

# ---- a pod task with a sidecar ----
expect "kubectl apply -f examples/task-pod-sidecar.yaml" 'created' k apply -f "$EX/task-pod-sidecar.yaml"
within 30 "the pod task succeeds when its primary container does" '^Succeeded//0$' phase_reason train-with-sidecar

# ---- training-job tasks: a PyTorchJob per attempt, gang-bound, its pods demystified ----
expect "kubectl apply -f examples/task-pytorch.yaml" 'created' k apply -f "$EX/task-pytorch.yaml"
within 15 "the pytorch task creates a PyTorchJob owned by it" '^TaskExecution/mnist-task$' \
  k get pytorchjob mnist-task-0 -o 'jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}'
within 30 "the job's four 2-GPU pods are bound as one gang" '^4 4x2$' sh -c \
  "kubectl --cache-dir $WORK/cache get pods -l kozmo.io/task-name=mnist-task -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c . | tr '\n' ' ';
   kubectl --cache-dir $WORK/cache get pod mnist-task-0-worker-0 -o jsonpath='{.metadata.annotations.kozmo\.io/gang-members}'"
within 15 "the task says Running while the job runs" '^Running/' phase_reason mnist-task
within 60 "the task Succeeds when the job does" '^Succeeded//0$' phase_reason mnist-task
expect "its status names the job" '^PyTorchJob/mnist-task-0$' field mnist-task '.status.attempts[0].job'
sed -e 's/name: mnist-task/name: bad-worker/' -e 's/retries: 1/retries: 2/' \
  -e '/Worker:/,$ s|kozmo.io/sim-duration: "3s"|kozmo.io/sim-fail: InvalidImageName|' "$EX/task-pytorch.yaml" >"$WORK/bad-worker.yaml"
expect "a pytorch task whose workers' image is invalid" 'created' k apply -f "$WORK/bad-worker.yaml"
within 30 "fails with InvalidImageName at once, without a retry" '^Failed/InvalidImageName/0$' phase_reason bad-worker
expect "its message names the worker pod and the job" 'pod bad-worker-0-worker-[0-2] of PyTorchJob bad-worker-0' \
  field bad-worker .status.message
within 15 "and its job is deleted" 'NotFound|not found' k get pytorchjob bad-worker-0

# ---- secrets: by reference, never their values ----
expect "kubectl create secret generic works against kozmo local" 'secret/db-cred created' \
  k create secret generic db-cred --from-literal=password=s3cr3t-v4lue --from-literal=user=ana
secret_task() { # NAME SECRET
  cat <<EOF
apiVersion: kozmo.io/v1alpha1
kind: TaskExecution
metadata:
  name: $1
  annotations: {kozmo.io/sim-duration: 1s}
spec:
  type: container
  container: {image: busybox:1.36, command: ["sh", "-c", "test -n \"\$DB_PASSWORD\""]}
  secrets:
  - {name: $2, key: password, envVar: DB_PASSWORD}
  - {name: $2, key: user, mountAs: file}
EOF
}
expect "a task with two values of a Secret" 'created' sh -c "$(declare -f secret_task); secret_task with-secret db-cred | kubectl --cache-dir $WORK/cache apply -f -"
within 30 "it succeeds" '^Succeeded//0$' phase_reason with-secret
expect "its pod reads the password from the Secret by reference" '^db-cred/password$' \
  k get pod with-secret-0 -o 'jsonpath={.spec.containers[0].env[?(@.name=="DB_PASSWORD")].valueFrom.secretKeyRef.name}/{.spec.containers[0].env[?(@.name=="DB_PASSWORD")].valueFrom.secretKeyRef.key}'
expect "and mounts the user as a read-only file" '^/etc/kozmo/secrets/db-cred/user user true$' \
  k get pod with-secret-0 -o 'jsonpath={.spec.containers[0].volumeMounts[0].mountPath} {.spec.containers[0].volumeMounts[0].subPath} {.spec.containers[0].volumeMounts[0].readOnly}'
no_value() { # WHAT CMD...: CMD's output (non-empty) does not hold the secret's value
  local what=$1 out
  shift
  out=$("$@" 2>&1)
  if [ -n "$out" ] && ! grep -q 's3cr3t-v4lue' <<<"$out"; then ok "the secret's value is not in $what"; else bad "the secret's value is not in $what" "$(grep -m1 s3cr3t <<<"$out")"; fi
}
no_value "kubectl get tx -o yaml" k get tx with-secret -o yaml
no_value "the pod" k get pod with-secret-0 -o yaml
no_value "the Events" k get events -o yaml
no_value "Kozmo's log" cat "$WORK/kozmo.log"
expect "a task naming a Secret that does not exist" 'created' sh -c "$(declare -f secret_task); secret_task no-secret nope | kubectl --cache-dir $WORK/cache apply -f -"
within 10 "waits out the create-container-config grace period" '^Initializing/CreateContainerConfigError/0$' phase_reason no-secret
within 15 "then fails with CreateContainerConfigError" '^Failed/CreateContainerConfigError/0$' phase_reason no-secret
expect "saying which Secret is missing" 'secret \"nope\" not found' field no-secret .status.message

# ---- a GPU task on an accelerator the nodes do not have says why it is queued ----
expect "kubectl apply -f examples/task-gpu-accelerator.yaml" 'created' k apply -f "$EX/task-gpu-accelerator.yaml"
within 15 "a GPU task whose accelerator no node has is Queued, and says why" \
  "^Queued/Unschedulable/0 .*didn't match Pod's node affinity" \
  sh -c "kubectl --cache-dir $WORK/cache get tx finetune-v100 -o jsonpath='{.status.phase}/{.status.reason}/{.status.attempt} {.status.message}'"

# ---- resource pools ----
expect "kubectl apply -f examples/task-pool.yaml" 'resourcepool.kozmo.io/license-server created' k apply -f "$EX/task-pool.yaml"
within 15 "a pool of 2 runs two tasks" '^2$' sh -c \
  "kubectl --cache-dir $WORK/cache get tx licensed-1 licensed-2 licensed-3 -o jsonpath='{range .items[*]}{.status.phase}{\"\\n\"}{end}' | grep -c Running"
expect "and holds the third in WaitingForResources" 'WaitingForResources/ResourceExhausted' sh -c \
  "kubectl --cache-dir $WORK/cache get tx licensed-1 licensed-2 licensed-3 -o jsonpath='{range .items[*]}{.status.phase}/{.status.reason} {end}'"
expect "kubectl get resourcepools shows the tokens in use and the tasks waiting" 'license-server +2 +2 +1' k get resourcepools
within 20 "the third starts when one of the first two ends" '^3$' sh -c \
  "kubectl --cache-dir $WORK/cache get tx licensed-1 licensed-2 licensed-3 -o jsonpath='{range .items[*]}{.status.phase}{\"\\n\"}{end}' | grep -cE 'Running|Succeeded'"
within 30 "all three end Succeeded and the pool is free again" 'license-server +2 +0 +0' k get resourcepools

# ---- deleting a running task deletes its pod and frees its token ----
{
  echo 'apiVersion: kozmo.io/v1alpha1
kind: ResourcePool
metadata: {name: single}
spec: {quota: 1}'
  task holder 0 "    kozmo.io/sim-duration: forever" "  resourcePool: single"
} >"$WORK/single.yaml"
# The second task only once the first holds the token: created together, either may win it.
task next 0 "    kozmo.io/sim-duration: 1s" "  resourcePool: single" >"$WORK/next.yaml"
expect "a pool of one and a task" 'taskexecution.kozmo.io/holder created' k apply -f "$WORK/single.yaml"
within 15 "the first holds the token and runs" '^Running' phase_reason holder
expect "a second task on the pool" 'taskexecution.kozmo.io/next created' k apply -f "$WORK/next.yaml"
within 15 "the second waits for it" '^WaitingForResources/ResourceExhausted' phase_reason next
expect "kubectl delete tx of a running task" 'deleted' k delete tx holder --wait=true
within 15 "its pod is deleted" 'No resources found|NotFound|^$' sh -c \
  "kubectl --cache-dir $WORK/cache get pods -l kozmo.io/task-name=holder --no-headers 2>&1"
within 15 "its token goes to the waiting task, which succeeds" '^Succeeded//0$' phase_reason next

# ---- a pool that does not exist ----
{ task lost 0 "    kozmo.io/sim-duration: 1s" "  resourcePool: no-such-pool"; } >"$WORK/lost.yaml"
expect "a task naming a pool that does not exist" 'created' k apply -f "$WORK/lost.yaml"
within 10 "waits and says so" "^WaitingForResources/ResourcePoolNotFound/0 ResourcePool \"no-such-pool\" does not exist" \
  sh -c "kubectl --cache-dir $WORK/cache get tx lost -o jsonpath='{.status.phase}/{.status.reason}/{.status.attempt} {.status.message}'"
expect "kubectl describe shows why it waits" 'WaitingForResources .*does not exist' k describe tx lost
expect "creating the pool" 'created' sh -c "printf 'apiVersion: kozmo.io/v1alpha1\nkind: ResourcePool\nmetadata: {name: no-such-pool}\nspec: {quota: 1}\n' | kubectl --cache-dir $WORK/cache apply -f -"
within 15 "lets it run to its end" '^Succeeded//0$' phase_reason lost

# ---- the output cache ----
# cached NAME VERSION SERIALIZABLE ANNOTATION-LINES: identical tasks but for name and annotations.
cached() {
  cat <<EOF
---
apiVersion: kozmo.io/v1alpha1
kind: TaskExecution
metadata:
  name: $1
  annotations:
$4
spec:
  type: container
  container: {image: "busybox:1.36", command: ["sh", "-c", "tr a-z A-Z < /var/kozmo/inputs/text"]}
  inputs: {text: "file://$WORK/in.txt"}
  outputPrefix: "file://$WORK/out/$1/"
  cache: {enabled: true, version: "$2", serializable: $3}
EOF
}
echo "hello kozmo" >"$WORK/in.txt"
task_pods() { k get pods -l "kozmo.io/task-name in ($1)" -o 'jsonpath={range .items[*]}{.metadata.name} {end}'; }
cached c1 1 false "    kozmo.io/sim-duration: 1s" >"$WORK/c1.yaml"
expect "a cached task is created" 'created' k apply -f "$WORK/c1.yaml"
within 20 "it computes and succeeds" '^Succeeded//0$' phase_reason c1
expect "its outputs are stored as a TaskCacheEntry once it says Succeeded (kubectl get txc)" "default/c1 +file://$WORK/out/c1/" k get txc
cached c2 1 false "    kozmo.io/sim-duration: 1s" >"$WORK/c2.yaml"
expect "an identical task is created" 'created' k apply -f "$WORK/c2.yaml"
within 10 "it completes as CacheHit" '^Succeeded/CacheHit/0$' phase_reason c2
expect "without a pod" '^$' task_pods c2
expect "its outputs are the first task's" "^file://$WORK/out/c1/ default/c1\$" sh -c \
  "kubectl --cache-dir $WORK/cache get tx c2 -o jsonpath='{.status.outputs} {.status.cache.source}'"
expect "kubectl describe shows the CacheHit Event" 'Normal +CacheHit .*the outputs of default/c1 are reused' k describe tx c2
cached c3 2 false "    kozmo.io/sim-duration: 1s" >"$WORK/c3.yaml"
expect "the same task with another spec.cache.version is created" 'created' k apply -f "$WORK/c3.yaml"
within 20 "it computes (another key)" '^Succeeded//0$' phase_reason c3
expect "in a pod of its own" '^c3-0 $' task_pods c3

echo "other text" >"$WORK/in.txt"
cached c4 1 false "    kozmo.io/sim-duration: 1s" >"$WORK/c4.yaml"
expect "the same task after its input file changed is created" 'created' k apply -f "$WORK/c4.yaml"
within 20 "it computes: the key follows the input's content" '^Succeeded//0$' phase_reason c4
expect "in a pod of its own" '^c4-0 $' task_pods c4
echo "hello kozmo" >"$WORK/in.txt"
expect "kubectl annotate tx c2 kozmo.io/cache-overwrite=true" 'annotated' k annotate tx c2 kozmo.io/cache-overwrite=true
within 20 "the CacheHit task recomputes in a pod" '^c2-0 $' task_pods c2
within 20 "and succeeds computing" '^Succeeded//0$' phase_reason c2
# The outputs are stored before the task says Succeeded: no wait here.
expect "its outputs have replaced the stored ones" "default/c2 +file://$WORK/out/c2/" k get txc

{ cached s1 3 true "    kozmo.io/sim-duration: 3s"; cached s2 3 true "    kozmo.io/sim-duration: 3s"; } >"$WORK/ser.yaml"
expect "two identical serializable tasks are created together" 's2 created' k apply -f "$WORK/ser.yaml"
within 10 "one of them waits for the other's outputs" 'WaitingForCache' sh -c \
  "kubectl --cache-dir $WORK/cache get tx s1 s2 -o jsonpath='{.items[*].status.phase}'"
within 30 "both succeed, one as CacheHit" '^Succeeded/(CacheHit)?/0 Succeeded/(CacheHit)?/0 1$' sh -c \
  "echo \$(kubectl --cache-dir $WORK/cache get tx s1 s2 -o jsonpath='{range .items[*]}{.status.phase}/{.status.reason}/{.status.attempt} {end}') \
   \$(kubectl --cache-dir $WORK/cache get tx s1 s2 -o jsonpath='{.items[*].status.reason}' | grep -o CacheHit | wc -l)"
expect "they ran one pod" '^s[12]-0 $' task_pods s1,s2

{ cached f1 4 true "    kozmo.io/sim-duration: 2s
    kozmo.io/sim-exit-code: \"1\""; } >"$WORK/f1.yaml"
cached f2 4 true "    kozmo.io/sim-duration: 1s" >"$WORK/f2.yaml"
expect "a serializable task that will fail is created" 'created' k apply -f "$WORK/f1.yaml"
within 10 "it runs" '^Running' phase_reason f1
expect "an identical one is created" 'created' k apply -f "$WORK/f2.yaml"
within 10 "it waits for the first" '^WaitingForCache/WaitingForCache' phase_reason f2
within 20 "the first fails" "^Failed/" phase_reason f1
within 20 "the waiting one takes the reservation over, computes and succeeds" '^Succeeded//0$' phase_reason f2
expect "in a pod of its own" '^f2-0 $' task_pods f2

e2e_cleanup_server() { kill "$KOZMO_PID" 2>/dev/null; wait "$KOZMO_PID" 2>/dev/null; KOZMO_PID=""; }
e2e_cleanup_server

# ---- restart: kill -9 while pooled tasks run and wait ----
DATA=$WORK/data
start_b() { e2e_start_local "$WORK/kubeconfig-b" "$WORK/kozmo-b.log" --cluster "$EX/cluster.yaml" --data-dir "$DATA"; }
start_b
within 15 "a second server (with --data-dir) answers kubectl" 'Server Version' k version
cached keep1 5 false "    kozmo.io/sim-duration: 1s" >"$WORK/keep1.yaml"
expect "a cached task on the server with --data-dir" 'created' k apply -f "$WORK/keep1.yaml"
within 20 "computes and succeeds" '^Succeeded//0$' phase_reason keep1
{
  echo 'apiVersion: kozmo.io/v1alpha1
kind: ResourcePool
metadata: {name: two}
spec: {quota: 2}'
  for i in 1 2 3 4 5 6; do task "r$i" 0 "    kozmo.io/sim-duration: 2s" "  resourcePool: two"; done
} >"$WORK/restart.yaml"
expect "six tasks on a pool of two" 'taskexecution.kozmo.io/r6 created' k apply -f "$WORK/restart.yaml"
expect "and a GPU task for the V100 nodes" 'created' k apply -f "$EX/task-gpu-accelerator.yaml"
within 15 "two of them run" '^2$' sh -c \
  "kubectl --cache-dir $WORK/cache get tx -o jsonpath='{range .items[*]}{.metadata.name}={.status.phase}{\"\\n\"}{end}' | grep -c '^r.=Running'"
kill -9 "$KOZMO_PID"; wait "$KOZMO_PID" 2>/dev/null; KOZMO_PID=""
ok "kozmo local is killed with SIGKILL while tasks run and wait"
start_b
within 15 "it restarts on the same data" 'Server Version' k version
cached keep2 5 false "    kozmo.io/sim-duration: 1s" >"$WORK/keep2.yaml"
expect "after the restart an identical task is created" 'created' k apply -f "$WORK/keep2.yaml"
within 15 "the cache survived the restart: CacheHit" '^Succeeded/CacheHit/0$' phase_reason keep2
# Sample the pool's tasks while they finish: never more than two pods of them alive at once.
over=0 samples=0 finished=""
for _ in $(seq 1 80); do
  alive=$(k get pods -l kozmo.io/task-name -o 'jsonpath={range .items[*]}{.metadata.name}={.status.phase}{"\n"}{end}' 2>/dev/null |
    grep -cE '^r[0-9]-[0-9]+=(Pending|Running)$')
  samples=$((samples + 1))
  [ "$alive" -gt 2 ] && over=$((over + 1))
  finished=$(k get tx -o 'jsonpath={range .items[*]}{.metadata.name}={.status.phase}{"\n"}{end}' 2>/dev/null | grep -c '=Succeeded$')
  [ "$finished" -eq 9 ] && break
  sleep 0.25
done
if [ "$over" -eq 0 ]; then ok "no sample saw more than two of the pool's pods alive ($samples samples)"; else
  bad "the pool went over quota in $over of $samples samples"; fi
if [ "$finished" -eq 9 ]; then ok "every task reached its end after the restart (9 Succeeded with the cached two)"; else
  bad "every task reaches its end after the restart" "$(k get tx 2>&1)"; fi
expect "no attempt was started twice: one pod per task, all of attempt 0" '^r1-0 r2-0 r3-0 r4-0 r5-0 r6-0 $' sh -c \
  "kubectl --cache-dir $WORK/cache get pods -l kozmo.io/task-name -o jsonpath='{range .items[*]}{.metadata.name} {end}' | tr ' ' '\n' | grep '^r' | sort | tr '\n' ' '"
expect "the GPU task ran on a V100 node" 'v100-[01]' k get pod finetune-v100-0 -o 'jsonpath={.spec.nodeName}'
within 10 "the pool is free" 'two +2 +0 +0' k get resourcepools two

e2e_finish "# tasks e2e:"
