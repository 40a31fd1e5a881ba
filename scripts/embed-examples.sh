#!/usr/bin/env bash
# Kozmo as a host sees it: installs an already built tree (no rebuild) into a temporary prefix,
# checks that the installed face is include/kozmo alone with no CAF in it and that
# `pkg-config --libs kozmo` names no CAF library, builds every examples/embed/*.cpp out of tree
# with nothing but `c++ $(pkg-config --cflags --libs kozmo)`, and runs host_loop (its own event
# loop beside Kozmo's, reading inspect through the future; it needs no cluster). The hosts that
# need a cluster run in the e2e test `embed`.
# Usage: scripts/embed-examples.sh [BUILD_DIR]      (default: build)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kozmo-embed-examples.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail=0
check() { # check WHAT COMMAND...: prints ok/FAIL with WHAT
  local what=$1
  shift
  if "$@" >"$WORK/last.out" 2>&1; then
    echo "ok    $what"
  else
    echo "FAIL  $what"
    tail -n 20 "$WORK/last.out"
    fail=1
  fi
}

check "meson install into a temporary prefix" meson install -C "$BUILD" --no-rebuild --destdir "$WORK/dest"
PC=$(find "$WORK/dest" -name kozmo.pc | head -n 1)
export PKG_CONFIG_PATH=$(dirname "$PC") PKG_CONFIG_SYSROOT_DIR=$WORK/dest
INCLUDE=$(find "$WORK/dest" -type d -path '*/include' | head -n 1)
check "the installed headers are include/kozmo alone" \
  sh -c "test \"\$(cd '$INCLUDE' && find . -type f | sed 's|^\./||; s|/[^/]*\$||' | sort -u)\" = kozmo"
check "no caf:: in the installed headers" sh -c "! grep -r 'caf::' '$INCLUDE'"
check "no CAF, Beast or simdjson include in the installed headers" \
  sh -c "! grep -rE '#include <(caf|boost|simdjson)' '$INCLUDE'"
check "pkg-config --libs kozmo names no CAF library" sh -c "pkg-config --libs kozmo | grep -v caf"
FLAGS=$(pkg-config --cflags --libs kozmo)
for src in examples/embed/*.cpp; do
  prog=$(basename "$src" .cpp)
  cp "$src" "$WORK/"
  # shellcheck disable=SC2086 # FLAGS is a list of flags
  check "examples/embed/$prog.cpp builds out of tree with pkg-config alone" \
    sh -c "cd '$WORK' && c++ $prog.cpp $FLAGS -o $prog"
done
LIBDIR=$(dirname "$(find "$WORK/dest" -name 'libkozmo.so*' | head -n 1)")
check "host_loop runs its own loop beside Kozmo and reads inspect through the future" \
  sh -c "LD_LIBRARY_PATH='$LIBDIR' '$WORK/host_loop' 300 | grep 'the scheduler sees its cluster'"
exit $fail
