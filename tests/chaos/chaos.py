#!/usr/bin/env python3
"""Kozmo tried as a crash would: `kozmo local --data-dir` under a stream of GPU gangs, training
jobs, tasks and plain GPU pods, killed with SIGKILL at random points and restarted, its API
sampled all the while. Optionally the embedded server injects watch drops, 410, 429, 5xx and
latency (kozmo local --fault-injection, POST /debug/faults).

Invariants, checked from the API:
  1. no node's Running pods hold more GPUs than it has;
  2. no GPU index (pod-leaf-cell-isolation) is held twice on a node by Running pods;
  3. no acknowledged object is lost: every object the API answered 201 for still exists at
     the end (nothing here deletes them);
  4. every job, task and pod ends (Succeeded or Failed) once the stream stops;
  5. no orphans: no object owned by an owner that no longer exists.

Usage: chaos.py KOZMO --kills N [--seed S] [--faults] [--nodes N] [--gpus G] [--keep]
Prints one line per kill and a summary; exits 1 when an invariant broke (details printed).
Standard library only (urllib over TLS with the kubeconfig's CA and token).
"""

import argparse
import base64
import json
import os
import random
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

GPU = "nvidia.com/gpu"
ISOLATION = "hivedscheduler.microsoft.com/pod-leaf-cell-isolation"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Api:
    """Just enough of a Kubernetes client: JSON over TLS, the kubeconfig's CA and token."""

    def __init__(self, kubeconfig):
        text = open(kubeconfig).read()
        self.server = re.search(r"server: (\S+)", text).group(1)
        ca = base64.b64decode(re.search(r"certificate-authority-data: (\S+)", text).group(1))
        self.token = re.search(r"token: (\S+)", text).group(1)
        self.ctx = ssl.create_default_context(cadata=ca.decode())

    def call(self, method, path, body=None, timeout=10, content_type="application/json"):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.server + path, data=data, method=method)
        req.add_header("Authorization", "Bearer " + self.token)
        if data is not None:
            req.add_header("Content-Type", content_type)
        def decoded(raw):
            try:
                return json.loads(raw or b"{}")
            except ValueError:
                return {"text": raw.decode(errors="replace")}
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=timeout) as r:
                return r.status, decoded(r.read())
        except urllib.error.HTTPError as e:
            return e.code, decoded(e.read())
        except OSError:
            return 0, {}

    def list(self, path):
        code, body = self.call("GET", path, timeout=20)
        return body.get("items", []) if code == 200 else None


class Chaos:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.work = tempfile.mkdtemp(prefix="kozmo-chaos.")
        self.port = free_port()
        self.kubeconfig = os.path.join(self.work, "kubeconfig")
        self.proc = None
        self.api = None
        self.lock = threading.Lock()
        self.created = []  # (path of the object, kind) the API acknowledged with 201
        self.violations = []
        self.samples = 0
        self.serial = 0
        self.stop_stream = threading.Event()
        self.up = threading.Event()

    # ---- the process ---------------------------------------------------------------------
    def start(self):
        cmd = [self.args.kozmo, "local", "--port", str(self.port), "--data-dir", os.path.join(self.work, "data"),
               "--nodes", str(self.args.nodes), "--gpus-per-node", str(self.args.gpus),
               "--write-kubeconfig", self.kubeconfig, "--log-level", "warn"]
        if self.args.faults:
            cmd.append("--fault-injection")
        log = open(os.path.join(self.work, "kozmo.log"), "ab")
        if os.path.exists(self.kubeconfig):
            os.remove(self.kubeconfig)
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit("kozmo local exited at start: see " + os.path.join(self.work, "kozmo.log"))
            if os.path.exists(self.kubeconfig) and os.path.getsize(self.kubeconfig) > 0:
                self.api = Api(self.kubeconfig)
                if self.api.call("GET", "/readyz")[0] == 200 and self.api.list("/api/v1/nodes") is not None:
                    self.up.set()
                    return
            time.sleep(0.1)
        raise SystemExit("kozmo local did not answer within 60 s")

    def kill(self):
        self.up.clear()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    # ---- the stream of work ----------------------------------------------------------------
    def name(self, prefix):
        self.serial += 1
        return "%s-%d" % (prefix, self.serial)

    def create(self, path, obj, kind):
        code, _ = self.api.call("POST", path, obj)
        if code == 201:
            with self.lock:
                self.created.append((path + "/" + obj["metadata"]["name"], kind))
        return code

    def sim(self):
        return "%dms" % self.rng.randint(500, 4000)

    def gang(self):
        n, g = self.rng.choice([(2, 2), (4, 2), (2, 4), (1, 8), (3, 1)])
        gang = self.name("gang")
        for i in range(n):
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": "%s-%d" % (gang, i),
                                "annotations": {"kozmo.io/gang": gang, "kozmo.io/gang-members": "%dx%d" % (n, g),
                                                "kozmo.io/sim-duration": self.sim()}},
                   "spec": {"schedulerName": "kozmo", "restartPolicy": "Never",
                            "containers": [{"name": "w", "image": "busybox:1.36", "resources": {"limits": {GPU: g}}}]}}
            self.create("/api/v1/namespaces/default/pods", pod, "pod")

    def plain_pod(self):
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": self.name("plain"), "annotations": {"kozmo.io/sim-duration": self.sim()}},
               "spec": {"restartPolicy": "Never",
                        "containers": [{"name": "w", "image": "busybox:1.36",
                                        "resources": {"limits": {GPU: self.rng.choice([1, 2, 4])}}}]}}
        self.create("/api/v1/namespaces/default/pods", pod, "pod")

    def pytorchjob(self):
        def spec(replicas):
            return {"replicas": replicas, "restartPolicy": "OnFailure",
                    "template": {"metadata": {"annotations": {"kozmo.io/sim-duration": self.sim()}},
                                 "spec": {"containers": [{"name": "pytorch", "image": "busybox:1.36",
                                                          "resources": {"limits": {GPU: self.rng.choice([1, 2])}}}]}}}
        job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": self.name("torch")},
               "spec": {"pytorchReplicaSpecs": {"Master": spec(1), "Worker": spec(self.rng.randint(1, 3))}}}
        self.create("/apis/kubeflow.org/v1/namespaces/default/pytorchjobs", job, "pytorchjob")

    def task(self):
        tx = {"apiVersion": "kozmo.io/v1alpha1", "kind": "TaskExecution",
              "metadata": {"name": self.name("task"), "annotations": {"kozmo.io/sim-duration": self.sim()}},
              "spec": {"type": "container", "retries": 1,
                       "container": {"image": "busybox:1.36", "command": ["true"],
                                     "resources": {"limits": {GPU: 1}}}}}
        self.create("/apis/kozmo.io/v1alpha1/namespaces/default/taskexecutions", tx, "taskexecution")

    def stream(self):
        makers = [self.gang, self.gang, self.plain_pod, self.pytorchjob, self.task]
        while not self.stop_stream.is_set():
            if not self.up.wait(0.5):
                continue
            try:
                self.rng.choice(makers)()
            except Exception as e:  # a connection cut by a kill: the next round goes on
                print("stream: %s" % e, file=sys.stderr)
            time.sleep(self.rng.uniform(0.1, 0.5))

    # ---- faults --------------------------------------------------------------------------
    def fault(self):
        choice = self.rng.choice([
            {"action": "dropWatches"},
            {"action": "dropWatchesAfter", "events": self.rng.randint(5, 50)},
            {"action": "expireResumes", "on": True},
            {"action": "failNext", "count": self.rng.randint(1, 5), "status": 429, "retryAfter": 1},
            {"action": "failNext", "count": self.rng.randint(1, 5), "status": self.rng.choice([500, 503])},
            {"action": "latency", "ms": self.rng.randint(10, 200)},
            {"action": "clear"},
        ])
        self.api.call("POST", "/debug/faults", choice)
        return choice["action"]

    # ---- invariants ----------------------------------------------------------------------
    def sample(self):
        pods = self.api.list("/api/v1/pods")
        if pods is None:
            return
        self.samples += 1
        capacity = {}
        for n in self.api.list("/api/v1/nodes") or []:
            capacity[n["metadata"]["name"]] = int(n["status"]["capacity"].get(GPU, "0"))
        held, indices = {}, {}
        for p in pods:
            node = p.get("spec", {}).get("nodeName")
            if not node or p.get("status", {}).get("phase") != "Running":
                continue
            gpus = 0
            for c in p["spec"]["containers"]:
                gpus += int(c.get("resources", {}).get("limits", {}).get(GPU, 0))
            held[node] = held.get(node, 0) + gpus
            iso = p["metadata"].get("annotations", {}).get(ISOLATION)
            if iso:
                for i in iso.split(","):
                    owner = indices.setdefault((node, i), p["metadata"]["name"])
                    if owner != p["metadata"]["name"]:
                        self.violations.append("GPU %s of %s held by %s and %s" % (i, node, owner, p["metadata"]["name"]))
        for node, gpus in held.items():
            if gpus > capacity.get(node, self.args.gpus):
                self.violations.append("node %s: Running pods hold %d of %d GPUs" % (node, gpus, capacity.get(node)))

    def sampler(self):
        while not self.stop_stream.is_set():
            if self.up.wait(0.5):
                try:
                    self.sample()
                except Exception as e:
                    print("sampler: %s" % e, file=sys.stderr)
            time.sleep(0.3)

    @staticmethod
    def finished(kind, obj):
        status = obj.get("status", {})
        if kind == "pod":
            return status.get("phase") in ("Succeeded", "Failed")
        if kind == "taskexecution":
            return status.get("phase") in ("Succeeded", "Failed", "Aborted", "Timeout", "PermanentFailure")
        return any(c.get("type") in ("Succeeded", "Failed") and c.get("status") == "True"
                   for c in status.get("conditions", []))

    def settle(self, timeout):
        """After the stream: every acknowledged object exists and ends; no orphans."""
        deadline = time.time() + timeout
        lost, open_ = [], []
        while True:
            lost, open_ = [], []
            for path, kind in self.created:
                code, obj = self.api.call("GET", path)
                if code == 404:
                    lost.append(path)
                elif code == 200 and not self.finished(kind, obj):
                    open_.append(path)
            if (not open_ and not lost) or time.time() > deadline:
                break
            time.sleep(2)
        uids = set()
        everything = []
        for path in ("/api/v1/pods", "/api/v1/services", "/apis/kubeflow.org/v1/pytorchjobs",
                     "/apis/kozmo.io/v1alpha1/taskexecutions"):
            for o in self.api.list(path) or []:
                uids.add(o["metadata"]["uid"])
                everything.append(o)
        orphans = ["%s/%s" % (o.get("kind", "?"), o["metadata"]["name"]) for o in everything
                   if any(r["uid"] not in uids for r in o["metadata"].get("ownerReferences", []))]
        # An owner of another kind (a ConfigMap, a Role...) is not listed above; only known kinds count.
        return lost, open_, orphans

    # ---- the run -------------------------------------------------------------------------
    def run(self):
        self.start()
        threads = [threading.Thread(target=self.stream, daemon=True), threading.Thread(target=self.sampler, daemon=True)]
        for t in threads:
            t.start()
        t0 = time.time()
        for k in range(1, self.args.kills + 1):
            wait = self.rng.uniform(2, 6)
            end = time.time() + wait
            faults = []
            while self.args.faults and time.time() < end - 1:
                faults.append(self.fault())
                time.sleep(self.rng.uniform(0.3, 1.5))
            time.sleep(max(0, end - time.time()))
            self.kill()
            time.sleep(self.rng.uniform(0.1, 1.0))
            started = time.time()
            self.start()
            with self.lock:
                n = len(self.created)
            print("kill %d/%d: restarted in %.1f s; %d objects acknowledged, %d samples, %d violations%s" %
                  (k, self.args.kills, time.time() - started, n, self.samples, len(self.violations),
                   (", faults: " + ",".join(faults)) if faults else ""), flush=True)
        self.stop_stream.set()
        for t in threads:
            t.join(timeout=30)
        if self.args.faults:
            self.api.call("POST", "/debug/faults", {"action": "clear"})
        self.sample()
        lost, open_, orphans = self.settle(self.args.settle)
        print("chaos: seed %d, %d kills in %.0f s, %d objects acknowledged, %d samples" %
              (self.args.seed, self.args.kills, time.time() - t0, len(self.created), self.samples))
        # Pods a kubelet refused (two schedulers placed them in the same GPUs): no over-commit,
        # but each is a pod that failed without running, so they are counted.
        refused = [p["metadata"]["name"] for p in (self.api.list("/api/v1/pods") or [])
                   if p.get("status", {}).get("reason", "").startswith("OutOf")]
        print("chaos: %d pod(s) refused by a kubelet's admission%s" %
              (len(refused), (": " + ", ".join(refused[:10])) if refused else ""))
        problems = []
        if self.violations:
            problems.append("%d over-commit sample(s): %s" % (len(self.violations), "; ".join(self.violations[:10])))
        if lost:
            problems.append("%d acknowledged object(s) lost: %s" % (len(lost), ", ".join(lost[:10])))
        if open_:
            problems.append("%d object(s) not finished after %d s: %s" % (len(open_), self.args.settle, ", ".join(open_[:10])))
        if orphans:
            problems.append("%d orphan(s): %s" % (len(orphans), ", ".join(orphans[:10])))
        for p in problems:
            print("FAIL - " + p)
        if not problems:
            print("ok   - no GPU over-committed or held twice, nothing lost, every object ended, no orphans")
        return 1 if problems else 0

    def cleanup(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        if self.args.keep:
            print("kept " + self.work)
        else:
            shutil.rmtree(self.work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kozmo")
    ap.add_argument("--kills", type=int, default=5)
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--faults", action="store_true")
    ap.add_argument("--nodes", type=int, default=3)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--settle", type=int, default=180, help="seconds for every object to end after the stream")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs, data dir)")
    args = ap.parse_args()
    chaos = Chaos(args)
    rc = 2
    try:
        rc = chaos.run()
    finally:
        if rc != 0:
            chaos.args.keep = True  # the logs and the data dir say what happened
        chaos.cleanup()
    sys.exit(rc)


if __name__ == "__main__":
    main()
