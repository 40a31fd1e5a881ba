#!/usr/bin/env bash
# Installs, builds and runs the whole test suite. ./build (optimised, as users run kozmo) runs
# e2e (kubectl against `kozmo local`), conformance (client, watch actor and simulated kubelet
# against a real kube-apiserver v1.20.2 built by ../shared/tools/real-k8s, cached between runs),
# chaos (kill -9 under load) and copilot; the hardened stages (scripts/hardened.sh) run unit,
# apiserver, client, actors and fuzz (corpus replay) under ASan+UBSan, client, apiserver and
# actors under TSan, and every libFuzzer target for a short while; then examples/embed/ is built
# against ./build installed in a temporary prefix (scripts/embed-examples.sh).
# Extra arguments go to `meson test` in ./build (e.g. `--suite unit`; every suite there when
# KOZMO_HARDENED=0) and skip the hardened stages.
set -euo pipefail
cd "$(dirname "$0")/.."
rc=0
logs=(build/meson-logs/testlog.json)
if [ $# -eq 0 ] && [ "${KOZMO_HARDENED:-1}" != 0 ]; then
  # The in-process suites (unit, apiserver, client, actors, fuzz) run in the sanitizer trees;
  # ./build builds and runs what drives the kozmo binary, optimised as users run it.
  out_of_process=(e2e conformance chaos copilot)
  KOZMO_SETUP_SUITES="${out_of_process[*]}" scripts/setup.sh
  suites=()
  for s in "${out_of_process[@]}"; do suites+=(--suite "$s"); done
  meson test -C build --no-rebuild --print-errorlogs --num-processes 2 "${suites[@]}" || rc=$?
  # examples/embed/ against the installed face (installs ./build as it is; no rebuild).
  embed_examples=0
  scripts/embed-examples.sh build || { embed_examples=1; rc=1; }
  scripts/hardened.sh san tsan fuzz || rc=1
  logs+=(build-san/meson-logs/testlog.json build-tsan/meson-logs/testlog.json)
else
  scripts/setup.sh
  meson test -C build --print-errorlogs --num-processes 2 "$@" || rc=$?
fi
# One closing line in the plain form: every meson test (suite entry) of every tree counted once.
passed=0 failed=0
for log in "${logs[@]}"; do
  [ -f "$log" ] || continue
  passed=$((passed + $(grep -c '"result": "OK"' "$log" || true)))
  failed=$((failed + $(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)))
done
if [ $# -eq 0 ] && [ "${KOZMO_HARDENED:-1}" != 0 ] && [ -f build-fuzz/fuzz-summary.txt ]; then
  # Each fuzz target's line ends "ok" or names its failure.
  passed=$((passed + $(grep -c -E '  ok$' build-fuzz/fuzz-summary.txt || true)))
  failed=$((failed + $(grep -c -E '  (FAILED|MISSING)' build-fuzz/fuzz-summary.txt || true)))
fi
if [ -n "${embed_examples:-}" ]; then
  if [ "$embed_examples" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
fi
echo "$passed passed, $failed failed"
exit $rc
