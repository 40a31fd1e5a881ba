#!/usr/bin/env bash
# The test suite's hardened stages (scripts/test.sh runs them after the main build's suites;
# they run alone too). Each builds into its own directory, reused when present:
#   san    build-san:  g++ with AddressSanitizer (LeakSanitizer included) and UBSan; runs the unit,
#                      apiserver, client, actors and fuzz (corpus replay) suites
#   tsan   build-tsan: g++ with ThreadSanitizer; runs the actors suite (tests/sanitize/README.md
#                      says what is suppressed and why)
#   fuzz   build-fuzz: clang with libFuzzer; runs every target for KOZMO_FUZZ_SECONDS (default 10)
#                      on a copy of its corpus (tests/fuzz/run.sh)
# Usage: scripts/hardened.sh [san] [tsan] [fuzz]   (default: all three, in that order)
# Exits non-zero when any stage failed; every stage runs even after an earlier one failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
stages=("$@")
((${#stages[@]})) || stages=(san tsan fuzz)
JOBS=$(nproc)
rc=0

# g++ at -O0 without debug info: faster to compile than the main build's -O2 -g1 (-O1 costs a
# third more, line tables a tenth); stack traces name functions, UBSan's reports their lines.
# UBSan's null check is ASan's SEGV report already; its alignment and vptr checks triple the
# compile time of CAF- and Beast-heavy files for little on x86-64 (tests/sanitize/README.md).
# TSan keeps -g1: its suppressions name source files.
SAN_ARGS='-O0 -fno-omit-frame-pointer -fno-sanitize=vptr,alignment,null'

# Debian packages a stage needs beyond scripts/setup.sh's.
ensure_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "[hardened] installing: ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# The executables of the given suites, as build targets of DIR.
suite_targets() {
  local dir=$1; shift
  meson introspect "$dir" --tests | python3 -c '
import json, os, sys
dir, suites = sys.argv[1], {"kozmo:" + s for s in sys.argv[2:]}
out = set()
for t in json.load(sys.stdin):
    if suites & set(t["suite"]) and t["cmd"][0].startswith(dir):
        out.add(os.path.relpath(t["cmd"][0], dir))
print(" ".join(sorted(out)))' "$(realpath "$dir")" "$@"
}

# stage NAME DIR SETUP-ARGS... -- SUITES...: configure DIR once, build the suites' executables,
# run the suites.
stage() {
  local name=$1 dir=$2; shift 2
  local setup=() suites=()
  while [ "$1" != "--" ]; do setup+=("$1"); shift; done
  shift
  suites=("$@")
  local start=$SECONDS
  echo "[hardened] $name: building ${suites[*]} in $dir" >&2
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" -Dbench=false --wrap-mode=nofallback "${setup[@]}" >/dev/null || return 1
  fi
  local targets
  targets=$(suite_targets "$dir" "${suites[@]}") || return 1
  # shellcheck disable=SC2086
  ninja -C "$dir" -j"$JOBS" $targets | tail -n 1 || return 1
  local args=()
  for s in "${suites[@]}"; do args+=(--suite "$s"); done
  echo "[hardened] $name: built in $((SECONDS - start)) s; running ${suites[*]}" >&2
  # Sanitized code runs 2-10x slower: the scheduler's property tests take 80 s under -O0 ASan.
  meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes "$JOBS" --timeout-multiplier 6 "${args[@]}"
  local st=$?
  echo "[hardened] $name: $([ $st -eq 0 ] && echo passed || echo FAILED) in $((SECONDS - start)) s" >&2
  return $st
}

for s in "${stages[@]}"; do
  case $s in
  san)
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=0
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    export LSAN_OPTIONS=suppressions=$ROOT/tests/sanitize/lsan.supp:print_suppressions=0
    stage san build-san -Dbuildtype=plain -Db_sanitize=address,undefined -Db_lundef=false "-Dcpp_args=$SAN_ARGS" \
      -- unit apiserver client actors fuzz || rc=1
    unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
    ;;
  tsan)
    export TSAN_OPTIONS="suppressions=$ROOT/tests/sanitize/tsan.supp:halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0"
    stage tsan build-tsan -Dbuildtype=plain -Db_sanitize=thread '-Dcpp_args=-O1 -g1 -fno-omit-frame-pointer' \
      -- client apiserver actors || rc=1
    unset TSAN_OPTIONS
    ;;
  fuzz)
    start=$SECONDS
    echo "[hardened] fuzz: building the libFuzzer targets in build-fuzz (clang)" >&2
    ensure_packages clang libclang-rt-14-dev || rc=1
    rm -f build-fuzz/fuzz-summary.txt
    if [ ! -f build-fuzz/build.ninja ]; then
      CC=clang CXX=clang++ meson setup build-fuzz -Dfuzz=true -Dtests=false -Dbench=false \
        -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=plain \
        '-Dcpp_args=-O1 -g1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link' --wrap-mode=nofallback >/dev/null || rc=1
    fi
    if ninja -C build-fuzz -j"$JOBS" fuzzers | tail -n 1; then
      echo "[hardened] fuzz: built in $((SECONDS - start)) s; ${KOZMO_FUZZ_SECONDS:-10} s per target" >&2
      # The table also lands in build-fuzz/fuzz-summary.txt, counted in test.sh's closing line.
      tests/fuzz/run.sh build-fuzz "${KOZMO_FUZZ_SECONDS:-10}" | tee build-fuzz/fuzz-summary.txt
      ((PIPESTATUS[0] == 0)) || rc=1
    else
      rc=1
    fi
    echo "[hardened] fuzz: done in $((SECONDS - start)) s" >&2
    ;;
  *)
    echo "hardened.sh: unknown stage '$s' (san, tsan, fuzz)" >&2
    rc=2
    ;;
  esac
done
exit $rc
