#!/usr/bin/env bash
# Installs, builds and runs the whole test suite: unit, apiserver, client, actors, e2e (kubectl
# against `kozmo local`) and conformance (client, watch actor and simulated kubelet against a
# real kube-apiserver v1.20.2 built by ../shared/tools/real-k8s, cached between runs).
# Extra arguments go to `meson test` (e.g. `--suite unit`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
rc=0
meson test -C build --print-errorlogs --num-processes 2 "$@" || rc=$?
# One closing line in the plain form: every meson test (suite entry) counted once.
log=build/meson-logs/testlog.json
if [ -f "$log" ]; then
  passed=$(grep -c '"result": "OK"' "$log" || true)
  failed=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)
  echo "$passed passed, $failed failed"
fi
exit $rc
