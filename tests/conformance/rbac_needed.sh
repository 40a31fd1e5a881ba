#!/usr/bin/env bash
# Shows that every rule of deploy/controller/clusterrole.yaml is needed: runs controller_run.sh
# once per rule with that rule removed (stopping at the first failed check) and prints, per rule,
# the check that failed without it. Not part of CI (one control plane per rule: ~1-2 min each).
# Usage: tests/conformance/rbac_needed.sh [KOZMO] [RULE...]   (default: build/kozmo, every rule)
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KOZMO=${1:-$REPO/build/kozmo}
shift || true
ROLE=$REPO/deploy/controller/clusterrole.yaml
count=$(python3 -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "ClusterRole" and d["metadata"]["name"] == "kozmo-controller"]
print(len(docs[0]["rules"]))' "$ROLE")
rules=("$@")
((${#rules[@]})) || rules=($(seq 0 $((count - 1))))
describe() {
  python3 -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "ClusterRole" and d["metadata"]["name"] == "kozmo-controller"]
r = docs[0]["rules"][int(sys.argv[2])]
print(",".join(r.get("apiGroups", [""])) or "core", " ".join(r["resources"]), ",".join(r["verbs"]))' "$ROLE" "$1"
}
for i in "${rules[@]}"; do
  out=$(KOZMO_CONFORMANCE_STOP_AT_FAIL=1 bash "$REPO/tests/conformance/controller_run.sh" "$REPO" "$KOZMO" "$i" 2>&1)
  failed=$(grep -m1 '^FAIL - ' <<<"$out" | sed 's/^FAIL - //')
  printf '%-3s %-70s %s\n' "$i" "$(describe "$i")" "${failed:-(no check failed)}"
done
