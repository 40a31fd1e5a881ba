#!/usr/bin/env bash
# Installs, builds and runs the whole test suite: unit, apiserver, client, actors, fuzz (corpus
# replay), e2e (kubectl against `kozmo local`), conformance (client, watch actor and simulated
# kubelet against a real kube-apiserver v1.20.2 built by ../shared/tools/real-k8s, cached between
# runs), chaos (kill -9 under load) and copilot; then the hardened stages (scripts/hardened.sh):
# the unit, apiserver, client, actors and fuzz suites under ASan+UBSan, the actors suite under
# TSan, and every libFuzzer target for a short while.
# Extra arguments go to `meson test` (e.g. `--suite unit`) and skip the hardened stages, as does
# KOZMO_HARDENED=0.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
rc=0
meson test -C build --print-errorlogs --num-processes 2 "$@" || rc=$?
logs=(build/meson-logs/testlog.json)
if [ $# -eq 0 ] && [ "${KOZMO_HARDENED:-1}" != 0 ]; then
  scripts/hardened.sh san tsan fuzz || rc=1
  logs+=(build-san/meson-logs/testlog.json build-tsan/meson-logs/testlog.json)
fi
# One closing line in the plain form: every meson test (suite entry) of every tree counted once.
passed=0 failed=0
for log in "${logs[@]}"; do
  [ -f "$log" ] || continue
  passed=$((passed + $(grep -c '"result": "OK"' "$log" || true)))
  failed=$((failed + $(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)))
done
echo "$passed passed, $failed failed"
exit $rc
