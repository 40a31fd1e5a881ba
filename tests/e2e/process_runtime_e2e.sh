#!/usr/bin/env bash
# End-to-end: pods whose containers really run as local processes (`kozmo local --runtime
# process`) and `kubectl logs`, with the real kubectl.
# Usage: process_runtime_e2e.sh PATH/TO/kozmo
set -uo pipefail
KOZMO=${1:?usage: process_runtime_e2e.sh PATH/TO/kozmo}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
e2e_init kozmo-procrt 80
# A root kozmo runs containers as nobody: they must reach the mount points made under $WORK.
chmod 0755 "$WORK"
eventually() { within 40 "$@"; } # eventually NAME PATTERN CMD...: within 40 s
# A marker no other process on the host has in its command line.
MARK=$((900000 + RANDOM))
# pod NAME RESTART-POLICY: a pod manifest head; the caller appends containers (and volumes).
pod() {
  cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  annotations:
    kozmo.io/sim-restart-backoff: 1s
spec:
  restartPolicy: $2
EOF
}
phase() { k get pod "$1" -o 'jsonpath={.status.phase}'; }
# procs CMDLINE: the pids whose command line is exactly CMDLINE (from /proc: no procps needed),
# or "none".
procs() {
  local d found=""
  for d in /proc/[0-9]*; do
    [ "$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)" = "$1 " ] && found="$found ${d#/proc/}"
  done
  echo "${found:-none}"
}

e2e_start_local "$WORK/kubeconfig" "$WORK/kozmo.log" --nodes 1 --runtime process --data-dir "$WORK/data"
eventually "the server answers kubectl" 'Server Version' k version
eventually "the node is labelled with the process runtime" 'node-0 +Ready .*process' k get nodes -L kozmo.io/runtime
expect "discovery lists pods/log" '"pods/log"' k get --raw /api/v1

# A failing container: exit code, state, both output streams in its log.
{ pod fail3 Never; cat <<EOF
  containers:
  - name: main
    image: busybox
    command: [sh, -c, 'echo hello; echo err >&2; exit 3']
EOF
} | k create -f - >/dev/null
eventually "a pod exiting 3 ends Failed" '^Failed$' phase fail3
expect "its container terminated with exit code 3, reason Error" '^3 Error$' \
  k get pod fail3 -o 'jsonpath={.status.containerStatuses[0].state.terminated.exitCode} {.status.containerStatuses[0].state.terminated.reason}'
expect "kubectl logs shows stdout and stderr" 'hello.*err' sh -c "kubectl logs fail3 | tr '\n' ' '"
LOGDIR=$(ls -d "$WORK"/data/logs/pods/default_fail3_*/main 2>/dev/null)
expect "the log lives at logs/pods/<ns>_<pod>_<uid>/<container>/<restart>.log, in CRI lines" 'Z stdout F hello' cat "$LOGDIR/0.log"
expect "kubectl logs --timestamps puts each line's time before it" '^20[0-9-]+T[0-9:.]+Z hello$' sh -c "kubectl logs fail3 --timestamps | head -1"
expect_fail "an unknown container is refused" 'container nope is not valid for pod fail3' k logs fail3 -c nope
expect_fail "previous of a container that never restarted is refused" 'previous terminated container "main" in pod "fail3" not found' k logs fail3 --previous

# Several containers: -c, and the API's own message without a container.
{ pod two Never; cat <<EOF
  containers:
  - name: a
    image: busybox
    command: [sh, -c, 'echo from-a']
  - name: b
    image: busybox
    command: [sh, -c, 'echo from-b']
EOF
} | k create -f - >/dev/null
eventually "a two-container pod succeeds" '^Succeeded$' phase two
expect "kubectl logs -c picks the container" '^from-b$' k logs two -c b
expect_fail "the API wants a container name when there are several" 'a container name must be specified for pod two, choose one of: \[a b\]' \
  k get --raw /api/v1/namespaces/default/pods/two/log

# --tail
{ pod lines Never; cat <<EOF
  containers:
  - name: main
    image: busybox
    command: [seq, '1', '10']
EOF
} | k create -f - >/dev/null
eventually "seq 1 10 succeeds" '^Succeeded$' phase lines
expect "kubectl logs --tail 3 shows the last three lines" '^8 9 10 $' sh -c "kubectl logs lines --tail 3 | tr '\n' ' '"
expect "limitBytes cuts the log" '^1.2.$' sh -c "kubectl logs lines --limit-bytes 4 | tr '\n' '.'"

# --previous, and an emptyDir that outlives a container's restart.
{ pod restarter OnFailure; cat <<EOF
  containers:
  - name: main
    image: busybox
    command: [sh, -c, 'n=\$(cat /state/n 2>/dev/null || echo 0); n=\$((n+1)); echo \$n > /state/n; echo run-\$n; if [ \$n -ge 2 ]; then exec sleep $((MARK + 1)); fi; exit 1']
    volumeMounts: [{name: state, mountPath: /state}]
  volumes: [{name: state, emptyDir: {}}]
EOF
} | k create -f - >/dev/null
eventually "a failing container is restarted under OnFailure" '^1 true$' \
  k get pod restarter -o 'jsonpath={.status.containerStatuses[0].restartCount} {.status.containerStatuses[0].ready}'
expect "kubectl logs shows the current run" '^run-2$' k logs restarter
expect "kubectl logs --previous shows the run before" '^run-1$' k logs restarter --previous
expect "lastState keeps the failed run" '^1$' k get pod restarter -o 'jsonpath={.status.containerStatuses[0].lastState.terminated.exitCode}'

# -f follows until the container ends.
{ pod follow Never; cat <<EOF
  containers:
  - name: main
    image: busybox
    command: [sh, -c, 'for i in 1 2 3 4; do echo tick-\$i; sleep 1; done']
EOF
} | k create -f - >/dev/null
eventually "the followed pod runs" '^Running$' phase follow
expect "kubectl logs -f streams until the container ends" 'tick-1 tick-2 tick-3 tick-4 $' \
  sh -c "timeout 30 kubectl logs -f follow | tr '\n' ' '"

# An emptyDir shared by an init container and the main container at other paths.
{ pod shared Never; cat <<EOF
  initContainers:
  - name: writer
    image: busybox
    command: [sh, -c, 'echo made-by-init > $WORK/mnt/out/msg']
    volumeMounts: [{name: scratch, mountPath: $WORK/mnt/out}]
  containers:
  - name: reader
    image: busybox
    command: [sh, -c, 'cat $WORK/mnt/in/msg']
    volumeMounts: [{name: scratch, mountPath: $WORK/mnt/in}]
  volumes: [{name: scratch, emptyDir: {}}]
EOF
} | k create -f - >/dev/null
eventually "init container, then main container: Succeeded" '^Succeeded$' phase shared
expect "the main container read what the init container wrote" '^made-by-init$' k logs shared -c reader
expect "the init container completed" '^Completed$' k get pod shared -o 'jsonpath={.status.initContainerStatuses[0].state.terminated.reason}'

# A Secret as a volume (read-only, items, mode) and as an environment variable.
k create secret generic creds --from-literal=password=s3cr3t >/dev/null
{ pod secretive Never; cat <<EOF
  containers:
  - name: main
    image: busybox
    command: [sh, -c, 'echo file=\$(cat $WORK/mnt/creds/pw) env=\$PASS pod=\$POD; touch $WORK/mnt/creds/x 2>/dev/null || echo read-only; stat -c %a $WORK/mnt/creds/pw']
    env:
    - {name: PASS, valueFrom: {secretKeyRef: {name: creds, key: password}}}
    - {name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
    volumeMounts: [{name: creds, mountPath: $WORK/mnt/creds, readOnly: true}]
  volumes: [{name: creds, secret: {secretName: creds, items: [{key: password, path: pw, mode: 256}]}}]
EOF
} | k create -f - >/dev/null
eventually "the secret pod succeeds" '^Succeeded$' phase secretive
expect "the secret is a file and an env var, the field ref the pod's name" 'file=s3cr3t env=s3cr3t pod=secretive' k logs secretive
expect "the secret volume is read-only with the item's mode" 'read-only.*400' sh -c "kubectl logs secretive | tr '\n' ' '"

# Claims: the default StorageClass provisions a directory for a claim without a class, two pods
# share it (the second reads what the first wrote, as TrainJob initializers and trainers do), and
# deleting the claim deletes its volume and directory. A claim nothing provisions keeps its pod
# in ContainerCreating.
# claim NAME SIZE [EXTRA-SPEC-LINE]: a claim manifest.
claim() { printf 'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: %s}\nspec:\n  accessModes: [ReadWriteMany]\n  resources: {requests: {storage: %s}}\n%s\n' "$1" "$2" "${3:-}"; }
# claim_pod NAME CLAIM READ-ONLY COMMAND: a pod mounting CLAIM at $WORK/mnt/ws-NAME.
claim_pod() {
  pod "$1" Never; cat <<EOF
  containers:
  - name: main
    image: busybox
    command: [sh, -c, '$4']
    volumeMounts: [{name: ws, mountPath: $WORK/mnt/ws-$1}]
  volumes: [{name: ws, persistentVolumeClaim: {claimName: $2, readOnly: $3}}]
EOF
}
expect "kozmo local has the default StorageClass standard" '^standard \(default\) +kozmo.io/local-path +Delete +Immediate' \
  k get storageclass --no-headers
expect_fail "a StorageClass without a provisioner is refused" 'provisioner: Required value' \
  sh -c "printf 'apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: broken}\n' | kubectl create -f -"
claim workspace 1Gi | k create -f - >/dev/null
expect "a claim without storageClassName gets the default class" '^standard$' k get pvc workspace -o 'jsonpath={.spec.storageClassName}'
PVC_UID=$(k get pvc workspace -o 'jsonpath={.metadata.uid}')
eventually "the claim is Bound to the volume provisioned for it" "^Bound pvc-$PVC_UID\$" \
  k get pvc workspace -o 'jsonpath={.status.phase} {.spec.volumeName}'
expect "the volume is a directory under the data dir, reclaimed by deletion" "^$WORK/data/volumes/pvc-$PVC_UID Delete 1Gi\$" \
  k get pv "pvc-$PVC_UID" -o 'jsonpath={.spec.hostPath.path} {.spec.persistentVolumeReclaimPolicy} {.spec.capacity.storage}'
claim_pod initializer workspace false "echo dataset-v1 > $WORK/mnt/ws-initializer/data.txt" | k create -f - >/dev/null
eventually "a pod writing into the claim succeeds" '^Succeeded$' phase initializer
claim_pod trainer workspace true "cat $WORK/mnt/ws-trainer/data.txt; touch $WORK/mnt/ws-trainer/x 2>/dev/null || echo read-only" |
  k create -f - >/dev/null
eventually "a second pod on the claim succeeds" '^Succeeded$' phase trainer
expect "it read what the first wrote, through a read-only claim" '^dataset-v1 read-only $' sh -c "kubectl logs trainer | tr '\n' ' '"
k delete pod initializer trainer --wait=false >/dev/null
k delete pvc workspace --wait=false >/dev/null
eventually "deleting the claim deletes its volume" 'NotFound' k get pv "pvc-$PVC_UID"
eventually "and its directory" '^gone$' sh -c "test -e '$WORK/data/volumes/pvc-$PVC_UID' && echo there || echo gone"
printf 'apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: nas}\nprovisioner: example.com/nfs\n' |
  k create -f - >/dev/null
claim elsewhere 1Gi "  storageClassName: nas" | k create -f - >/dev/null
claim_pod stuck elsewhere false "true" | k create -f - >/dev/null
eventually "a claim of another provisioner's class waits, saying so" "ExternalProvisioning .*external provisioner 'example.com/nfs'" \
  k get events --field-selector involvedObject.name=elsewhere -o 'custom-columns=R:.reason,M:.message' --no-headers
eventually "its pod waits in ContainerCreating with a FailedMount naming the claim" \
  'persistentvolumeclaim "elsewhere" is not bound' \
  k get events --field-selector involvedObject.name=stuck,reason=FailedMount -o 'jsonpath={.items[*].message}'
expect "the pod is still Pending in ContainerCreating" '^Pending ContainerCreating$' \
  k get pod stuck -o 'jsonpath={.status.phase} {.status.containerStatuses[0].state.waiting.reason}'
claim huge 2Pi | k create -f - >/dev/null
eventually "a claim over the provisioner's limit is refused with an Event" 'ProvisioningFailed .*2Pi is more than kozmo.io/local-path accepts \(1Pi\)' \
  k get events --field-selector involvedObject.name=huge -o 'custom-columns=R:.reason,M:.message' --no-headers
printf 'apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: nas-by-hand}\nspec:\n  storageClassName: nas\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteMany]\n  hostPath: {path: %s}\n' \
  "$WORK/nas" | k create -f - >/dev/null
eventually "once a volume is made for the claim, the kubelet tries again and the pod runs" '^Succeeded$' phase stuck

# Termination messages: the file, and the log tail with FallbackToLogsOnError.
{ pod farewell Never; cat <<EOF
  containers:
  - name: file
    image: busybox
    command: [sh, -c, 'echo -n all done > /dev/termination-log']
  - name: fallback
    image: busybox
    command: [sh, -c, 'echo boom; exit 1']
    terminationMessagePolicy: FallbackToLogsOnError
EOF
} | k create -f - >/dev/null
eventually "the termination message pod ends" '^Failed$' phase farewell
expect "the termination-log file becomes the message" '^all done$' \
  k get pod farewell -o 'jsonpath={.status.containerStatuses[?(@.name=="file")].state.terminated.message}'
expect "FallbackToLogsOnError uses the log tail" '^boom' \
  k get pod farewell -o 'jsonpath={.status.containerStatuses[?(@.name=="fallback")].state.terminated.message}'

# No command: nothing to run (the image is not pulled).
{ pod nocmd Never; cat <<EOF
  containers:
  - name: main
    image: busybox
EOF
} | k create -f - >/dev/null
eventually "a container without command waits with CreateContainerError" 'CreateContainerError.*needs a command' \
  k get pod nocmd -o 'jsonpath={.status.containerStatuses[0].state.waiting.reason} {.status.containerStatuses[0].state.waiting.message}'
expect_fail "its logs say it is waiting" 'is waiting to start: CreateContainerError' k logs nocmd

# PATH starts with kozmo's own directory.
{ pod selfcall Never; cat <<EOF
  containers:
  - name: main
    image: busybox
    command: [kozmo, version]
EOF
} | k create -f - >/dev/null
eventually "a container runs \`kozmo version\` from PATH" '^Succeeded$' phase selfcall
expect "and prints the version" 'kozmo' k logs selfcall

# A pod annotated for the simulated runtime has no logs.
{ pod simmed Never; cat <<EOF
  containers:
  - name: main
    image: busybox
    command: [sh, -c, 'echo never']
EOF
} | sed 's|^  annotations:|  annotations:\n    kozmo.io/runtime: sim\n    kozmo.io/sim-duration: 1s|' | k create -f - >/dev/null
eventually "the simulated pod completes" '^Succeeded$' phase simmed
expect_fail "kubectl logs says a simulated pod has no logs" 'simulated runtime' k logs simmed

# Deleting a running pod stops its process: SIGTERM, no stray process.
{ pod sleeper Never; cat <<EOF
  containers:
  - name: main
    image: busybox
    command: [sleep, '$MARK']
EOF
} | k create -f - >/dev/null
eventually "the sleeper runs" '^Running$' phase sleeper
expect "its process runs on the host" '^ [0-9]+$' procs "sleep $MARK"
expect "delete a running pod" 'pod "sleeper" deleted' k delete pod sleeper --timeout=40s
expect "the process is gone" '^none$' procs "sleep $MARK"
eventually "the deleted pod's logs are removed" '^gone$' sh -c "ls -d $WORK/data/logs/pods/default_sleeper_* 2>/dev/null || echo gone"
expect "the pod ended with SIGTERM's 143 before it went" 'exitCode.:143|exit code=143|code=143' grep -E 'sleeper container=main exited code=143' "$WORK/kozmo.log"

# A process that ignores SIGTERM is killed when the grace period is over.
{ pod stubborn Never; cat <<EOF
  containers:
  - name: main
    image: busybox
    command: [sh, -c, 'trap "" TERM; sleep $((MARK + 2)); echo not reached']
EOF
} | k create -f - >/dev/null
eventually "the stubborn pod runs" '^Running$' phase stubborn
expect "delete it with a 2 s grace period" 'pod "stubborn" deleted' k delete pod stubborn --grace-period=2 --timeout=40s
expect "SIGKILL after the grace period stopped it and its child" '^none$' procs "sleep $((MARK + 2))"
expect "it ended with SIGKILL's 137" 'stubborn container=main exited code=137' grep 'stubborn container=main exited' "$WORK/kozmo.log"

# An MPIJob: the launcher's kubectl-delivery init step is done by the runtime itself, and
# kubexec.sh (mpirun's rsh agent) reaches each worker of the hostfile through it.
cat <<'EOF' | k create -f - >/dev/null
apiVersion: kubeflow.org/v1
kind: MPIJob
metadata:
  name: mpi
spec:
  slotsPerWorker: 1
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers:
          - name: mpi
            image: busybox
            command: [sh, -c, 'for h in $(cut -d" " -f1 /etc/mpi/hostfile); do /etc/mpi/kubexec.sh $h echo hello from \$HOSTNAME || exit 1; done; /opt/kube/kubectl exec nope -- true || echo unknown pod refused']
    Worker:
      replicas: 2
      restartPolicy: Never
      template:
        spec:
          containers:
          - name: mpi
            image: busybox
EOF
eventually "an MPIJob under the process runtime succeeds" '^True$' \
  k get mpijob mpi -o 'jsonpath={.status.conditions[?(@.type=="Succeeded")].status}'
expect "its launcher's kubectl-delivery step completed" '^Completed$' \
  k get pod mpi-launcher -o 'jsonpath={.status.initContainerStatuses[?(@.name=="kubectl-delivery")].state.terminated.reason}'
expect "the launcher reached both workers through kubexec.sh" 'hello from mpi-worker-0 hello from mpi-worker-1 ' \
  sh -c "kubectl logs mpi-launcher -c mpi | grep '^hello' | tr '\n' ' '"
expect "a pod the hostfile does not list is refused" 'unknown pod refused' k logs mpi-launcher -c mpi

# A real mpirun (OpenMPI, Debian's openmpi-bin): its daemons start through kubexec.sh, one
# rank per worker.
if command -v mpirun >/dev/null; then
  cat <<'EOF' | k create -f - >/dev/null
apiVersion: kubeflow.org/v1
kind: MPIJob
metadata:
  name: ompi
spec:
  slotsPerWorker: 1
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers:
          - name: mpi
            image: mpioperator/openmpi
            env:
            - {name: OMPI_ALLOW_RUN_AS_ROOT, value: "1"}
            - {name: OMPI_ALLOW_RUN_AS_ROOT_CONFIRM, value: "1"}
            command: [mpirun, -np, '2', sh, -c, 'echo rank $OMPI_COMM_WORLD_RANK of $OMPI_COMM_WORLD_SIZE on $HOSTNAME']
    Worker:
      replicas: 2
      restartPolicy: Never
      template:
        spec:
          containers:
          - name: mpi
            image: mpioperator/openmpi
EOF
  eventually "an MPIJob running mpirun under the process runtime succeeds" '^True$' \
    k get mpijob ompi -o 'jsonpath={.status.conditions[?(@.type=="Succeeded")].status}'
  expect "mpirun ran one rank on each worker" 'rank 0 of 2 on ompi-worker-0 .*rank 1 of 2 on ompi-worker-1' \
    sh -c "kubectl logs ompi-launcher -c mpi | sort | tr '\n' ' '"
else
  bad "mpirun is on PATH for the MPIJob test" "install Debian's openmpi-bin (scripts/setup.sh does)"
fi

# Stopping kozmo kills what still runs.
expect "the restarted container still runs" '^ [0-9]+$' procs "sleep $((MARK + 1))"
kill "$KOZMO_PID" 2>/dev/null && wait "$KOZMO_PID" 2>/dev/null
KOZMO_PID=""
expect "stopping kozmo local stops the pods' processes" '^none$' procs "sleep $((MARK + 1))"

e2e_finish "process runtime:"
