#!/usr/bin/env bash
# The real `kozmo copilot download|upload` against (a) the filesystem and (b) a real S3 server:
# s3rver 3.7.1 (npm), behind tests/copilot/sigv4_gate.js, which checks every SigV4 signature
# itself (s3rver checks only the access key id of a V4 request; see the gate's header).
#
#   copilot_test.sh KOZMO SOURCE_DIR
#
# s3rver is installed with `npm install --prefix ~/.cache/kozmo/npm s3rver@3.7.1` when missing.
set -u
KOZMO=${1:?usage: copilot_test.sh KOZMO SOURCE_DIR}
SRC=${2:?usage: copilot_test.sh KOZMO SOURCE_DIR}
KOZMO=$(realpath "$KOZMO")
source "$SRC/tests/copilot/s3_server.sh"

PASS=0 FAIL=0
ok() { PASS=$((PASS + 1)); echo "ok   - $1"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL - $1"; shift; printf '       %s\n' "$@"; }
check() { # check NAME COMMAND...: ok when the command succeeds
  local name=$1; shift
  if "$@"; then ok "$name"; else bad "$name" "command: $*"; fi
}

WORK=$(mktemp -d /tmp/kozmo-copilot-test.XXXXXX)
S3_PID="" GATE_PID=""
cleanup() {
  s3_stop
  if ((FAIL)); then echo "--- logs ---"; tail -n 30 "$WORK"/*.log 2>/dev/null; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

sha() { sha256sum "$1" | cut -d' ' -f1; }
json_get() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$@"; }

# The wrapper Kozmo puts around a task's command (actors/tasks/copilot.cpp, wrapped_command).
wrapped() { # wrapped OUTPUT_PATH COMMAND...
  local out=$1; shift
  /bin/sh -c "\"\$@\"; rc=\$?; echo \"\$rc\" > '$out/_EXIT.tmp' && mv '$out/_EXIT.tmp' '$out/_EXIT'; exit \"\$rc\"" kozmo-wrapped "$@"
}

# ---- the data ------------------------------------------------------------------------------
mkdir -p "$WORK/src/dir/sub/deeper"
printf 'hello copilot\n' > "$WORK/src/text.txt"
for f in a.txt b.bin sub/c.txt sub/deeper/d.txt "sub/with space.txt"; do
  head -c $((RANDOM * 7 + 1)) /dev/urandom > "$WORK/src/dir/$f"
done

echo "# (a) file://"
IN=$WORK/in
"$KOZMO" copilot download --input-path "$IN" --input "text=file://$WORK/src/text.txt" --input "data=file://$WORK/src/dir" \
  --termination-log "$WORK/term-dl" > "$WORK/dl.log" 2>&1
check "download: exit 0" [ $? -eq 0 ]
check "download: a single object lands at <input-path>/<name>" cmp -s "$IN/text" "$WORK/src/text.txt"
same_tree=1
for f in a.txt b.bin sub/c.txt sub/deeper/d.txt "sub/with space.txt"; do cmp -s "$IN/data/$f" "$WORK/src/dir/$f" || same_tree=0; done
check "download: a directory of 5 files lands under <input-path>/<name>/ with its layout" [ $same_tree = 1 ]
check "download: _inputs.json gives the single input's URI, size and sha256" \
  [ "$(json_get "$IN/_inputs.json" 'd["inputs"]["text"]["sha256"]')" = "$(sha "$WORK/src/text.txt")" ]
check "download: _inputs.json lists a directory's files with their sha256" \
  [ "$(json_get "$IN/_inputs.json" '[f["sha256"] for f in d["inputs"]["data"]["files"] if f["path"]=="sub/c.txt"][0]')" = "$(sha "$WORK/src/dir/sub/c.txt")" ]
check "download: nothing is written to the termination log on success" [ ! -e "$WORK/term-dl" ]

"$KOZMO" copilot download --input-path "$WORK/in2" --input "text=file://$WORK/src/text.txt" --input "nope=file://$WORK/src/missing.txt" \
  --termination-log "$WORK/term-missing" > "$WORK/missing.log" 2>&1
rc=$?
check "download: a missing input exits non-zero" [ $rc -ne 0 ]
check "download: a missing input's termination message names it as the user's InputDownloadFailed" \
  grep -q "^InputDownloadFailed (user error): input \"nope\" file://$WORK/src/missing.txt: no such object" "$WORK/term-missing"
check "download: a missing input fails before any input is fetched" [ ! -e "$WORK/in2/text" ]

"$KOZMO" copilot download --input-path "$WORK/in3" --input "data=file://$WORK/src/dir" --max-dataset-size 1000 \
  --termination-log "$WORK/term-cap" > "$WORK/cap.log" 2>&1
rc=$?
check "download: inputs over --max-dataset-size exit non-zero" [ $rc -ne 0 ]
check "download: the size cap's message gives the total and the cap" \
  grep -q "^InputDownloadFailed (user error): the inputs total [0-9]* bytes (.*), over the cap of 1000 bytes" "$WORK/term-cap"

OUT=$WORK/out
mkdir -p "$OUT"
"$KOZMO" copilot upload --output-path "$OUT" --output-prefix "file://$WORK/dest/" --termination-log "$WORK/term-up" \
  > "$WORK/up.log" 2>&1 &
UP=$!
sleep 0.5
check "upload: waits while the task's container runs (no _EXIT yet)" kill -0 $UP
wrapped "$OUT" sh -c "mkdir -p $OUT/model/layers && tr a-z A-Z < $IN/text > $OUT/upper && cp $IN/data/b.bin $OUT/model/layers/w.bin && echo 1 > $OUT/model/epoch"
wait $UP
check "upload: exit 0 once the wrapped command has written _EXIT" [ $? -eq 0 ]
check "upload: a top-level output is stored under the prefix" [ "$(cat "$WORK/dest/upper")" = "HELLO COPILOT" ]
check "upload: nested outputs keep their paths" cmp -s "$WORK/dest/model/layers/w.bin" "$WORK/src/dir/b.bin"
check "upload: the _EXIT marker is not an output" [ ! -e "$WORK/dest/_EXIT" ]
check "upload: _outputs.json lists every output with its URI and size" \
  [ "$(json_get "$WORK/dest/_outputs.json" 'sorted(o["path"] for o in d["outputs"])')" = "['model/epoch', 'model/layers/w.bin', 'upper']" ]

OUT=$WORK/out-err
mkdir -p "$OUT"
wrapped "$OUT" sh -c "echo 'loss is NaN at step 12' > $OUT/_ERROR; echo partial > $OUT/partial; exit 3"
"$KOZMO" copilot upload --output-path "$OUT" --output-prefix "file://$WORK/dest-err/" --termination-log "$WORK/term-err" \
  > "$WORK/err.log" 2>&1
rc=$?
check "upload: _ERROR makes the uploader exit non-zero" [ $rc -ne 0 ]
check "upload: _ERROR's text is the termination message, as a UserError" grep -q "^UserError: loss is NaN at step 12" "$WORK/term-err"
check "upload: the whole _ERROR text is kept next to the outputs" grep -q "loss is NaN" "$WORK/dest-err/_ERROR"
check "upload: a failed task's outputs are not uploaded" [ ! -e "$WORK/dest-err/partial" ]

OUT=$WORK/out-big-err
mkdir -p "$OUT"
python3 -c "import sys; sys.stdout.write('E' * 2000000)" > "$OUT/_ERROR"
echo 1 > "$OUT/_EXIT"
"$KOZMO" copilot upload --output-path "$OUT" --output-prefix "file://$WORK/dest-big/" --termination-log "$WORK/term-big" \
  > "$WORK/big.log" 2>&1
check "upload: a 2 MB _ERROR is cut to fit a termination message, with a note" \
  grep -q "(truncated: the first [0-9]* of 2000000 bytes; the whole text is at file://$WORK/dest-big/_ERROR)" "$WORK/term-big"
check "upload: the termination message stays under the kubelet's 4096 bytes" [ "$(wc -c < "$WORK/term-big")" -lt 4096 ]
check "upload: the stored _ERROR is the whole file" [ "$(wc -c < "$WORK/dest-big/_ERROR")" -eq 2000000 ]

OUT=$WORK/out-fail
mkdir -p "$OUT"
wrapped "$OUT" sh -c "echo x > $OUT/x; exit 2"
"$KOZMO" copilot upload --output-path "$OUT" --output-prefix "file://$WORK/dest-fail/" > "$WORK/fail.log" 2>&1
rc=$?
check "upload: a failed command without _ERROR: exit 0 (its own exit decides)" [ $rc -eq 0 ]
check "upload: a failed command's outputs are not uploaded" [ ! -e "$WORK/dest-fail/x" ]

mkdir -p "$WORK/out-never"
"$KOZMO" copilot upload --output-path "$WORK/out-never" --output-prefix "file://$WORK/dest-never/" --timeout 1s \
  --termination-log "$WORK/term-timeout" > "$WORK/timeout.log" 2>&1
rc=$?
check "upload: no _EXIT within --timeout exits non-zero" [ $rc -ne 0 ]
check "upload: no _EXIT within --timeout is an OutputUploadFailed" \
  grep -q "^OutputUploadFailed: the task's container did not finish within 1 s" "$WORK/term-timeout"

echo "# (b) s3:// (s3rver 3.7.1 behind a SigV4 gate)"
s3_start "$WORK" "$SRC" || { bad "s3rver 3.7.1 behind the SigV4 gate starts" "$(tail -5 "$WORK"/*.log)"; exit 1; }
S3=(--s3-endpoint "http://127.0.0.1:$GATE_PORT" --s3-region us-east-1)
export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER

# s3rver on its own: what it checks of a V4 request.
"$KOZMO" copilot upload --output-path "$WORK/out" --output-prefix "s3://inputs/direct/" --s3-endpoint "http://127.0.0.1:$S3_PORT" \
  --s3-secret-access-key WRONG > "$WORK/direct.log" 2>&1
check "s3rver alone accepts a V4 request signed with a wrong secret (why the gate is there)" [ $? -eq 0 ]
"$KOZMO" copilot upload --output-path "$WORK/out" --output-prefix "s3://inputs/direct2/" --s3-endpoint "http://127.0.0.1:$S3_PORT" \
  --s3-access-key-id NOBODY --termination-log "$WORK/term-nobody" > "$WORK/nobody.log" 2>&1
check "s3rver alone refuses an unknown access key id (InvalidAccessKeyId)" grep -q "403 InvalidAccessKeyId" "$WORK/term-nobody"

# Inputs into the store with the uploader itself (its outputs are the download's inputs).
STAGE=$WORK/stage
mkdir -p "$STAGE/data"
cp -r "$WORK/src/dir/." "$STAGE/data/"
cp "$WORK/src/text.txt" "$STAGE/text.txt"
head -c $((12 * 1024 * 1024 + 12345)) /dev/urandom > "$STAGE/big.bin"
echo 0 > "$STAGE/_EXIT"
"$KOZMO" copilot upload --output-path "$STAGE" --output-prefix "s3://inputs/run1/" "${S3[@]}" --s3-part-size $((5 * 1024 * 1024)) \
  --termination-log "$WORK/term-stage" > "$WORK/stage.log" 2>&1
check "s3 upload: files, a directory and a 12 MiB file in 5 MiB multipart parts" [ $? -eq 0 ]
check "s3 upload: the object is in s3rver's store" [ -n "$(find "$WORK/s3data/inputs" -path '*run1/big.bin*' -print -quit)" ]
check "s3 upload: the 12 MiB file went as a multipart upload of 3 parts" \
  bash -c "grep -q 'ok POST /inputs/run1/big.bin?uploads' '$WORK/gate.log' && grep -q 'ok PUT /inputs/run1/big.bin?partNumber=3&uploadId=' '$WORK/gate.log'"

IN=$WORK/s3in
"$KOZMO" copilot download --input-path "$IN" --input "text=s3://inputs/run1/text.txt" --input "data=s3://inputs/run1/data" \
  --input "big=s3://inputs/run1/big.bin" "${S3[@]}" --s3-part-size $((5 * 1024 * 1024)) --s3-list-page 2 \
  --termination-log "$WORK/term-s3dl" > "$WORK/s3dl.log" 2>&1
check "s3 download: exit 0" [ $? -eq 0 ]
check "s3 download: a single object" cmp -s "$IN/text" "$WORK/src/text.txt"
same_tree=1
for f in a.txt b.bin sub/c.txt sub/deeper/d.txt "sub/with space.txt"; do cmp -s "$IN/data/$f" "$WORK/src/dir/$f" || same_tree=0; done
check "s3 download: a prefix of 5 objects (one key with a space) keeps its layout" [ $same_tree = 1 ]
check "s3 download: the prefix was listed in pages of 2, following continuation tokens" \
  [ "$(grep -c 'ok GET /inputs?continuation-token=.*list-type=2&max-keys=2&prefix=run1%2Fdata%2F' "$WORK/gate.log")" -eq 2 ]
check "s3 download: a 12 MiB object in ranged GETs of 5 MiB" \
  grep -q "ok GET /inputs/run1/big.bin range=bytes=10485760-12595256" "$WORK/gate.log"
check "s3 download: the 12 MiB object's sha256 in _inputs.json" \
  [ "$(json_get "$IN/_inputs.json" 'd["inputs"]["big"]["sha256"]')" = "$(sha "$STAGE/big.bin")" ]
check "s3 download: _inputs.json gives the prefix's total size" \
  [ "$(json_get "$IN/_inputs.json" 'd["inputs"]["data"]["size"]')" = "$(cat "$WORK/src/dir"/*.* "$WORK/src/dir"/sub/*.* "$WORK/src/dir"/sub/deeper/* | wc -c)" ]

"$KOZMO" copilot download --input-path "$WORK/s3in2" --input "nope=s3://inputs/run1/nothing-here" "${S3[@]}" \
  --termination-log "$WORK/term-s3missing" > "$WORK/s3missing.log" 2>&1
check "s3 download: a missing input is the user's InputDownloadFailed" \
  grep -q '^InputDownloadFailed (user error): input "nope" s3://inputs/run1/nothing-here: no such object' "$WORK/term-s3missing"

"$KOZMO" copilot download --input-path "$WORK/s3in3" --input "data=s3://inputs/run1/" "${S3[@]}" --max-dataset-size 4096 \
  --termination-log "$WORK/term-s3cap" > "$WORK/s3cap.log" 2>&1
check "s3 download: the size cap is checked from the listing, before a byte moves" \
  bash -c "grep -q 'over the cap of 4096 bytes' '$WORK/term-s3cap' && [ ! -e '$WORK/s3in3/data' ]"

"$KOZMO" copilot download --input-path "$WORK/s3in4" --input "text=s3://inputs/run1/text.txt" "${S3[@]}" \
  --s3-secret-access-key WRONG --termination-log "$WORK/term-wrong" > "$WORK/wrong.log" 2>&1
rc=$?
check "s3 download: a wrong secret is refused (403 SignatureDoesNotMatch), as a system InputDownloadFailed" \
  bash -c "[ $rc -ne 0 ] && grep -q '^InputDownloadFailed: HEAD s3://inputs/run1/text.txt: 403 SignatureDoesNotMatch' '$WORK/term-wrong'"
"$KOZMO" copilot upload --output-path "$WORK/out" --output-prefix "s3://outputs/wrong/" "${S3[@]}" --s3-secret-access-key WRONG \
  --termination-log "$WORK/term-wrong-up" > "$WORK/wrong-up.log" 2>&1
check "s3 upload: a wrong secret is refused, as OutputUploadFailed" grep -q '^OutputUploadFailed: .*403 SignatureDoesNotMatch' "$WORK/term-wrong-up"

OUT=$WORK/s3out
mkdir -p "$OUT"
wrapped "$OUT" sh -c "mkdir -p $OUT/a/b && tr a-z A-Z < $IN/text > $OUT/upper && cp $IN/big $OUT/a/b/big.bin"
"$KOZMO" copilot upload --output-path "$OUT" --output-prefix "s3://outputs/task-1" "${S3[@]}" \
  --termination-log "$WORK/term-s3up" > "$WORK/s3up.log" 2>&1
check "s3 upload: nested outputs and _outputs.json" [ $? -eq 0 ]
"$KOZMO" copilot download --input-path "$WORK/back" --input "out=s3://outputs/task-1/" "${S3[@]}" > "$WORK/back.log" 2>&1
check "s3 round trip: what was uploaded downloads the same" \
  bash -c "cmp -s '$WORK/back/out/a/b/big.bin' '$STAGE/big.bin' && [ \"\$(cat '$WORK/back/out/upper')\" = 'HELLO COPILOT' ]"
check "s3 round trip: _outputs.json is there and lists both outputs" \
  [ "$(json_get "$WORK/back/out/_outputs.json" 'sorted(o["uri"] for o in d["outputs"])')" = "['s3://outputs/task-1/a/b/big.bin', 's3://outputs/task-1/upper']" ]

kill "$GATE_PID" 2>/dev/null && wait "$GATE_PID" 2>/dev/null
GATE_PID=""
check "the gate refused only the requests signed with a wrong secret" \
  bash -c "grep -q 'gate: refused' '$WORK/gate.log' && ! grep 'gate: refused' '$WORK/gate.log' | grep -v 'SignatureDoesNotMatch' | grep -q ."
grep "checked" "$WORK/gate.log"

echo "$PASS passed, $FAIL failed"
((FAIL == 0))
