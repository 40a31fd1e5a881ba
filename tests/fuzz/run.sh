#!/usr/bin/env bash
# Runs the libFuzzer executables of a -Dfuzz=true build, one at a time (see README.md).
#
#   tests/fuzz/run.sh DIR SECONDS [TARGET...]
#
# DIR is the build directory (`ninja -C DIR fuzzers` built it), SECONDS the time per target;
# TARGETs (json, models, ...) default to every fuzz_* executable in DIR/tests/fuzz. Each runs on
# a copy of its seed corpus in a temporary directory: new inputs never land in the repository.
# Prints executions, executions per second and the outcome per target; exits non-zero when any
# target crashed, leaked, timed out or ran out of memory, after printing the reproducer's path
# (kept in the work directory, which is left in place then; KOZMO_FUZZ_KEEP=1 keeps it always).
set -uo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS [TARGET...]" >&2
  exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
build=$1
seconds=$2
shift 2
bin_dir=$build/tests/fuzz
if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(find "$bin_dir" -maxdepth 1 -type f -name 'fuzz_*' -perm -u+x ! -name '*_replay' -printf '%f\n' |
    sed 's/^fuzz_//' | sort)
fi
if [ ${#targets[@]} -eq 0 ]; then
  echo "no fuzzers in $bin_dir: configure with -Dfuzz=true and run ninja -C $build fuzzers" >&2
  exit 2
fi

# Inputs longer than this are not tried: a target's seeds fit, and short inputs run faster.
max_len_of() {
  case $1 in
    quantity) echo 128 ;;
    selector) echo 1024 ;;
    annotations | s3_xml) echo 4096 ;;
    yaml | config | protobuf | patch) echo 8192 ;;
    *) echo 16384 ;;
  esac
}

# UBSan reports are crashes; a leak is a failure (libFuzzer's -detect_leaks is on by default).
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS="abort_on_error=1:detect_stack_use_after_return=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

work=$(mktemp -d "${TMPDIR:-/tmp}/kozmo-fuzz.XXXXXX")
failed=0
total=0
printf '%-14s %12s %10s %8s  %s\n' target executions exec/s "new" outcome
for t in "${targets[@]}"; do
  exe=$bin_dir/fuzz_$t
  if [ ! -x "$exe" ]; then
    printf '%-14s %12s %10s %8s  %s\n' "$t" - - - "MISSING ($exe)"
    failed=1
    continue
  fi
  corpus=$work/$t/corpus
  artifacts=$work/$t/artifacts
  mkdir -p "$corpus" "$artifacts"
  [ -d "$here/corpus/$t" ] && cp -r "$here/corpus/$t/." "$corpus/"
  seeds=$(find "$corpus" -type f | wc -l)
  args=(-max_total_time="$seconds" -max_len="$(max_len_of "$t")" -rss_limit_mb=2048 -timeout=10
        -print_final_stats=1 -artifact_prefix="$artifacts/")
  [ -f "$here/dict/$t.dict" ] && args+=(-dict="$here/dict/$t.dict")
  log=$work/$t/fuzz.log
  "$exe" "${args[@]}" "$corpus" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  grown=$(( $(find "$corpus" -type f | wc -l) - seeds ))
  total=$(( total + ${execs:-0} ))
  repro=$(find "$artifacts" -type f | head -1)
  if [ $rc -eq 0 ] && [ -z "$repro" ]; then
    outcome="ok"
  else
    failed=1
    kind=$(grep -m1 -oE 'ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer): [a-zA-Z-]+|runtime error: .*|fuzz property violated: .*|out-of-memory|timeout after [0-9]+ seconds' "$log")
    outcome="FAILED (exit $rc) ${kind:-see log}; reproducer: ${repro:-none}; log: $log"
  fi
  printf '%-14s %12s %10s %8s  %s\n' "$t" "${execs:--}" "${rate:--}" "$grown" "$outcome"
done
echo "total executions: $total"
if [ $failed -ne 0 ]; then
  echo "fuzzing found problems; work directory kept: $work" >&2
  echo "replay one: $bin_dir/fuzz_TARGET REPRODUCER (or the g++ build's fuzz_TARGET_replay REPRODUCER)" >&2
  exit 1
fi
if [ "${KOZMO_FUZZ_KEEP:-0}" = 1 ]; then
  echo "work directory kept: $work"
else
  rm -rf "$work"
fi
