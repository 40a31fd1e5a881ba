#!/usr/bin/env bash
# Installs what Kozmo needs on Debian bookworm (apt-get) and builds it into ./build.
# Idempotent: packages already present are skipped, an existing build dir is reused.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(meson ninja-build pkg-config g++ libcaf-dev libboost-dev libboost-system-dev libssl-dev
  openssl libsimdjson-dev libspdlog-dev libfmt-dev prometheus-cpp-dev catch2 libyaml-cpp-dev
  curl python3 xz-utils)
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
echo "[setup] building (ninja -C build)" >&2
ninja -C build -j"$(nproc)" | tail -n 1
