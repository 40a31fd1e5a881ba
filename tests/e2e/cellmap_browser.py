#!/usr/bin/python3
"""The cell map page (/ui/) in a real browser (Debian's headless Chromium, driven through
chromedriver), against `kozmo local` with 16 nodes of 8 GPUs: the URL `kozmo local` prints
opens the page; a bound gang's 32 GPUs show under its nodes, a waiting gang shows with its
reason, a PyTorchJob with its phase; when the bound gang goes, the page follows without a
reload (the waiting gang binds and its GPUs appear); the same page through `kubectl proxy`
without a token; without a credential the page says why it cannot read. A screenshot of each
state is kept in ARTIFACTS.

Usage: cellmap_browser.py KOZMO ROOT ARTIFACTS
"""
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from e2e_tap import bad, ok, tally

if len(sys.argv) < 4:
    sys.exit(__doc__)
KOZMO, ROOT, ARTIFACTS = sys.argv[1:4]
try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError:
    print("1..0 # SKIP python3-selenium is not installed (scripts/setup.sh installs it)")
    sys.exit(77)
if not shutil.which("chromium") or not shutil.which("chromedriver"):
    print("1..0 # SKIP chromium and chromium-driver are not installed (scripts/setup.sh installs them)")
    sys.exit(77)

WORK = tempfile.mkdtemp(prefix="kozmo-cellmap.")
KUBECONFIG = os.path.join(WORK, "kubeconfig")
os.makedirs(ARTIFACTS, exist_ok=True)
procs = []


def check(cond, what, *details):
    (ok if cond else bad)(what, *([] if cond else details))
    return cond


def kubectl(*args, stdin=None):
    cmd = ["kubectl", "--kubeconfig", KUBECONFIG, "--cache-dir", os.path.join(WORK, "cache"),
           "--request-timeout=20s", *args]
    r = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def gang(name, pods, gpus):
    docs = []
    for i in range(pods):
        docs.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{name}-{i}", "annotations": {
                "kozmo.io/sim-duration": "forever", "kozmo.io/gang": name,
                "kozmo.io/gang-members": f"{pods}x{gpus}"}},
            "spec": {"schedulerName": "kozmo", "restartPolicy": "Never", "containers": [{
                "name": "main", "image": "busybox:1.36",
                "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}})
    return "\n".join(json.dumps(d) for d in docs)  # a stream of JSON documents


def within(seconds, fn):
    """Polls fn() until it returns something true; returns the last value."""
    deadline = time.time() + seconds
    value = None
    while time.time() < deadline:
        try:
            value = fn()
        except Exception as e:  # a page half rendered: ask again
            value = None
            last_error[0] = e
        if value:
            return value
        time.sleep(0.3)
    return value


last_error = [None]


def stop_all():
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()


def browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    # Nothing but the page: no background fetches (this machine reaches no internet, and a
    # lookup that hangs would slow the page's own requests).
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--ignore-certificate-errors", "--window-size=1400,1100", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-default-apps", "--dns-prefetch-disable", f"--user-data-dir={tempfile.mkdtemp(dir=WORK)}"):
        opts.add_argument(a)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)


def gpus_of(driver, gang_name):
    return len(driver.find_elements(By.CSS_SELECTOR, f'.gpu[data-gang="{gang_name}"]'))


def waiting_row(driver, gang_name):
    rows = driver.find_elements(By.CSS_SELECTOR, f'#waiting tr[data-gang="{gang_name}"]')
    return rows[0].text if rows else ""


def main():
    log = open(os.path.join(WORK, "kozmo.log"), "w")
    kozmo = subprocess.Popen([KOZMO, "local", "--port", "0", "--nodes", "16", "--gpus-per-node", "8",
                              "--write-kubeconfig", KUBECONFIG], stdout=subprocess.PIPE, stderr=log, text=True)
    procs.append(kozmo)
    url = None
    deadline = time.time() + 60
    while time.time() < deadline and url is None:
        line = kozmo.stdout.readline()
        if not line:
            break
        m = re.match(r"kozmo local: cell map at (\S+)", line)
        if m:
            url = m.group(1)
    if not check(url and "/ui/#token=" in url, "kozmo local prints the cell map's URL with its token", url):
        return
    ok_nodes = within(45, lambda: kubectl("get", "nodes", "--no-headers")[1].count(" Ready") == 16)
    check(ok_nodes, "16 simulated nodes are Ready")

    code, out = kubectl("create", "-f", "-", stdin=gang("train", 4, 8))
    check(code == 0, "a 4x8 gang is created", out)
    code, out = kubectl("create", "-f", "-", stdin=gang("big", 16, 8))
    check(code == 0, "a 16x8 gang (more than is free) is created", out)
    code, out = kubectl("apply", "-f", os.path.join(ROOT, "examples", "pytorch-simple.yaml"))
    check(code == 0, "a PyTorchJob is created", out)

    driver = browser()
    try:
        driver.set_page_load_timeout(30)
        driver.get(url)
        out = within(60, lambda: "#token" not in driver.current_url)
        check(out, "the page takes the token out of the address bar", driver.current_url)
        shown = within(90, lambda: gpus_of(driver, "train") == 32)
        check(shown, "the page shows the bound gang's 32 GPUs", gpus_of(driver, "train"), last_error[0])
        nodes = driver.find_elements(By.CSS_SELECTOR, ".node")
        check(len(nodes) == 16, "16 nodes are drawn (a small cluster opens whole)", len(nodes))
        reason = within(30, lambda: waiting_row(driver, "big"))
        check(reason and "needs 16 × 8" in reason and "VC default has 96 of 128" in reason,
              "the waiting gang shows with its reason", reason)
        vc = driver.find_elements(By.CSS_SELECTOR, '.vc[data-vc="default"]')
        check(vc and "32 used" in vc[0].text and "96 free of 128" in vc[0].text,
              "the virtual cluster shows 32 used and 96 free of 128", vc[0].text if vc else "no VC card")
        job = within(90, lambda: [r.text for r in driver.find_elements(By.CSS_SELECTOR, '#jobs tr[data-job]')
                                  if "pytorch-simple" in r.text and re.search(r"Running|Succeeded", r.text)])
        check(job, "the PyTorchJob shows with its phase", job,
              driver.find_element(By.ID, "jobs").text)
        driver.save_screenshot(os.path.join(ARTIFACTS, "cellmap-bound-and-waiting.png"))

        # Live: the bound gang goes; the page follows without a reload.
        driver.execute_script("window.kozmoMarker = 42;")
        code, out = kubectl("delete", "pod", *[f"train-{i}" for i in range(4)], "--wait=false")
        check(code == 0, "the bound gang's pods are deleted", out)
        moved = within(90, lambda: gpus_of(driver, "big") == 128 and not waiting_row(driver, "big"))
        check(moved, "the page follows: the waiting gang binds and its 128 GPUs show",
              gpus_of(driver, "big"), waiting_row(driver, "big"))
        check(gpus_of(driver, "train") == 0, "the deleted gang's GPUs are gone from the page", gpus_of(driver, "train"))
        check(driver.execute_script("return window.kozmoMarker;") == 42, "without reloading the page")
        driver.save_screenshot(os.path.join(ARTIFACTS, "cellmap-after-release.png"))
    finally:
        driver.quit()

    # Without a credential: the page loads (it holds no data) and says why it cannot read.
    bare = url.split("#")[0]
    driver = browser()
    try:
        driver.get(bare)
        said = within(60, lambda: "401" in driver.find_element(By.ID, "status").text and
                      driver.find_element(By.ID, "status").text)
        check(said, "without the token the page says 401 and how to get in",
              driver.find_element(By.ID, "status").text)
        check(gpus_of(driver, "big") == 0, "and shows no GPU")
    finally:
        driver.quit()

    # Through kubectl proxy: plain HTTP on loopback, kubectl adds the credential.
    proxy = subprocess.Popen(["kubectl", "--kubeconfig", KUBECONFIG, "proxy", "--port=0"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    procs.append(proxy)
    line = proxy.stdout.readline()
    m = re.search(r"127\.0\.0\.1:(\d+)", line)
    if check(m, "kubectl proxy starts", line):
        driver = browser()
        try:
            driver.get(f"http://127.0.0.1:{m.group(1)}/ui/")
            shown = within(90, lambda: gpus_of(driver, "big") == 128)
            check(shown, "through kubectl proxy the page shows the bound gang", gpus_of(driver, "big"))
        finally:
            driver.quit()

    # The routes' bad input, over real sockets.
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    base = bare.rsplit("/ui/", 1)[0]
    token = url.split("#token=")[1]

    def status_of(path, method="GET", auth=True, timeout=20):
        req = urllib.request.Request(base + path, method=method, data=b"{}" if method == "POST" else None,
                                     headers={"Authorization": "Bearer " + token} if auth else {})
        if method == "POST":
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=timeout) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    # A browser resumes its TLS session on its next connections: the server must take it (a
    # refused resumption failed the page's script one time in three, ERR_SSL_PROTOCOL_ERROR).
    import socket
    host, port = base.split("//")[1].split(":")
    def https_get(session=None):
        with socket.create_connection((host, int(port)), timeout=20) as raw:
            with ctx.wrap_socket(raw, server_hostname=host, session=session) as tls:
                tls.sendall(b"GET /ui/cellmap.js HTTP/1.1\r\nHost: 127.0.0.1:" + port.encode() + b"\r\nConnection: close\r\n\r\n")
                data = b""
                while chunk := tls.recv(65536):
                    data += chunk
                return data.split(b"\r\n", 1)[0], tls.session, tls.session_reused
    try:
        first, session, _ = https_get()
        again, _, reused = https_get(session)
        check(first.endswith(b"200 OK") and again.endswith(b"200 OK") and reused,
              "a resumed TLS session is accepted (as browsers resume them)", first, again, reused)
    except (OSError, ssl.SSLError) as e:
        bad("a resumed TLS session is accepted (as browsers resume them)", repr(e))

    check(status_of("/ui/nope.js")[0] == 404, "GET /ui/nope.js is 404")
    check(status_of("/ui/", "POST")[0] == 405, "POST /ui/ with a credential is 405")
    check(status_of("/ui/", "POST", auth=False)[0] == 401, "POST /ui/ without one is 401")
    check(status_of("/v1/inspect/cellmap", auth=False)[0] == 401, "the map itself needs the credential")
    code, body = status_of("/v1/inspect/cellmap/since/abc")
    check(code == 404, "a version that is not a number is 404", code, body)
    code, body = status_of("/v1/inspect/cellmap")
    version = json.loads(body)["version"] if code == 200 else 0
    started = time.time()
    code, body = status_of(f"/v1/inspect/cellmap/since/{version}")
    quiet = code == 200 and json.loads(body)["cells"] == [] and json.loads(body)["version"] == version
    check(quiet and time.time() - started >= 5, "a watch with nothing new is held, then answered with no cells",
          code, body[:200], time.time() - started)


try:
    main()
finally:
    stop_all()
print(f"{tally.passed} passed, {tally.failed} failed", flush=True)
if tally.failed == 0:
    shutil.rmtree(WORK, ignore_errors=True)
else:
    print("work dir kept: " + WORK)
sys.exit(1 if tally.failed else 0)
