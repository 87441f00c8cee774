#!/bin/bash
# A job refused under mpirun ends as a usage error does (docs/design.md, "Errors and exit codes"): exit
# 2, the refusal printed once (by rank 0, through the start-of-job agreement), and nothing of the run
# before it (no table header). ctest's PASS_REGULAR_EXPRESSION alone cannot see the exit status or
# count the lines, so this script checks them and prints "refused in one line, exit 2" when all hold.
# Usage: one_line_refusal.sh 'EXPECTED LINE (grep -E)' MPIRUN... (the whole job's command)
set -u
expected=$1
shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
timeout 60 "$@" >"$out" 2>&1
rc=$?
cat "$out"
lines=$(grep -cE "$expected" "$out")
[ "$rc" -eq 2 ] || { echo "FAIL: exit $rc, not 2"; exit 1; }
[ "$lines" -eq 1 ] || { echo "FAIL: the refusal printed $lines times, not once"; exit 1; }
if grep -qE '^# (Backend|Using devices)|size +count' "$out"; then echo "FAIL: the run started before the refusal"; exit 1; fi
echo "refused in one line, exit 2"
