#!/bin/sh
# usage_one_line.sh TOOL ARGS...: passes when TOOL ARGS exits with status 2, writes exactly one line
# to stderr and nothing to stdout (the project's rule for bad usage).
tool=$1
shift
err=$(mktemp) out=$(mktemp)
"$tool" "$@" >"$out" 2>"$err"
rc=$?
lines=$(wc -l <"$err")
bytes=$(wc -c <"$out")
cat "$err"
rm -f "$err" "$out"
if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || [ "$bytes" -ne 0 ]; then
  echo "usage_one_line: exit $rc (wanted 2), $lines stderr lines (wanted 1), $bytes stdout bytes (wanted 0)"
  exit 1
fi
