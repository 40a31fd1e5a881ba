# shellcheck shell=bash
# Shared scaffolding for the conformance scripts (run.sh, extender_run.sh, training_run.sh), which
# run against a real Kubernetes v1.20.2 control plane from ../shared/tools/real-k8s.
# Sourced, not run:  source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# A script then calls, in order:
#   conformance_init TAG                      log prefix ("[TAG HH:MM:SS] ...")
#   conformance_find_tools REPO               sets TOOLS (or fails the run)
#   conformance_make_rundir NAME [--child PID_VAR PIDFILE] [--show-logs LOG...]
#                                             sets RUNDIR, the EXIT trap and the watchdog
#   conformance_start_control_plane [start.sh flags]
#                                             builds (if needed) and starts it; sets KC
#   conformance_start_extender KOZMO CONFIG   (extender runs) sets EXT_PORT, EXTENDER_PID
#   conformance_start_kube_scheduler REPO     (extender runs) kube-scheduler pointed at EXT_PORT
# and uses ok/bad/log/finish, k (kubectl on KC), expect, expect_fail, within.
# Env: KOZMO_CONFORMANCE_KEEP=1  keep the run directory (logs, PKI) for a look afterwards
#      KOZMO_CONFORMANCE_STOP_AT_FAIL=1  end the run at its first failed check
#      KOZMO_K8S_CACHE            the binaries' directory (default ~/.cache/kozmo/k8s-v1.20.2)

PASS=0 FAIL=0
CONFORMANCE_TAG=conformance
ok() { PASS=$((PASS + 1)); echo "ok   - $1"; }
bad() {
  FAIL=$((FAIL + 1)); echo "FAIL - $1"; shift; printf '       %s\n' "$@"
  if [ "${KOZMO_CONFORMANCE_STOP_AT_FAIL:-0}" = 1 ]; then finish; fi
}
log() { printf '[%s %s] %s\n' "$CONFORMANCE_TAG" "$(date +%H:%M:%S)" "$*"; }
finish() { echo "$PASS passed, $FAIL failed"; ((FAIL == 0)); exit $?; }

# conformance_init TAG: the prefix of this script's log lines.
conformance_init() { CONFORMANCE_TAG=${1:?conformance_init TAG}; }

# conformance_find_tools REPO: TOOLS is REPO/../shared/tools/real-k8s (physical path); a failed
# check and the end of the run when its scripts are missing. BIN is where build.sh puts (and
# start.sh takes) the binaries.
conformance_find_tools() {
  local repo=${1:?conformance_find_tools REPO}
  TOOLS=$repo/../shared/tools/real-k8s
  if [ ! -x "$TOOLS/start.sh" ] || [ ! -x "$TOOLS/build.sh" ]; then
    bad "the real-k8s tools are present" \
      "$TOOLS/{build,start,stop}.sh not found: the conformance suite needs the shared tools" \
      "checked out beside the repository (../shared next to $(basename "$repo"))"
    finish
  fi
  TOOLS=$(cd "$TOOLS" && pwd -P)
  BIN=${KOZMO_K8S_CACHE:-$HOME/.cache/kozmo/k8s-v1.20.2}
}

# conformance_make_rundir NAME [--child PID_VAR PIDFILE] [--show-logs LOG...]
#   RUNDIR=/tmp/NAME.XXXXXX, removed at exit unless KOZMO_CONFORMANCE_KEEP=1. At exit:
#   the process whose pid is in the variable PID_VAR (when set and non-empty) is killed and
#   reaped, stop.sh stops what RUNDIR/pids records (start.sh's processes and anything the script
#   appends), and on a failure the tail of each RUNDIR/LOG is shown.
#   start.sh runs the control plane in its own sessions, and meson SIGKILLs a timed-out test half
#   a second after SIGTERM, before cleanup can finish: a watchdog in its own session does the same
#   (the child through RUNDIR/PIDFILE, only if its command line still names RUNDIR) once this
#   script is gone, however it ended.
CONFORMANCE_CHILD_VAR=""
CONFORMANCE_LOGS=()
conformance_make_rundir() {
  local name=${1:?conformance_make_rundir NAME} pidfile=""
  shift
  while [ $# -gt 0 ]; do
    case $1 in
      --child) CONFORMANCE_CHILD_VAR=$2 pidfile=$3; shift 3 ;;
      --show-logs) shift; CONFORMANCE_LOGS=("$@"); break ;;
      *) echo "conformance_make_rundir: unknown argument $1" >&2; exit 2 ;;
    esac
  done
  RUNDIR=$(mktemp -d "/tmp/$name.XXXXXX")
  trap conformance_cleanup EXIT
  trap 'exit 130' INT TERM
  setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done
    if [ -n "$5" ]; then
      child=$(cat "$3/$5" 2>/dev/null)
      [ -n "$child" ] && grep -qF "$3/" "/proc/$child/cmdline" 2>/dev/null && kill "$child"
    fi
    [ -f "$3/pids" ] && "$2" "$3" >/dev/null 2>&1
    [ "$4" = 1 ] || rm -rf "$3"' watchdog $$ "$TOOLS/stop.sh" "$RUNDIR" "${KOZMO_CONFORMANCE_KEEP:-0}" "$pidfile" \
    </dev/null >/dev/null 2>&1 &
}

conformance_cleanup() {
  local child="" f
  [ -n "$CONFORMANCE_CHILD_VAR" ] && child=${!CONFORMANCE_CHILD_VAR:-}
  if [ -n "$child" ]; then
    kill "$child" 2>/dev/null
    wait "$child" 2>/dev/null
  fi
  # (stop.sh checks that each recorded pid is still that program with RUNDIR in its command line)
  [ -f "$RUNDIR/pids" ] && { "$TOOLS/stop.sh" "$RUNDIR" >"$RUNDIR/stop.log" 2>&1 || { echo "stop.sh failed:"; cat "$RUNDIR/stop.log"; }; }
  if ((FAIL)); then
    for f in "${CONFORMANCE_LOGS[@]}"; do
      [ -s "$RUNDIR/$f" ] || continue
      echo "--- $f (tail) ---"
      tail -n 40 "$RUNDIR/$f"
    done
  fi
  if [ "${KOZMO_CONFORMANCE_KEEP:-0}" = 1 ]; then echo "run directory kept: $RUNDIR"; else rm -rf "$RUNDIR"; fi
}

# conformance_start_control_plane [start.sh flags, e.g. --scheduler --controller-manager]
#   Builds the control plane into BIN if needed (the first build compiles Kubernetes: ~8 min),
#   starts it in RUNDIR and sets KC to its admin kubeconfig; a failed check and the end of the
#   run when either step fails. start.sh's stderr is in RUNDIR/start.log.
conformance_start_control_plane() {
  local what="kube-apiserver v1.20.2" flag
  for flag in "$@"; do
    case $flag in
      --scheduler) what+=" + scheduler" ;;
      --controller-manager) what+=" + controller-manager" ;;
    esac
  done
  log "building the control plane if needed (the first build compiles Kubernetes: ~8 min)"
  if ! "$TOOLS/build.sh" "$BIN" >"$RUNDIR/build.log" 2>&1; then
    bad "the real-k8s control plane builds" "$(tail -n 30 "$RUNDIR/build.log")"
    finish
  fi
  log "starting $what in $RUNDIR"
  if ! KC=$("$TOOLS/start.sh" --dir "$RUNDIR" --bin "$BIN" "$@" 2>"$RUNDIR/start.log") || [ ! -s "$KC" ]; then
    bad "the real-k8s control plane starts" "$(tail -n 30 "$RUNDIR/start.log")"
    finish
  fi
}

# k ARGS...: kubectl on the control plane (stderr included).
k() { kubectl --kubeconfig "$KC" --cache-dir "$RUNDIR/kubectl-cache" --request-timeout=20s "$@" 2>&1; }

# conformance_start_extender KOZMO CONFIG: `KOZMO extender --config CONFIG` on a free loopback
#   port (it prints the port it bound), logging to RUNDIR/extender.log; sets EXT_PORT and
#   EXTENDER_PID. A failed
#   check and the end of the run when it does not start. stop.sh stops it at exit (RUNDIR/pids).
conformance_start_extender() {
  local exe=${1:?conformance_start_extender KOZMO CONFIG} config=${2:?conformance_start_extender KOZMO CONFIG} pid
  setsid "$exe" extender --config "$config" --kubeconfig "$KC" --listen 127.0.0.1:0 \
    >"$RUNDIR/extender.out" 2>"$RUNDIR/extender.log" </dev/null &
  pid=$!
  EXTENDER_PID=$pid
  echo "$(basename "$exe") $pid" >>"$RUNDIR/pids"
  EXT_PORT=""
  for _ in $(seq 1 100); do
    EXT_PORT=$(sed -n 's/^kozmo extender: listening on port \([0-9]*\)$/\1/p' "$RUNDIR/extender.out" 2>/dev/null)
    [ -n "$EXT_PORT" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$EXT_PORT" ]; then
    bad "the extender starts" "$(tail -n 20 "$RUNDIR/extender.log")"
    finish
  fi
}

# conformance_start_kube_scheduler REPO [URL TLS_DIR]: kube-scheduler v1.20.2 with REPO's shipped
#   deploy/scheduler/kube-scheduler-config.yaml, pointed at this run's kubeconfig and the
#   extender on EXT_PORT (or at URL, over HTTPS with the extender tlsConfig of TLS_DIR's ca.crt,
#   client.crt and client.key), without leader election (the kube-scheduler user may only hold
#   the "kube-scheduler" lease), on a free port, logging to RUNDIR/kube-scheduler.log; returns
#   once it is healthy (a failed check and the end of the run otherwise).
conformance_start_kube_scheduler() {
  local repo=${1:?conformance_start_kube_scheduler REPO} url=${2:-http://127.0.0.1:$EXT_PORT/v1/extender} tls=${3:-}
  local pki=$RUNDIR/pki port pid healthy=0 https=()
  [ -n "$tls" ] && https=(-e "s|enableHTTPS: false|enableHTTPS: true\n  tlsConfig: {caFile: $tls/ca.crt, certFile: $tls/client.crt, keyFile: $tls/client.key}|")
  conformance_free_ports 2
  port=$FREE_PORT
  sed -e "s|kubeconfig: \"\"|kubeconfig: $pki/kube-scheduler.kubeconfig|" \
    -e "s|http://127.0.0.1:30096/v1/extender|$url|" "${https[@]}" \
    -e "s|leaderElect: true|leaderElect: false|" \
    "$repo/deploy/scheduler/kube-scheduler-config.yaml" >"$RUNDIR/kube-scheduler-config.yaml"
  # With --config, kube-scheduler v1.20 ignores --port=0 and serves plain HTTP on 0.0.0.0:10251
  # (port 0 is refused, "" means the default), which another kube-scheduler on the host may
  # hold: a free loopback port of its own instead (the secure port is the one checked).
  printf 'healthzBindAddress: 127.0.0.1:%s\nmetricsBindAddress: 127.0.0.1:%s\n' $((port + 1)) $((port + 1)) \
    >>"$RUNDIR/kube-scheduler-config.yaml"
  if ! grep -q "urlPrefix: $url" "$RUNDIR/kube-scheduler-config.yaml" ||
    { [ -n "$tls" ] && ! grep -q "caFile: $tls/ca.crt" "$RUNDIR/kube-scheduler-config.yaml"; } ||
    ! grep -q "kubeconfig: $pki" "$RUNDIR/kube-scheduler-config.yaml"; then
    bad "deploy/scheduler/kube-scheduler-config.yaml can be pointed at this run" "$(cat "$RUNDIR/kube-scheduler-config.yaml")"
    finish
  fi
  setsid "$BIN/kube-scheduler" --config="$RUNDIR/kube-scheduler-config.yaml" \
    --authentication-kubeconfig="$pki/kube-scheduler.kubeconfig" --authorization-kubeconfig="$pki/kube-scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$port" --port=0 \
    --tls-cert-file="$pki/localhost-serving.crt" --tls-private-key-file="$pki/localhost-serving.key" --v=2 \
    >"$RUNDIR/kube-scheduler.log" 2>&1 </dev/null &
  pid=$!
  echo "kube-scheduler $pid" >>"$RUNDIR/pids"
  for _ in $(seq 1 100); do
    if [ "$(curl -sS --max-time 2 --cacert "$pki/ca.crt" "https://127.0.0.1:$port/healthz" 2>/dev/null)" = ok ]; then healthy=1; break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.3
  done
  if ((!healthy)); then
    bad "kube-scheduler starts with the extender configuration" "$(tail -n 20 "$RUNDIR/kube-scheduler.log")"
    finish
  fi
}

# conformance_free_ports N: sets FREE_PORT to the first of N consecutive free loopback ports,
#   below the ephemeral range (32768 and up), where no client connection takes one meanwhile.
conformance_free_ports() {
  local n=${1:?conformance_free_ports N} p i free
  FREE_PORT=""
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 12000))
    free=1
    for ((i = 0; i < n; i++)); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$((p + i))") 2>/dev/null; then free=0; break; fi
    done
    ((free)) && { FREE_PORT=$p; return 0; }
  done
  bad "$n free ports"
  finish
}

# within SECONDS NAME PATTERN CMD...: CMD's output matches PATTERN (grep -E) within SECONDS.
within() {
  local secs=$1 name=$2 pattern=$3 out _
  shift 3
  for _ in $(seq 1 $((secs * 2))); do
    out=$("$@")
    grep -qE -- "$pattern" <<<"$out" && { ok "$name"; return 0; }
    sleep 0.5
  done
  bad "$name" "wanted /$pattern/, last output: $out"
  return 1
}
# expect NAME PATTERN CMD...: CMD succeeds and its output matches PATTERN.
expect() {
  local name=$1 pattern=$2 out rc
  shift 2
  out=$("$@")
  rc=$?
  if [ $rc -eq 0 ] && grep -qE -- "$pattern" <<<"$out"; then ok "$name"; else bad "$name" "rc=$rc" "$out"; fi
}
# expect_fail NAME PATTERN CMD...: CMD fails and its output matches PATTERN.
expect_fail() {
  local name=$1 pattern=$2 out rc
  shift 2
  out=$("$@")
  rc=$?
  if [ $rc -ne 0 ] && grep -qE -- "$pattern" <<<"$out"; then ok "$name"; else bad "$name" "rc=$rc" "$out"; fi
}
