#!/bin/bash
# A rank stopped (SIGSTOP) in the middle of an allreduce is the rank the first blame line names, and no
# rank blames itself: the ranks waiting for a rank that waits for the stopped one follow the chain of
# waits (shm_node.cc), and a wait across nodes reports only after the node that sees the stopped rank
# did. (While mpirun ends the job, a rank on the other node whose own wait runs out may still name the
# rank it waited for there.) Stops rank VICTIM in ROUNDS jobs of 4 ranks (where it stops in the plan
# differs from job to job), with emulated nodes of RANKS_PER_NODE ranks (0: one node) and --algo ALGO.
# The transport is the environment's (CCLAB_PROC_TRANSPORT=mpi: every pair over MPI, mpi_executor.cc;
# pass -x CCLAB_PROC_TRANSPORT among the mpirun arguments).
# Usage: stopped_rank_blame.sh VICTIM ROUNDS RANKS_PER_NODE ALGO MPIRUN... -- ALL_REDUCE_PERF
set -u
victim=$1 rounds=$2 per_node=$3 algo=$4
shift 4
mpirun=()
while [ "$1" != "--" ]; do mpirun+=("$1"); shift; done
perf=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for round in $(seq "$rounds"); do
  : >"$out"
  CCLAB_RANKS_PER_NODE=$per_node timeout 60 "${mpirun[@]}" -x CCLAB_RANKS_PER_NODE -np 4 "$perf" --algo "$algo" -b 1M -e 1M \
    -w 1 -n 1000000 --timeout 1000 >"$out" 2>&1 &
  job=$!
  pid=""
  for _ in $(seq 300); do  # the rank's line of the device list gives its pid
    pid=$(sed -n "s/^# *Rank *$victim Group .* pid \([0-9]*\) .*/\1/p" "$out")
    [ -n "$pid" ] && break
    sleep 0.1
  done
  [ -n "$pid" ] || { echo "round $round: no pid for rank $victim"; cat "$out"; kill "$job"; exit 1; }
  sleep 1  # well into the timed iterations
  kill -STOP "$pid"
  wait "$job"
  kill -CONT "$pid" 2>/dev/null
  # "rank R lost rank(s) ..."; a line without a blame ("rank R timed out ... waiting for data from rank
  # P", as the MPI transport wrote before it followed the chain) counts as blaming P.
  blames=$(sed -n -e 's/.*: \(rank [0-9]* lost ranks\? [0-9, ]*[0-9]\).*/\1/p' \
                  -e 's/.*: rank \([0-9]*\) timed out after .* rank \([0-9, ]*[0-9]\).*/rank \1 lost rank \2/p' "$out")
  echo "round $round, rank $victim stopped:"
  grep 'proc allreduce/' "$out"
  first=$(echo "$blames" | head -1)
  case "$first" in
    *"lost rank $victim") ;;
    *) echo "FAIL: the first blame is '$first', not rank $victim"; exit 1 ;;
  esac
  if echo "$blames" | grep -q "^rank $victim "; then echo "FAIL: rank $victim blames itself"; exit 1; fi
done
echo "the first blame names rank $victim, nobody blames itself"
