#!/usr/bin/env bash
# Installs, builds and runs the whole test suite: unit, apiserver, client, actors, e2e (kubectl
# against `kozmo local`) and conformance (client and watch against a real kube-apiserver
# v1.20.2 built by ../shared/tools/real-k8s, cached between runs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
meson test -C build --print-errorlogs --num-processes 2 "$@"
