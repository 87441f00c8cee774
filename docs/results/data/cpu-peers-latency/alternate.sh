#!/bin/bash
# Alternated 8-byte allreduce runs (min of out-of-place and in-place, µs): this build (build/bin) vs
# the build of another commit (argument: its bin folder) vs OpenMPI, at 2 and 4 ranks, 3 rounds.
# Run from the repository root: docs/results/data/cpu-peers-latency/alternate.sh OTHER/build/bin
set -u
BASE=${1:?usage: alternate.sh BIN_DIR_OF_THE_BUILD_TO_COMPARE}
NEW=build/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ROOT=(); [ "$(id -u)" = 0 ] && ROOT=(--allow-run-as-root)
t() { "$@" 2>/dev/null | awk '/^ +8 /{t=($6<$10)?$6:$10; print t}'; }
for round in 1 2 3; do
  echo "# round $round load $(cut -d' ' -f1-3 /proc/loadavg)"
  for n in 2 4; do
    if [ $n = 2 ]; then it="-n 20000 -w 1000"; else it="-n 2000 -w 200"; fi
    echo "n=$n mpi $(t mpirun "${ROOT[@]}" --oversubscribe -np $n $NEW/mpi_allreduce_perf -b 8 -e 8 $it)"
    echo "n=$n proc-new-auto $(t mpirun "${ROOT[@]}" --oversubscribe -np $n $NEW/all_reduce_perf --backend proc --algo auto -b 8 -e 8 $it)"
    echo "n=$n proc-base-auto $(t mpirun "${ROOT[@]}" --oversubscribe -np $n $BASE/all_reduce_perf --backend proc --algo auto -b 8 -e 8 $it)"
    for a in rd oneshot; do
      echo "n=$n host-new-$a-bound $(CCLAB_BIND_RANKS=1 t $NEW/all_reduce_perf --backend host --algo $a -g $n -b 8 -e 8 $it)"
      echo "n=$n host-base-$a-bound $(CCLAB_BIND_RANKS=1 t $BASE/all_reduce_perf --backend host --algo $a -g $n -b 8 -e 8 $it)"
      [ $n = 4 ] && echo "n=$n host-new-$a-bound-noshares $(CCLAB_LL_SHARES=0 CCLAB_BIND_RANKS=1 t $NEW/all_reduce_perf --backend host --algo $a -g $n -b 8 -e 8 $it)"
    done
  done
done
