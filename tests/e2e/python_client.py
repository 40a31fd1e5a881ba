#!/usr/bin/python3
"""The official Kubernetes Python client (Debian's python3-kubernetes) against `kozmo local`.

A user who brings their own client gets what a real cluster gives: the client's models
deserialize every object strictly (a Node without nodeInfo.bootID, a container status without
imageID, ... raise ValueError), so each list, get and watch below also checks that every
field the client requires is there. Core kinds (namespaces, configmaps, pods, services, nodes,
events): list, watch, create, patch, replace, delete; custom objects (a PyTorchJob that runs,
a TaskExecution) through CustomObjectsApi; a pod's log; errors as ApiException with the right
status (404, 409, 422, 401). Pods really run: `kozmo local --runtime process`.

Run with Debian's python3 (/usr/bin/python3), which has the apt package's module.
Usage: python_client.py KOZMO
"""
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from e2e_tap import bad, ok, tally

KOZMO = sys.argv[1] if len(sys.argv) > 1 else sys.exit(__doc__)
try:
    from kubernetes import client, config, watch
    from kubernetes.client.rest import ApiException
except ImportError as e:
    sys.exit("FAIL - the kubernetes module is missing (apt-get install python3-kubernetes; run with "
             "/usr/bin/python3): %s" % e)

WORK = tempfile.mkdtemp(prefix="kozmo-pyclient.")
os.chmod(WORK, 0o755)  # a root kozmo runs containers as nobody
KUBECONFIG = os.path.join(WORK, "kubeconfig")
LOG = os.path.join(WORK, "kozmo.log")
NS = "pyclient"


def check(what, fn):
    """Runs fn(); a falsy result (False, None, "", []) or an exception is a failed check.
    Returns fn's result."""
    try:
        result = fn()
    except Exception as e:  # noqa: BLE001 - any failure of the client is the finding
        bad(what, "%s: %s" % (type(e).__name__, e))
        return None
    if not result:
        bad(what, "the condition did not hold: %r" % (result,))
        return None
    ok(what)
    return result


def status_of(what, fn, want):
    """fn() must raise ApiException with status `want`."""
    try:
        fn()
    except ApiException as e:
        if e.status == want:
            ok("%s: ApiException %d" % (what, want))
        else:
            bad("%s: wanted ApiException %d" % (what, want), "got %d %s" % (e.status, e.body))
        return
    except Exception as e:  # noqa: BLE001
        bad("%s: wanted ApiException %d" % (what, want), "got %s: %s" % (type(e).__name__, e))
        return
    bad("%s: wanted ApiException %d" % (what, want), "the call succeeded")


def eventually(what, fn, seconds=60):
    """Polls fn() until it returns something truthy; exceptions count as not yet."""
    deadline = time.time() + seconds
    last = None
    while time.time() < deadline:
        try:
            last = fn()
            if last:
                ok(what)
                return last
        except Exception as e:  # noqa: BLE001
            last = "%s: %s" % (type(e).__name__, e)
        time.sleep(0.5)
    bad(what, "last: %s" % (last,))
    return None


def start_kozmo():
    out = open(LOG, "ab")
    proc = subprocess.Popen([KOZMO, "local", "--port", "0", "--nodes", "2", "--runtime", "process",
                             "--data-dir", os.path.join(WORK, "data"), "--write-kubeconfig", KUBECONFIG],
                            stdout=out, stderr=subprocess.STDOUT)
    for _ in range(200):
        if os.path.exists(KUBECONFIG) and os.path.getsize(KUBECONFIG) > 0:
            break
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    return proc


def condition(obj, kind):
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind and c.get("status") == "True":
            return True
    return False


def in_order(wanted, seen):
    """Whether the pairs in `wanted` occur in `seen` in that order (others may come between)."""
    it = iter(seen)
    return all(any(p == w for p in it) for w in wanted)


def watch_events(list_fn, resource_version, wanted, seconds=20, **kw):
    """Streams list_fn's watch from resource_version until the (type, name) pairs in `wanted`
    were seen in that order, or `seconds` passed; returns every pair seen."""
    seen = []
    w = watch.Watch()
    for ev in w.stream(list_fn, resource_version=resource_version, timeout_seconds=seconds, **kw):
        seen.append((ev["type"], ev["object"].metadata.name))
        if in_order(wanted, seen):
            w.stop()
    return seen


def core_kinds(v1):
    ns = client.V1Namespace(metadata=client.V1ObjectMeta(name=NS, labels={"suite": "pyclient"}))
    check("create_namespace", lambda: v1.create_namespace(ns))
    check("read_namespace gives it Active", lambda: v1.read_namespace(NS).status.phase == "Active")
    check("list_namespace with a label selector finds only it",
          lambda: [n.metadata.name for n in v1.list_namespace(label_selector="suite=pyclient").items] == [NS])
    check("patch_namespace adds a label",
          lambda: v1.patch_namespace(NS, {"metadata": {"labels": {"patched": "yes"}}}).metadata.labels["patched"] == "yes")

    # ConfigMaps: the whole cycle, watched.
    cms = check("list_namespaced_config_map", lambda: v1.list_namespaced_config_map(NS))
    rv = cms.metadata.resource_version if cms else None
    check("the list carries a resourceVersion", lambda: bool(rv))
    cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="settings"), data={"a": "1"})
    created = check("create_namespaced_config_map", lambda: v1.create_namespaced_config_map(NS, cm))
    check("the created object has uid, resourceVersion and creationTimestamp",
          lambda: created.metadata.uid and created.metadata.resource_version and created.metadata.creation_timestamp)
    status_of("creating it again", lambda: v1.create_namespaced_config_map(NS, cm), 409)
    check("patch_namespaced_config_map (strategic merge) adds a key",
          lambda: v1.patch_namespaced_config_map("settings", NS, {"data": {"b": "2"}}).data == {"a": "1", "b": "2"})
    current = v1.read_namespaced_config_map("settings", NS)
    current.data = {"c": "3"}
    check("replace_namespaced_config_map replaces the data",
          lambda: v1.replace_namespaced_config_map("settings", NS, current).data == {"c": "3"})
    stale = current
    status_of("replacing with a stale resourceVersion", lambda: v1.replace_namespaced_config_map("settings", NS, stale), 409)
    check("delete_namespaced_config_map", lambda: v1.delete_namespaced_config_map("settings", NS))
    status_of("read_namespaced_config_map of a deleted one", lambda: v1.read_namespaced_config_map("settings", NS), 404)
    if rv:
        wanted = [("ADDED", "settings"), ("MODIFIED", "settings"), ("DELETED", "settings")]
        seen = watch_events(v1.list_namespaced_config_map, rv, wanted, namespace=NS)
        what = "a watch from the list's resourceVersion sees ADDED, MODIFIED, DELETED"
        ok(what) if in_order(wanted, seen) else bad(what, "seen: %s" % seen)

    # Invalid objects.
    bad_name = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="Not_A_Name"))
    status_of("a ConfigMap named Not_A_Name", lambda: v1.create_namespaced_config_map(NS, bad_name), 422)
    no_containers = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "empty"}, "spec": {"containers": []}}
    status_of("a pod without containers", lambda: v1.create_namespaced_pod(NS, no_containers), 422)
    status_of("read_namespaced_pod of a missing pod", lambda: v1.read_namespaced_pod("nope", NS), 404)
    status_of("read_namespace of a missing namespace", lambda: v1.read_namespace("nope"), 404)

    # Services.
    svc = client.V1Service(metadata=client.V1ObjectMeta(name="web"),
                           spec=client.V1ServiceSpec(selector={"app": "web"},
                                                     ports=[client.V1ServicePort(port=80, target_port=8080)]))
    made = check("create_namespaced_service", lambda: v1.create_namespaced_service(NS, svc))
    check("the service got a clusterIP", lambda: bool(made.spec.cluster_ip))
    check("list_service_for_all_namespaces finds it",
          lambda: ("web", NS) in [(s.metadata.name, s.metadata.namespace) for s in v1.list_service_for_all_namespaces().items])
    check("patch_namespaced_service adds a label",
          lambda: v1.patch_namespaced_service("web", NS, {"metadata": {"labels": {"tier": "front"}}}).metadata.labels == {"tier": "front"})
    check("delete_namespaced_service", lambda: v1.delete_namespaced_service("web", NS))

    # Nodes.
    nodes = check("list_node deserializes every node", lambda: v1.list_node())
    if nodes:
        check("two nodes", lambda: len(nodes.items) == 2)
        for n in nodes.items:
            info = n.status.node_info
            fields = ["architecture", "boot_id", "container_runtime_version", "kernel_version", "kube_proxy_version",
                      "kubelet_version", "machine_id", "operating_system", "os_image", "system_uuid"]
            check("node %s has all ten nodeInfo fields" % n.metadata.name,
                  lambda info=info, fields=fields: all(getattr(info, f) for f in fields))
        check("machineID and systemUUID differ between nodes",
              lambda: len({n.status.node_info.machine_id for n in nodes.items}) == 2 and
              len({n.status.node_info.system_uuid for n in nodes.items}) == 2)
        check("read_node", lambda: v1.read_node(nodes.items[0].metadata.name).metadata.name == nodes.items[0].metadata.name)
        check("read_node_status shows it Ready",
              lambda: any(c.type == "Ready" and c.status == "True"
                          for c in v1.read_node_status(nodes.items[0].metadata.name).status.conditions))


def pods_and_logs(v1):
    pods = v1.list_namespaced_pod(NS)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "hello", "labels": {"app": "hello"}},
           "spec": {"restartPolicy": "Never", "containers": [
               {"name": "main", "image": "busybox", "command": ["sh", "-c", "echo hello from python; echo line two"]}]}}
    check("create_namespaced_pod", lambda: v1.create_namespaced_pod(NS, pod))
    eventually("the pod runs to Succeeded (read_namespaced_pod_status)",
               lambda: v1.read_namespaced_pod_status("hello", NS).status.phase == "Succeeded")
    done = check("read_namespaced_pod deserializes its container statuses",
                 lambda: v1.read_namespaced_pod("hello", NS).status.container_statuses[0])
    if done:
        check("the container terminated with exit code 0", lambda: done.state.terminated.exit_code == 0)
    check("read_namespaced_pod_log gives its output",
          lambda: v1.read_namespaced_pod_log("hello", NS) == "hello from python\nline two\n")
    check("read_namespaced_pod_log with tail_lines=1",
          lambda: v1.read_namespaced_pod_log("hello", NS, tail_lines=1) == "line two\n")
    status_of("read_namespaced_pod_log of an unknown container",
              lambda: v1.read_namespaced_pod_log("hello", NS, container="nope"), 400)
    check("list_namespaced_pod with a label selector",
          lambda: [p.metadata.name for p in v1.list_namespaced_pod(NS, label_selector="app=hello").items] == ["hello"])
    check("list_pod_for_all_namespaces deserializes every pod", lambda: v1.list_pod_for_all_namespaces())
    check("patch_namespaced_pod adds a label",
          lambda: v1.patch_namespaced_pod("hello", NS, {"metadata": {"labels": {"seen": "yes"}}}).metadata.labels["seen"] == "yes")
    events = eventually("list_namespaced_event shows the pod's events",
                        lambda: [e for e in v1.list_namespaced_event(NS).items if e.involved_object.name == "hello"])
    if events:
        check("its events have reasons (Scheduled, ...)",
              lambda: "Scheduled" in {e.reason for e in events})
    check("list_event_for_all_namespaces deserializes every event", lambda: v1.list_event_for_all_namespaces())
    ev = client.CoreV1Event(metadata=client.V1ObjectMeta(name="hello.custom"),
                            involved_object=client.V1ObjectReference(kind="Pod", name="hello", namespace=NS),
                            reason="Checked", message="seen by the python client", type="Normal")
    check("create_namespaced_event", lambda: v1.create_namespaced_event(NS, ev))
    check("read_namespaced_event", lambda: v1.read_namespaced_event("hello.custom", NS).reason == "Checked")

    # A watch on pods sees a pod come and go.
    rv = pods.metadata.resource_version
    check("delete_namespaced_pod", lambda: v1.delete_namespaced_pod("hello", NS))
    eventually("the pod is gone", lambda: not v1.list_namespaced_pod(NS, field_selector="metadata.name=hello").items)
    wanted = [("ADDED", "hello"), ("DELETED", "hello")]
    seen = watch_events(v1.list_namespaced_pod, rv, wanted, namespace=NS)
    what = "a pod watch sees ADDED ... DELETED"
    ok(what) if in_order(wanted, seen) else bad(what, "seen: %s" % seen)


def status_shapes(v1):
    """Pods in every state the kubelets and the scheduler report, each read back through the
    client's strict models: simulated (init containers, OOMKilled, restarts, ImagePullBackOff),
    the process runtime's CreateContainerError, and a GPU pod that cannot be placed."""
    def sim_pod(name, annotations, init=False, policy="Never"):
        spec = {"restartPolicy": policy, "containers": [{"name": "main", "image": "busybox:1.36"}]}
        if init:
            spec["initContainers"] = [{"name": "prepare", "image": "busybox:1.36"}]
        ann = {"kozmo.io/runtime": "sim"}
        ann.update(annotations)
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": ann}, "spec": spec}
    shapes = {
        "sim-done": (sim_pod("sim-done", {"kozmo.io/sim-duration": "1s"}, init=True), "Succeeded"),
        "sim-oom": (sim_pod("sim-oom", {"kozmo.io/sim-fail": "OOMKilled"}), "Failed"),
        "sim-pull": (sim_pod("sim-pull", {"kozmo.io/sim-fail": "ImagePullBackOff"}), "Pending"),
        "sim-retry": (sim_pod("sim-retry", {"kozmo.io/sim-duration": "1s", "kozmo.io/sim-exit-code": "1",
                                            "kozmo.io/sim-fail-times": "1", "kozmo.io/sim-restart-backoff": "1s"},
                              policy="OnFailure"), "Succeeded"),
        "no-command": ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "no-command"},
                        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}, "Pending"),
        "too-big": ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "too-big"},
                     "spec": {"schedulerName": "kozmo", "restartPolicy": "Never", "containers": [
                         {"name": "main", "image": "busybox", "command": ["true"],
                          "resources": {"limits": {"nvidia.com/gpu": "64"}}}]}}, "Pending"),
    }
    for name, (pod, _) in shapes.items():
        check("create pod %s" % name, lambda pod=pod: v1.create_namespaced_pod(NS, pod))
    for name, (_, phase) in shapes.items():
        eventually("pod %s reaches %s" % (name, phase),
                   lambda name=name, phase=phase: v1.read_namespaced_pod(name, NS).status.phase == phase, 40)
    pull = eventually("sim-pull waits with ErrImagePull or ImagePullBackOff",
                      lambda: v1.read_namespaced_pod("sim-pull", NS).status.container_statuses[0].state.waiting)
    if pull:
        check("its waiting reason", lambda: pull.reason in ("ErrImagePull", "ImagePullBackOff"))
    check("sim-oom's container terminated OOMKilled",
          lambda: v1.read_namespaced_pod("sim-oom", NS).status.container_statuses[0].state.terminated.reason == "OOMKilled")
    check("sim-retry restarted once",
          lambda: v1.read_namespaced_pod("sim-retry", NS).status.container_statuses[0].restart_count == 1)
    check("sim-done's init container completed",
          lambda: v1.read_namespaced_pod("sim-done", NS).status.init_container_statuses[0].state.terminated.reason == "Completed")
    eventually("no-command waits in CreateContainerError",
               lambda: v1.read_namespaced_pod("no-command", NS).status.container_statuses[0].state.waiting.reason
               == "CreateContainerError")
    eventually("too-big is unschedulable (PodScheduled False)",
               lambda: any(c.type == "PodScheduled" and c.status == "False"
                           for c in v1.read_namespaced_pod("too-big", NS).status.conditions or []))
    eventually("too-big has a FailedScheduling event",
               lambda: [e for e in v1.list_namespaced_event(NS, field_selector="involvedObject.name=too-big").items
                        if e.reason == "FailedScheduling"])
    check("list_pod_for_all_namespaces deserializes them all",
          lambda: set(shapes) <= {p.metadata.name for p in v1.list_pod_for_all_namespaces().items})
    check("list_event_for_all_namespaces deserializes every event", lambda: v1.list_event_for_all_namespaces())
    for name in shapes:
        check("delete pod %s" % name, lambda name=name: v1.delete_namespaced_pod(name, NS, grace_period_seconds=0))


def custom_objects(co):
    group, version = "kubeflow.org", "v1"
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "train"},
           "spec": {"pytorchReplicaSpecs": {
               "Master": {"replicas": 1, "restartPolicy": "Never", "template": {"spec": {"containers": [
                   {"name": "pytorch", "image": "busybox", "command": ["sh", "-c", "echo rank $RANK of $WORLD_SIZE"]}]}}},
               "Worker": {"replicas": 1, "restartPolicy": "Never", "template": {"spec": {"containers": [
                   {"name": "pytorch", "image": "busybox", "command": ["sh", "-c", "echo rank $RANK of $WORLD_SIZE"]}]}}}}}}
    check("create a PyTorchJob", lambda: co.create_namespaced_custom_object(group, version, NS, "pytorchjobs", job))
    status_of("create it again", lambda: co.create_namespaced_custom_object(group, version, NS, "pytorchjobs", job), 409)
    check("get it", lambda: co.get_namespaced_custom_object(group, version, NS, "pytorchjobs", "train")["kind"] == "PyTorchJob")
    check("list PyTorchJobs",
          lambda: [j["metadata"]["name"] for j in co.list_namespaced_custom_object(group, version, NS, "pytorchjobs")["items"]] == ["train"])
    check("patch it (merge) with a label",
          lambda: co.patch_namespaced_custom_object(group, version, NS, "pytorchjobs", "train",
                                                    {"metadata": {"labels": {"team": "a"}}})["metadata"]["labels"]["team"] == "a")
    eventually("the PyTorchJob reaches Succeeded",
               lambda: condition(co.get_namespaced_custom_object(group, version, NS, "pytorchjobs", "train"), "Succeeded"))
    check("get_namespaced_custom_object_status",
          lambda: "conditions" in co.get_namespaced_custom_object_status(group, version, NS, "pytorchjobs", "train")["status"])
    check("delete it", lambda: co.delete_namespaced_custom_object(group, version, NS, "pytorchjobs", "train"))
    eventually("it is gone", lambda: not co.list_namespaced_custom_object(group, version, NS, "pytorchjobs")["items"])
    status_of("get a missing PyTorchJob", lambda: co.get_namespaced_custom_object(group, version, NS, "pytorchjobs", "train"), 404)
    bad_job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "no-specs"}, "spec": {}}
    status_of("a PyTorchJob without replica specs", lambda: co.create_namespaced_custom_object(group, version, NS, "pytorchjobs", bad_job), 422)

    g, v, plural = "kozmo.io", "v1alpha1", "taskexecutions"
    task = {"apiVersion": "kozmo.io/v1alpha1", "kind": "TaskExecution", "metadata": {"name": "t1"},
            "spec": {"type": "container", "container": {"image": "busybox", "command": ["true"]}}}
    check("create a TaskExecution", lambda: co.create_namespaced_custom_object(g, v, NS, plural, task))
    check("get it", lambda: co.get_namespaced_custom_object(g, v, NS, plural, "t1")["spec"]["type"] == "container")
    check("list TaskExecutions in all namespaces",
          lambda: "t1" in [t["metadata"]["name"] for t in co.list_cluster_custom_object(g, v, plural)["items"]])
    check("patch it (merge) with an annotation",
          lambda: co.patch_namespaced_custom_object(g, v, NS, plural, "t1", {"metadata": {"annotations": {"by": "python"}}})
          ["metadata"]["annotations"]["by"] == "python")
    rv = co.list_namespaced_custom_object(g, v, NS, plural)["metadata"]["resourceVersion"]
    check("delete it", lambda: co.delete_namespaced_custom_object(g, v, NS, plural, "t1"))
    seen = []
    w = watch.Watch()
    for ev in w.stream(co.list_namespaced_custom_object, g, v, NS, plural, resource_version=rv, timeout_seconds=20):
        seen.append((ev["type"], ev["object"]["metadata"]["name"]))
        if ev["type"] == "DELETED":
            w.stop()
    check("a custom-object watch sees it DELETED", lambda: ("DELETED", "t1") in seen)
    no_type = {"apiVersion": "kozmo.io/v1alpha1", "kind": "TaskExecution", "metadata": {"name": "t2"}, "spec": {}}
    status_of("a TaskExecution without a type", lambda: co.create_namespaced_custom_object(g, v, NS, plural, no_type), 422)


def mpi_job(co):
    """An MPIJob as the Kubeflow SDK would wait for it, then the objects the operator made for
    its launcher (ConfigMap, ServiceAccount, Role, RoleBinding) through their strict models."""
    def replica(command):
        c = {"name": "mpi", "image": "busybox"}
        if command:
            c["command"] = ["sh", "-c", command]
        return {"replicas": 1, "restartPolicy": "Never", "template": {"spec": {"containers": [c]}}}
    job = {"apiVersion": "kubeflow.org/v1", "kind": "MPIJob", "metadata": {"name": "mpi"},
           "spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {
               "Launcher": replica("/etc/mpi/kubexec.sh mpi-worker-0 echo hi from \\$HOSTNAME"),
               "Worker": replica(None)}}}
    check("create an MPIJob", lambda: co.create_namespaced_custom_object("kubeflow.org", "v1", NS, "mpijobs", job))
    eventually("the MPIJob reaches Succeeded under the process runtime",
               lambda: condition(co.get_namespaced_custom_object("kubeflow.org", "v1", NS, "mpijobs", "mpi"), "Succeeded"))
    v1, rbac = client.CoreV1Api(), client.RbacAuthorizationV1Api()
    check("its launcher ran a command in the worker through kubexec.sh",
          lambda: "hi from mpi-worker-0" in v1.read_namespaced_pod_log("mpi-launcher", NS, container="mpi"))
    check("list_namespaced_config_map has its hostfile",
          lambda: "mpi-worker-0 slots=1" in v1.read_namespaced_config_map("mpi-config", NS).data["hostfile"])
    check("list_namespaced_service_account has the launcher's",
          lambda: "mpi-launcher" in [a.metadata.name for a in v1.list_namespaced_service_account(NS).items])
    check("list_namespaced_role: the launcher's Role may exec into pods",
          lambda: any("pods/exec" in (rule.resources or []) for role in rbac.list_namespaced_role(NS).items
                      for rule in role.rules))
    check("list_namespaced_role_binding binds it to the launcher's account",
          lambda: [(b.role_ref.name, b.subjects[0].name) for b in rbac.list_namespaced_role_binding(NS).items]
          == [("mpi-launcher", "mpi-launcher")])
    check("list_namespaced_lease shows a Lease per node",
          lambda: len(client.CoordinationV1Api().list_namespaced_lease("kube-node-lease").items) == 2)
    check("list_custom_resource_definition has the training and task kinds",
          lambda: {"mpijobs.kubeflow.org", "pytorchjobs.kubeflow.org", "taskexecutions.kozmo.io"}
          <= {c.metadata.name for c in client.ApiextensionsV1Api().list_custom_resource_definition().items})
    check("delete the MPIJob", lambda: co.delete_namespaced_custom_object("kubeflow.org", "v1", NS, "mpijobs", "mpi"))


def unauthenticated():
    """The kubeconfig's server and CA, without its client certificate and token."""
    def api(token):
        cfg = client.Configuration()
        config.load_kube_config(KUBECONFIG, client_configuration=cfg)
        cfg.cert_file = cfg.key_file = None
        cfg.api_key = {"authorization": "Bearer " + token} if token else {}
        cfg.api_key_prefix = {}
        return client.CoreV1Api(client.ApiClient(cfg))
    status_of("list_node without credentials", lambda: api(None).list_node(), 401)
    status_of("list_node with a wrong token", lambda: api("not-the-token").list_node(), 401)


def main():
    proc = start_kozmo()
    try:
        config.load_kube_config(KUBECONFIG)
        v1 = client.CoreV1Api()
        eventually("the server answers VersionApi.get_code", lambda: client.VersionApi().get_code().git_version, 20)
        eventually("two nodes register", lambda: len(v1.list_node().items) == 2, 30)
        core_kinds(v1)
        pods_and_logs(v1)
        status_shapes(v1)
        custom_objects(client.CustomObjectsApi())
        mpi_job(client.CustomObjectsApi())
        unauthenticated()
        check("delete_namespace", lambda: v1.delete_namespace(NS))
        check("kozmo local is still up", lambda: proc.poll() is None)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        if tally.failed:
            print("--- kozmo local log (tail) ---")
            with open(LOG, errors="replace") as f:
                print("".join(f.readlines()[-60:]))
        shutil.rmtree(WORK, ignore_errors=True)
    print("python client: %d passed, %d failed" % (tally.passed, tally.failed))
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
