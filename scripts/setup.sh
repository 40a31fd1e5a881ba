#!/usr/bin/env bash
# Installs what Kozmo needs on Debian bookworm (apt-get) and builds it into ./build.
# Idempotent: packages already present are skipped, an existing build dir is reused.
# KOZMO_SETUP_SUITES="e2e chaos" builds only what those meson suites run (and the benchmarks):
# scripts/test.sh uses it when the in-process suites run in the sanitizer trees instead.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(meson ninja-build pkg-config g++ libcaf-dev libboost-dev libboost-system-dev libssl-dev
  openssl libsimdjson-dev libspdlog-dev libfmt-dev prometheus-cpp-dev catch2 libyaml-cpp-dev
  curl python3 xz-utils
  prometheus           # tests/e2e/prometheus_e2e.sh: promtool and a real Prometheus scraping Kozmo
  jq tmux python3-yaml # tests/e2e/status_e2e.sh: -o json through jq, --watch under tmux, -o yaml read back
  chromium chromium-driver python3-selenium # tests/e2e/cellmap_browser.py: the page in a real browser
  python3-kubernetes # the e2e suite's python-client test (Debian's python3, /usr/bin/python3)
  openmpi-bin # mpirun for the process-runtime test's MPIJob
  openssh-client) # ssh-keygen reads the MPI TrainJob's SSH Secret (tests/e2e/trainer_e2e.sh)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# kubectl is on these machines; Debian's kubernetes-client is the fallback.
command -v kubectl >/dev/null || missing+=(kubernetes-client)
# The copilot suite's S3 server (s3rver) comes from npm.
command -v npm >/dev/null || missing+=(nodejs npm)
if ((${#missing[@]})); then
  echo "[setup] installing: ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -f build/build.ninja ]; then
  meson setup build --wrap-mode=nofallback >/dev/null
fi
targets=()
if [ -n "${KOZMO_SETUP_SUITES:-}" ]; then
  # The targets the suites' tests depend on (kozmo, libkozmo, test executables), and bench/.
  mapfile -t targets < <(python3 -c '
import json, os, subprocess, sys
build, suites = sys.argv[1], {"kozmo:" + s for s in sys.argv[2:]}
def intro(what):
    return json.loads(subprocess.run(["meson", "introspect", build, what], check=True,
                                     capture_output=True, text=True).stdout)
targets = intro("--targets")
files = {t["id"]: t["filename"] for t in targets}
out = set()
for t in targets:
    if os.path.basename(os.path.dirname(t["defined_in"])) == "bench":
        out.update(t["filename"])
for t in intro("--tests"):
    if suites & set(t["suite"]):
        for dep in t.get("depends", []):
            out.update(files.get(dep, []))
root = os.path.realpath(build)
print("\n".join(sorted(os.path.relpath(f, root) for f in out)))' build $KOZMO_SETUP_SUITES)
fi
echo "[setup] building (ninja -C build${KOZMO_SETUP_SUITES:+: what the suites $KOZMO_SETUP_SUITES run})" >&2
ninja -C build -j"$(nproc)" "${targets[@]}" | tail -n 1
