# Sourced: a real S3-speaking server for tests, s3rver 3.7.1 (npm) behind tests/copilot/
# sigv4_gate.js, which checks every SigV4 signature itself (s3rver checks only a V4 request's
# access key id). Credentials S3RVER / S3RVER; buckets `inputs` and `outputs`.
#
#   s3_start WORK SRC   sets S3_PORT, GATE_PORT, S3_PID, GATE_PID; logs in WORK/s3rver.log and
#                       WORK/gate.log, objects under WORK/s3data. Returns 1 if it cannot start.
#   s3_stop
# s3rver is installed with `npm install --prefix ~/.cache/kozmo/npm s3rver@3.7.1` when missing.
s3_free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

s3_start() {
  local work=$1 src=$2
  local prefix=$HOME/.cache/kozmo/npm
  local s3rver=$prefix/node_modules/.bin/s3rver
  if [ ! -x "$s3rver" ]; then
    npm install --prefix "$prefix" s3rver@3.7.1 > "$work/npm.log" 2>&1 || { tail -5 "$work/npm.log"; return 1; }
  fi
  S3_PORT=$(s3_free_port)
  GATE_PORT=$(s3_free_port)
  mkdir -p "$work/s3data"
  # s3rver's ListObjectsV2 continuation tokens use DES, which Node 17+ (OpenSSL 3) only has in
  # its legacy provider: without it, a listing of more than one page is a 500 InternalError.
  NODE_OPTIONS=--openssl-legacy-provider "$s3rver" -d "$work/s3data" -a 127.0.0.1 -p "$S3_PORT" --silent \
    --configure-bucket inputs --configure-bucket outputs > "$work/s3rver.log" 2>&1 &
  S3_PID=$!
  node "$src/tests/copilot/sigv4_gate.js" "$GATE_PORT" "$S3_PORT" S3RVER S3RVER > "$work/gate.log" 2>&1 &
  GATE_PID=$!
  for _ in $(seq 50); do
    (: < "/dev/tcp/127.0.0.1/$S3_PORT") 2>/dev/null && (: < "/dev/tcp/127.0.0.1/$GATE_PORT") 2>/dev/null && return 0
    sleep 0.2
  done
  return 1
}

s3_stop() {
  [ -n "${GATE_PID:-}" ] && kill "$GATE_PID" 2>/dev/null && wait "$GATE_PID" 2>/dev/null
  [ -n "${S3_PID:-}" ] && kill "$S3_PID" 2>/dev/null && wait "$S3_PID" 2>/dev/null
  GATE_PID="" S3_PID=""
}
