#!/bin/sh
# The 8-byte allreduce of 2 rank threads pinned to one CPU (taskset -c 0): a wait that spins holds the
# other rank off the CPU until the scheduler's quantum ends (120-280 µs per call); one that yields at
# once takes a few µs. The bound, 50 µs, leaves room for a loaded machine and is still far below a
# quantum. Usage: pinned_latency.sh ALL_REDUCE_PERF
set -eu
command -v taskset >/dev/null 2>&1 || { echo "no taskset: skipped"; exit 77; }
out=$(taskset -c 0 "$1" -g 2 -b 8 -e 8 -n 2000 -w 200)
echo "$out"
echo "$out" | awk '$1 == "8" && $2 == "2" { found = 1; t = $6 + 0;
  if (t > 50) { print "pinned 8-byte allreduce: " t " us per call, more than 50"; exit 1 }
  print "pinned 8-byte allreduce: " t " us per call" }
  END { if (!found) { print "no 8-byte row"; exit 1 } }'
