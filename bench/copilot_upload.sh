#!/usr/bin/env bash
# Copilot upload bench: `kozmo copilot upload` of FILES x SIZE_MIB MiB (default 64 x 16 MiB =
# 1 GiB) to a file:// prefix, against `cp -r` of the same files, RUNS times each, alternating.
# Prints each tool's min and median seconds and throughput, and the ratio of the medians
# (kozmo's throughput / cp's; the target is >= 0.8). Both read the files from the page cache
# (written just before) and write to the same filesystem, each after a sync, in alternating order. Asserts nothing; not in the suite.
#
#   bench/copilot_upload.sh BUILD_DIR      (env FILES=64 SIZE_MIB=16 RUNS=5 DIR=/var/tmp)
set -uo pipefail
BUILD=${1:?usage: copilot_upload.sh BUILD_DIR}
KOZMO=$(cd "$BUILD" && pwd -P)/kozmo
FILES=${FILES:-64}
SIZE_MIB=${SIZE_MIB:-16}
RUNS=${RUNS:-5}
WORK=$(mktemp -d "${DIR:-/var/tmp}/kozmo-copilot-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

mkdir -p "$WORK/src/shards"
for i in $(seq 1 "$FILES"); do
  head -c $((SIZE_MIB * 1024 * 1024)) /dev/urandom > "$WORK/src/shards/part-$i.bin"
done
echo 0 > "$WORK/src/_EXIT" # what the wrapped command leaves: the uploader starts at once
sync
BYTES=$((FILES * SIZE_MIB * 1024 * 1024))
echo "copilot upload bench: $FILES files x $SIZE_MIB MiB = $((BYTES / 1024 / 1024)) MiB, $RUNS runs, in $WORK"

now() { date +%s.%N; }
kozmo_times=() cp_times=()
# Each copy starts with the page cache's dirty data written back (sync), so that one tool does
# not pay for the other's writeback; the order alternates between runs.
time_kozmo() {
  rm -rf "$WORK/dst-kozmo"; sync
  local t0; t0=$(now)
  "$KOZMO" copilot upload --output-path "$WORK/src" --output-prefix "file://$WORK/dst-kozmo/" --log-level warn || {
    echo "kozmo copilot upload failed" >&2; exit 1; }
  kozmo_times+=("$(echo "$(now) - $t0" | bc -l)")
}
time_cp() {
  rm -rf "$WORK/dst-cp"; sync
  local t0; t0=$(now)
  cp -r "$WORK/src" "$WORK/dst-cp"
  cp_times+=("$(echo "$(now) - $t0" | bc -l)")
}
for r in $(seq 1 "$RUNS"); do
  if ((r % 2)); then time_kozmo; time_cp; else time_cp; time_kozmo; fi
  printf 'run %d: kozmo %.3f s, cp -r %.3f s\n' "$r" "${kozmo_times[-1]}" "${cp_times[-1]}"
done
cmp -s "$WORK/src/shards/part-1.bin" "$WORK/dst-kozmo/shards/part-1.bin" || { echo "upload differs from its source"; exit 1; }

python3 - "$BYTES" "${kozmo_times[*]}" "${cp_times[*]}" <<'EOF'
import statistics, sys
nbytes = int(sys.argv[1])
k = [float(x) for x in sys.argv[2].split()]
c = [float(x) for x in sys.argv[3].split()]
mib = nbytes / 1024 / 1024
for name, t in (("kozmo copilot upload", k), ("cp -r", c)):
    print(f"{name:22s} min {min(t):.3f} s  median {statistics.median(t):.3f} s  "
          f"({mib / statistics.median(t):.0f} MiB/s at the median)")
print(f"ratio (kozmo throughput / cp throughput, medians): {statistics.median(c) / statistics.median(k):.2f}")
EOF
