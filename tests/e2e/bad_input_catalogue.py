#!/usr/bin/env python3
"""The bad-input catalogue: every kind a user writes, in its hostile forms, sent with kubectl to
`kozmo local`. Each case says what the user gets back: a refusal at admission (kubectl's error,
with the HTTP status and kube-apiserver's words), or an object that is accepted and then fails
with a condition, a status message or an Event naming the field. After the whole catalogue, an
ordinary job of each pillar (a PyTorchJob, a TaskExecution, a GPU pod) still completes, and the
server never restarted.

Usage: bad_input_catalogue.py KOZMO
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from e2e_tap import bad, ok, tally

KOZMO = sys.argv[1] if len(sys.argv) > 1 else sys.exit(__doc__)
WORK = tempfile.mkdtemp(prefix="kozmo-catalogue.")
KUBECONFIG = os.path.join(WORK, "kubeconfig")


def kubectl(*args, stdin=None):
    cmd = ["kubectl", "--kubeconfig", KUBECONFIG, "--cache-dir", os.path.join(WORK, "cache"),
           "--request-timeout=20s", *args]
    r = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def create(doc):
    return kubectl("create", "-f", "-", stdin=json.dumps(doc))


def get(kind, name, jsonpath):
    code, out = kubectl("get", kind, name, "-o", "jsonpath=" + jsonpath)
    return out if code == 0 else ""


def within(seconds, fn, pattern):
    """Polls fn() until its text matches pattern; returns (matched, last text)."""
    deadline = time.time() + seconds
    text = ""
    while time.time() < deadline:
        text = fn()
        if re.search(pattern, text):
            return True, text
        time.sleep(0.3)
    return False, text


# ---- the documents --------------------------------------------------------------------------

# kind -> (spec key, container name, replica types beside Worker that the kind needs)
TRAINING = {
    "PyTorchJob": ("pytorchReplicaSpecs", "pytorch", {}),
    "TFJob": ("tfReplicaSpecs", "tensorflow", {}),
    "MPIJob": ("mpiReplicaSpecs", "mpi", {"Launcher": 1}),
    "XGBoostJob": ("xgbReplicaSpecs", "xgboost", {"Master": 1}),
    "PaddleJob": ("paddleReplicaSpecs", "paddle", {}),
    "JAXJob": ("jaxReplicaSpecs", "jax", {}),
}


def replica(container, replicas, resources=None, duration="2s", extra=None):
    c = {"name": container, "image": "busybox:1.36"}
    if resources is not None:
        c["resources"] = resources
    c.update(extra or {})
    return {"replicas": replicas, "restartPolicy": "Never",
            "template": {"metadata": {"annotations": {"kozmo.io/sim-duration": duration}},
                         "spec": {"containers": [c]}}}


def training_job(kind, name, workers=1, resources=None, spec_extra=None, container_extra=None):
    key, container, others = TRAINING[kind]
    specs = {t: replica(container, n) for t, n in others.items()}
    specs["Worker"] = replica(container, workers, resources, extra=container_extra)
    spec = {key: specs}
    spec.update(spec_extra or {})
    return {"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": {"name": name}, "spec": spec}


def task(name, spec):
    return {"apiVersion": "kozmo.io/v1alpha1", "kind": "TaskExecution", "metadata": {"name": name}, "spec": spec}


def container_task(name, **extra):
    spec = {"type": "container", "container": {"image": "busybox:1.36", "command": ["true"]}}
    spec.update(extra)
    return task(name, spec)


def pool(name, spec):
    return {"apiVersion": "kozmo.io/v1alpha1", "kind": "ResourcePool", "metadata": {"name": name}, "spec": spec}


def pod(name, resources=None, extra=None, annotations=None):
    c = {"name": "c", "image": "busybox:1.36"}
    if resources is not None:
        c["resources"] = resources
    c.update(extra or {})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "annotations": annotations or {"kozmo.io/sim-duration": "1s"}},
            "spec": {"restartPolicy": "Never", "containers": [c]}}


# ---- the catalogue --------------------------------------------------------------------------
# refused(what, doc, pattern): kubectl create fails and its error matches pattern.
# failing(what, doc, kind, jsonpath, pattern): created, then kubectl get -o jsonpath matches.

refusals, failures = [], []


def refused(what, doc, pattern):
    refusals.append((what, doc, pattern))


def failing(what, doc, jsonpath, pattern):
    failures.append((what, doc, jsonpath, pattern))


FAILED_MESSAGE = '{.status.conditions[?(@.type=="Failed")].message}'
for kind, (key, container, _) in TRAINING.items():
    low = kind.lower()
    field = f"spec.{key}.Worker.replicas"
    refused(f"{kind}: a billion workers (used to grow the controller to 5 GiB)",
            training_job(kind, f"{low}-huge", 1_000_000_000),
            rf"is invalid: {re.escape(field)}: Invalid value: 1000000000: .*less than or equal to 10000")
    refused(f"{kind}: 2^32+1 workers (used to be truncated to 1, and Succeed)",
            training_job(kind, f"{low}-wrap", 4294967297), r"less than or equal to 10000")
    refused(f"{kind}: -1 workers", training_job(kind, f"{low}-negative", -1),
            rf"{re.escape(field)}: Invalid value: -1: .*greater than or equal to 0")
    refused(f"{kind}: workers given as a string", training_job(kind, f"{low}-typed", "two"),
            rf"{re.escape(field)}: Invalid value: \"string\": .*must be of type integer")
    failing(f"{kind}: -4 GPUs in the template fail the job, naming the field",
            training_job(kind, f"{low}-gpus", 1, {"limits": {"nvidia.com/gpu": -4}}), FAILED_MESSAGE,
            r"Worker.template.spec.containers\[0\].resources.limits\[nvidia.com/gpu\] is -4: "
            r"must be a whole number of GPUs, 0 or more")
    failing(f"{kind}: half a GPU fails the job", training_job(kind, f"{low}-half", 1, {"limits": {"nvidia.com/gpu": "0.5"}}),
            FAILED_MESSAGE, r"is 0.5: must be a whole number of GPUs")
    failing(f"{kind}: 2000 GPUs in one container fail the job",
            training_job(kind, f"{low}-many", 1, {"limits": {"nvidia.com/gpu": 2000}}), FAILED_MESSAGE,
            r"is 2000: at most 1024")
    failing(f"{kind}: GPU requests other than the limit fail the job",
            training_job(kind, f"{low}-differ", 1, {"limits": {"nvidia.com/gpu": 2}, "requests": {"nvidia.com/gpu": 1}}),
            FAILED_MESSAGE, r"requests\[nvidia.com/gpu\] is 1: must equal the limit \(2\)")
    failing(f"{kind}: a pod the API server refuses (port 70000) is reported in ReplicaFailure",
            training_job(kind, f"{low}-port", 1, container_extra={"ports": [{"containerPort": 70000}]}),
            '{.status.conditions[?(@.type=="ReplicaFailure")].message}',
            r"Error creating pod .*containerPort.*must be between 1 and 65535")

failing("MPIJob: 100000 slots per worker fail the job",
        training_job("MPIJob", "mpijob-slots", 1, spec_extra={"slotsPerWorker": 100000}), FAILED_MESSAGE,
        r"spec.slotsPerWorker is 100000: use 1 to 1024")
failing("PyTorchJob: nprocPerNode 100000 fails the job",
        training_job("PyTorchJob", "pytorchjob-nproc", 1, spec_extra={"nprocPerNode": "100000"}), FAILED_MESSAGE,
        r"spec.nprocPerNode is \"100000\": use auto, cpu, gpu or 1 to 1024")
failing("PyTorchJob: elastic minReplicas above maxReplicas fails the job",
        training_job("PyTorchJob", "pytorchjob-elastic", 2,
                     spec_extra={"elasticPolicy": {"minReplicas": 5, "maxReplicas": 2}}), FAILED_MESSAGE,
        r"spec.elasticPolicy.minReplicas \(5\)")

TASK_MESSAGE = "{.status.phase}/{.status.reason}: {.status.message}"
refused("TaskExecution: 5000 retries", container_task("task-retries", retries=5000),
        r"spec.retries: Invalid value: 5000: .*less than or equal to 1000")
refused("TaskExecution: -1 retries", container_task("task-negative", retries=-1),
        r"spec.retries: Invalid value: -1: .*greater than or equal to 0")
refused("TaskExecution: no type", task("task-typeless", {"container": {"image": "x"}}), r"spec.type: Required value")
failing("TaskExecution: an unknown type fails the task", task("task-unknown", {"type": "rocket", "container": {"image": "x"}}),
        TASK_MESSAGE, r"^Failed/InvalidSpec: .*spec.type: Unsupported value: \"rocket\"")
failing("TaskExecution: a timeout beyond int64 nanoseconds fails the task",
        container_task("task-timeout", timeout="99999999999h"), TASK_MESSAGE,
        r"^Failed/InvalidSpec: .*spec.timeout.*out of range")
failing("TaskExecution: a GPU count that is no quantity fails the task",
        container_task("task-gpus", resources={"limits": {"nvidia.com/gpu": "lots"}}), TASK_MESSAGE,
        r"^Failed/InvalidSpec: .*nvidia.com/gpu")
failing("TaskExecution: a negative CPU request fails the task",
        container_task("task-cpu", resources={"requests": {"cpu": "-2"}}), TASK_MESSAGE,
        r"^Failed/InvalidSpec: .*must be 0 or more")

refused("ResourcePool: a quota of 2^63 (was accepted, then treated as absent)", pool("pool-huge", {"quota": 2**63}),
        r"spec.quota: Invalid value: .*less than or equal to 1000000")
refused("ResourcePool: a negative quota", pool("pool-negative", {"quota": -1}),
        r"spec.quota: Invalid value: -1: .*greater than or equal to")
refused("ResourcePool: perNamespace of ten million", pool("pool-ns", {"quota": 4, "perNamespace": 10_000_000}),
        r"spec.perNamespace: Invalid value: 10000000: .*less than or equal to 1000000")

refused("Pod: half a GPU (was scheduled)", pod("pod-half", {"limits": {"nvidia.com/gpu": "0.5"}}),
        r"limits\[nvidia.com/gpu\]: Invalid value: \"500m\": must be an integer")
refused("Pod: a GPU request without its limit", pod("pod-nolimit", {"requests": {"nvidia.com/gpu": 1}}),
        r"Limit must be set for non overcommitable resources")
refused("Pod: GPU requests other than the limit", pod("pod-differ", {"limits": {"nvidia.com/gpu": 2},
                                                                      "requests": {"nvidia.com/gpu": 1}}),
        r"must be equal to nvidia.com/gpu limit")
refused("Pod: resources.limits given as a list", pod("pod-typed", {"limits": [1]}), r"resources.limits")
refused("Pod: a container port of 70000", pod("pod-port", extra={"ports": [{"containerPort": 70000}]}),
        r"containerPort: Invalid value: 70000: must be between 1 and 65535")
refused("Pod: a name of 300 characters", dict(pod("p" * 300), ), r"metadata.name: Invalid value: .*must be no more than 253")
failing("Pod: an unparsable simulation annotation fails the pod's start, naming it",
        pod("pod-annotation", annotations={"kozmo.io/sim-exit-code": "three"}),
        '{.status.containerStatuses[0].state.waiting.reason}: {.status.containerStatuses[0].state.waiting.message}',
        r"^CreateContainerConfigError: .*kozmo.io/sim-exit-code")


# ---- run ------------------------------------------------------------------------------------

def start():
    log = open(os.path.join(WORK, "kozmo.log"), "w")
    proc = subprocess.Popen([KOZMO, "local", "--port", "0", "--nodes", "2", "--gpus-per-node", "8",
                             "--write-kubeconfig", KUBECONFIG], stdout=log, stderr=subprocess.STDOUT)
    for _ in range(200):
        if os.path.exists(KUBECONFIG) and os.path.getsize(KUBECONFIG) > 0:
            break
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    matched, _ = within(20, lambda: kubectl("get", "nodes", "--no-headers")[1], r"(?s)Ready.*Ready")
    if not matched:
        bad("kozmo local starts with two nodes", open(os.path.join(WORK, "kozmo.log")).read()[-2000:])
    return proc


def main():
    proc = start()
    try:
        for what, doc, pattern in refusals:
            code, out = create(doc)
            name = doc["metadata"]["name"]
            if code != 0 and re.search(pattern, out):
                ok(f"{what}: refused")
            else:
                bad(f"{what}: refused", f"kubectl exit {code}: {out.strip()}")
            if code == 0 or kubectl("get", doc["kind"], name)[0] == 0:
                bad(f"{what}: nothing stored", f"{doc['kind']} {name} exists")
        for what, doc, jsonpath, pattern in failures:
            code, out = create(doc)
            if code != 0:
                bad(what, f"kubectl create failed: {out.strip()}")
                doc["skip"] = True
        for what, doc, jsonpath, pattern in failures:
            if doc.get("skip"):
                continue
            matched, text = within(30, lambda: get(doc["kind"], doc["metadata"]["name"], jsonpath), pattern)
            if matched:
                ok(what)
            else:
                bad(what, f"{doc['kind']} {doc['metadata']['name']}: {jsonpath} = {text!r}")

        # ... and ordinary work of every pillar still completes.
        create(training_job("PyTorchJob", "fine", 2, {"limits": {"nvidia.com/gpu": 1}}))
        matched, text = within(60, lambda: get("pytorchjob", "fine", '{.status.conditions[?(@.type=="Succeeded")].status}'),
                               "True")
        (ok if matched else lambda w: bad(w, text))("after the catalogue, an ordinary PyTorchJob succeeds")
        create(container_task("fine-task", retries=2))
        matched, text = within(60, lambda: get("tx", "fine-task", "{.status.phase}"), "^Succeeded$")
        (ok if matched else lambda w: bad(w, text))("... and an ordinary TaskExecution succeeds")
        create(pod("fine-pod", {"limits": {"nvidia.com/gpu": 2}}))
        matched, text = within(60, lambda: get("pod", "fine-pod", "{.status.phase}"), "^Succeeded$")
        (ok if matched else lambda w: bad(w, text))("... and an ordinary GPU pod succeeds")
        if proc.poll() is None:
            ok("kozmo local served the whole catalogue without a restart")
        else:
            bad("kozmo local served the whole catalogue without a restart", f"exit status {proc.returncode}")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        if tally.failed:
            print("--- kozmo local log (tail) ---")
            print("".join(open(os.path.join(WORK, "kozmo.log")).readlines()[-60:]))
        shutil.rmtree(WORK, ignore_errors=True)
    print(f"{tally.passed} passed, {tally.failed} failed")
    sys.exit(1 if tally.failed else 0)


if __name__ == "__main__":
    main()
