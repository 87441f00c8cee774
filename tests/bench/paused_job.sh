#!/bin/bash
# Timeouts count the time a waiting rank ran (collectives/core/pause_clock.h), so a job stopped as a
# whole (Ctrl-Z, SIGSTOP to every rank) for longer than --timeout resumes and finishes, while a rank
# stopped alone is still named within about --timeout of the others running.
#
#   paused_job.sh whole PAUSES SECONDS -- COMMAND...
#     Runs COMMAND (a *_perf run, under mpirun or not, printing its device list), and PAUSES times,
#     once it is well into its timed calls, stops every rank's process (SIGSTOP) for SECONDS, then
#     resumes them, the last rank's process 0.3 s after the others (as mpirun or several nodes resume
#     them one by one). COMMAND must exit 0 with every row checked ("Out of bounds values : 0 OK").
#   paused_job.sh rank RANK LIMIT -- COMMAND...
#     Stops rank RANK's process alone: a line "lost rank RANK" must appear within LIMIT seconds.
#
# COMMAND must run long enough for the pauses (a straggler delay per call makes its length the same on
# any machine).
set -u
mode=$1 a=$2 b=$3
shift 3
[ "$1" = "--" ] || { echo "usage: paused_job.sh whole PAUSES SECONDS -- COMMAND... | rank RANK LIMIT -- COMMAND..."; exit 2; }
shift
out=$(mktemp)
job=""
pids=()
# On any exit: no process left stopped, no job left running.
trap '[ "${#pids[@]}" -gt 0 ] && kill -CONT "${pids[@]}" 2>/dev/null; [ -n "$job" ] && kill "$job" 2>/dev/null; rm -f "$out"' EXIT

now() { date +%s.%N; }
running() { kill -0 "$job" 2>/dev/null; }
state() { sed 's/^.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null; }

timeout 140 "$@" >"$out" 2>&1 &
job=$!
for _ in $(seq 300); do  # each rank's line of the device list gives its process
  mapfile -t pids < <(sed -n 's/^# *Rank *[0-9]* Group .* [Pp]id *\([0-9]*\) .*/\1/p' "$out" | awk '!seen[$0]++')
  [ "${#pids[@]}" -gt 0 ] && grep -q "size *count" "$out" && break  # and the table's header: the calls begin
  running || break
  sleep 0.1
done
[ "${#pids[@]}" -gt 0 ] || { echo "FAIL: no device list"; cat "$out"; exit 1; }

case "$mode" in
  whole)
    for round in $(seq "$a"); do
      sleep 0.7
      if ! running; then
        wait "$job"
        rc=$?
        job=""
        grep -E "error|lost|timed out" "$out"
        [ "$rc" -eq 0 ] && echo "FAIL: the job ended before pause $round (make it longer)" ||
          echo "FAIL: exit $rc after $((round - 1)) pauses"
        exit 1
      fi
      kill -STOP "${pids[@]}"
      sleep 0.2
      for p in "${pids[@]}"; do
        [ "$(state "$p")" = T ] || { echo "FAIL: process $p did not stop"; cat "$out"; exit 1; }
      done
      sleep "$b"
      n=${#pids[@]}
      [ "$n" -gt 1 ] && kill -CONT "${pids[@]:0:n-1}"
      sleep 0.3
      kill -CONT "${pids[n-1]}"
      echo "pause $round: ${pids[*]} stopped for ${b}s"
    done
    wait "$job"
    rc=$?
    job=""
    grep -E "error|lost|timed out" "$out"
    [ "$rc" -eq 0 ] || { echo "FAIL: exit $rc after the pauses"; cat "$out"; exit 1; }
    grep -q "Out of bounds values : 0 OK" "$out" || { echo "FAIL: no checked result"; cat "$out"; exit 1; }
    echo "the job stopped $a times for ${b}s as a whole finished, exit 0, every row checked"
    ;;
  rank)
    pid=$(sed -n "s/^# *Rank *$a Group .* [Pp]id *\([0-9]*\) .*/\1/p" "$out")
    [ -n "$pid" ] || { echo "FAIL: no pid for rank $a"; cat "$out"; exit 1; }
    sleep 0.5
    running || { echo "FAIL: the job ended before the stop (make it longer)"; cat "$out"; exit 1; }
    kill -STOP "$pid"
    stopped=$(now)
    named=""
    while running; do
      if grep -q "lost rank $a\b" "$out"; then named=$(now); break; fi
      sleep 0.05
    done
    [ -n "$named" ] || { grep -q "lost rank $a\b" "$out" && named=$(now); }
    kill -CONT "$pid" 2>/dev/null
    wait "$job"
    job=""
    grep -E "lost|timed out" "$out" | head -3
    [ -n "$named" ] || { echo "FAIL: rank $a was not named"; cat "$out"; exit 1; }
    took=$(awk -v s="$stopped" -v n="$named" 'BEGIN { printf "%.2f", n - s }')
    echo "rank $a stopped alone was named after ${took}s"
    awk -v t="$took" -v l="$b" 'BEGIN { exit !(t <= l) }' || { echo "FAIL: named after ${took}s, more than ${b}s"; exit 1; }
    echo "rank $a stopped alone is named within ${b}s"
    ;;
  *) echo "paused_job.sh: unknown mode '$mode'"; exit 2 ;;
esac
