#!/bin/sh
# Memory is counted per host under mpirun: 2 processes that each need 60% of MemAvailable fit one at a
# time but not together, so the start-of-job agreement refuses the job before any buffer exists (each
# process's own check passes). The proc backend's segment is made large enough (CCLAB_PROC_SHM_BYTES)
# that the per-buffer limit is not what refuses; should the refusal ever be missing, /dev/shm's
# check refuses the segment instead of the machine running out of memory.
# Usage: node_memory.sh MPIRUN... -- ALL_REDUCE_PERF
set -eu
avail_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
[ -n "$avail_kb" ] || { echo "no MemAvailable: skipped"; exit 77; }
# all_reduce_perf -c 0 -g 1 needs send + recv = 2 x size per process: size = 30% of MemAvailable.
size=$(( avail_kb * 1024 * 3 / 10 / 4 * 4 ))
mpirun=""
while [ "$1" != "--" ]; do mpirun="$mpirun $1"; shift; done
shift
exec $mpirun -x CCLAB_PROC_SHM_BYTES=1T -np 2 "$1" -b "$size" -e "$size" -c 0 -w 0 -n 1
