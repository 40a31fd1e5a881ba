#!/usr/bin/python3
"""Takes the cell map page's screenshots in docs/: `kozmo local` on a HiveD configuration of
NODES 8-GPU nodes in racks, three virtual clusters, a mix of gangs (bound, opportunistic,
waiting) and one cordoned node, photographed in Debian's headless Chromium.

Usage: scripts/cellmap-screenshots.py KOZMO NODES OUT.png
  e.g. scripts/cellmap-screenshots.py build/kozmo 16 docs/cellmap-16.png
       scripts/cellmap-screenshots.py build/kozmo 5000 docs/cellmap-5000.png
Needs chromium, chromium-driver and python3-selenium (scripts/setup.sh installs them).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

if len(sys.argv) != 4:
    sys.exit(__doc__)
KOZMO, NODES, OUT = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if not 4 <= NODES <= 20000:
    sys.exit("NODES must be 4..20000")
WORK = tempfile.mkdtemp(prefix="kozmo-shots.")
KUBECONFIG = os.path.join(WORK, "kubeconfig")
RACK = 8 if NODES <= 64 else 20
racks = (NODES + RACK - 1) // RACK
nodes = racks * RACK


def config():
    lines = ["physicalCluster:", "  cellTypes:",
             "    V100-NODE: {childCellType: V100, childCellNumber: 8, isNodeLevel: true}",
             f"    V100-RACK: {{childCellType: V100-NODE, childCellNumber: {RACK}}}", "  physicalCells:"]
    for r in range(racks):
        children = ", ".join(f"{{cellAddress: node-{r * RACK + n}}}" for n in range(RACK))
        lines += ["  - cellType: V100-RACK", f"    cellAddress: rack-{r}", f"    cellChildren: [{children}]"]
    research, prod = nodes * 4 // 10, nodes * 4 // 10
    dev = nodes - research - prod
    lines += ["virtualClusters:"]
    for name, count in (("prod", prod), ("research", research), ("dev", dev)):
        lines += [f"  {name}:", f"    virtualCells: [{{cellType: V100-RACK.V100-NODE, cellNumber: {count}}}]"]
    return "\n".join(lines) + "\n", {"prod": prod, "research": research, "dev": dev}


def gang(name, vc, pods, gpus, priority):
    return [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"{name}-{i}", "annotations": {
                 "kozmo.io/sim-duration": "forever", "kozmo.io/gang": name,
                 "kozmo.io/gang-members": f"{pods}x{gpus}", "kozmo.io/virtual-cluster": vc,
                 "kozmo.io/priority": str(priority)}},
             "spec": {"schedulerName": "kozmo", "restartPolicy": "Never", "containers": [{
                 "name": "main", "image": "busybox:1.36",
                 "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}} for i in range(pods)]


def kubectl(*args, stdin=None):
    return subprocess.run(["kubectl", "--kubeconfig", KUBECONFIG, "--request-timeout=120s", *args],
                          input=stdin, capture_output=True, text=True, timeout=600)


def main():
    text, vcs = config()
    with open(os.path.join(WORK, "hived.yaml"), "w") as f:
        f.write(text)
    kozmo = subprocess.Popen([KOZMO, "local", "--port", "0", "--cluster", os.path.join(WORK, "hived.yaml"),
                              "--write-kubeconfig", KUBECONFIG], stdout=subprocess.PIPE,
                             stderr=open(os.path.join(WORK, "kozmo.log"), "w"), text=True)
    try:
        url = None
        while url is None:
            line = kozmo.stdout.readline()
            if not line:
                sys.exit("kozmo local ended: see " + WORK)
            m = re.match(r"kozmo local: cell map at (\S+)", line)
            url = m.group(1) if m else None
        while kubectl("get", "nodes", "--no-headers").stdout.count(" Ready") < nodes:
            time.sleep(1)
        # prod: most of its quota in 4x8 gangs; research: 8x4 sweeps over half; dev: its
        # quota full, an opportunistic gang borrowing beyond it, and a gang that must wait.
        pods = []
        for g in range(max(1, vcs["prod"] * 3 // 4 // 4)):
            pods += gang(f"train-{g}", "prod", 4, 8, 100)
        for g in range(max(1, vcs["research"] // 2 // 4)):
            pods += gang(f"sweep-{g}", "research", 8, 4, 10)
        for g in range(max(1, vcs["dev"] // 2)):
            pods += gang(f"notebook-{g}", "dev", 2, 8, 0)
        pods += gang("borrow-0", "dev", 2, 8, -1)
        pods += gang("big-batch", "dev", vcs["dev"], 8, 0)
        for i in range(0, len(pods), 500):
            r = kubectl("create", "-f", "-", stdin="\n".join(json.dumps(p) for p in pods[i:i + 500]))
            if r.returncode:
                sys.exit(r.stdout + r.stderr)
        kubectl("cordon", f"node-{nodes - 1}")
        time.sleep(8)
        opts = webdriver.ChromeOptions()
        opts.binary_location = shutil.which("chromium")
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--ignore-certificate-errors",
                  "--window-size=1400,1300", "--no-first-run", "--disable-background-networking",
                  f"--user-data-dir={WORK}/browser"):
            opts.add_argument(a)
        driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
        try:
            driver.get(url)
            deadline = time.time() + 120
            while time.time() < deadline and not driver.find_elements(By.CSS_SELECTOR, "#waiting tr[data-gang]"):
                time.sleep(0.5)
            if RACK > 8:  # a large cluster: open the first group of racks, then its first rack
                driver.find_element(By.CSS_SELECTOR, '.cell[data-key="g0"] > .head').click()
                time.sleep(0.5)
                driver.find_element(By.CSS_SELECTOR, '.cell[data-key="g0"] .cell > .head').click()
                time.sleep(0.5)
            driver.save_screenshot(OUT)
        finally:
            driver.quit()
        print(f"{OUT}: {nodes} nodes in {racks} racks, {len(pods)} pods")
    finally:
        kozmo.terminate()
        kozmo.wait(timeout=60)
        shutil.rmtree(WORK, ignore_errors=True)


main()
