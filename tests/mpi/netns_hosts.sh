#!/usr/bin/env bash
# Real "hosts" on one machine: K network namespaces, each with its own network stack, hostname, one
# veth interface and an address (inside the namespaces only: the machine's own namespace gets no
# address, route or interface), joined by a bridge in a head namespace where mpirun runs. mpirun starts
# one orted per host through tests/mpi/netns_rsh_agent.sh (its ssh), so MPI sees K nodes and OpenMPI's
# TCP transport carries every message between them over the veths. Runs all_reduce_perf (the process
# backend) with P processes per host and checks:
#   - mpirun ends with status 0 and the table says "Out of bounds values : 0 OK" (#wrong 0 everywhere);
#   - the "Using devices" block puts rank r on host cclab-h<r/P>, node r/P, and the header says K nodes;
#   - each host's veth sent and received at least CALLS x BYTES (CALLS = 2 x (warm-up + iterations + 1
#     check)): any allreduce carries at least BYTES each way across a node's boundary per call, since
#     every element of the node's result needs data from the others and theirs from it. So the data
#     really crossed the network stack, not shared memory or loopback.
# Namespaces are named after this script's pid (parallel runs do not collide) and removed on every exit
# path (trap); the run is bounded by --limit. Where the machine cannot make namespaces (no ip, no
# CAP_NET_ADMIN/CAP_SYS_ADMIN, no veth or bridge support) it exits 77 with one line (ctest: skipped).
#
# usage: netns_hosts.sh [--hosts K] [--per-host P] [--bytes S] [--algo A] [--limit SEC] [--env NAME=VALUE]... MPIRUN ALL_REDUCE_PERF
set -uo pipefail

hosts=2 per_host=2 bytes=$(((4 << 20) + 12)) algo=ring limit=90  # 1048579 floats: not a power of two
warmup=1 iters=2
env_flags=()
usage() { echo "usage: netns_hosts.sh [--hosts K] [--per-host P] [--bytes S] [--algo A] [--limit SEC] [--env NAME=VALUE]... MPIRUN ALL_REDUCE_PERF" >&2; exit 2; }
number() { [[ "$2" =~ ^[1-9][0-9]*$ ]] || { echo "netns_hosts: $1 wants a positive whole number, got '$2'" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) [ $# -ge 2 ] || usage; number "$1" "$2"; hosts=$2; shift 2 ;;
    --per-host) [ $# -ge 2 ] || usage; number "$1" "$2"; per_host=$2; shift 2 ;;
    --bytes) [ $# -ge 2 ] || usage; number "$1" "$2"; bytes=$2; shift 2 ;;
    --algo) [ $# -ge 2 ] || usage; algo=$2; shift 2 ;;
    --limit) [ $# -ge 2 ] || usage; number "$1" "$2"; limit=$2; shift 2 ;;
    --env)  # an environment variable for every rank (e.g. CCLAB_PROC_TRANSPORT=mpi)
      [[ $# -ge 2 && "$2" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || { echo "netns_hosts: --env wants NAME=VALUE" >&2; exit 2; }
      export "${2?}"; env_flags+=(-x "${2%%=*}"); shift 2 ;;
    -h|--help) usage ;;
    -*) echo "netns_hosts: unknown flag $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -eq 2 ] || usage
mpirun=$1 perf=$2
(( hosts >= 2 && hosts <= 200 )) || { echo "netns_hosts: --hosts must be 2..200" >&2; exit 2; }
[ -x "$perf" ] || { echo "netns_hosts: $perf is not an executable" >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
agent="$here/netns_rsh_agent.sh"

skip() { echo "netns_hosts: SKIPPED: $*" >&2; exit 77; }
command -v ip >/dev/null || skip "no 'ip' command (iproute2)"
command -v unshare >/dev/null || skip "no 'unshare' command (util-linux)"
command -v timeout >/dev/null || skip "no 'timeout' command (coreutils)"

prefix="cclab-nh-$$"  # namespaces: <prefix>-head, <prefix>-h0 ...
head="$prefix-head"
subnet=10.77.0
made=()
work="${TMPDIR:-/tmp}/cclab-nh-$$"  # hostfile, output, OpenMPI's session directories
runner=""
cleanup() {
  local ns i
  if [ -n "$runner" ] && kill -0 "$runner" 2>/dev/null; then
    # Interrupted: timeout passes SIGTERM on to mpirun, which ends its job (the ranks' handlers remove
    # their shared segments); then anything left in our namespaces is killed.
    kill -TERM "$runner" 2>/dev/null
    for ((i = 0; i < 50; ++i)); do kill -0 "$runner" 2>/dev/null || break; sleep 0.1; done
    echo "netns_hosts: interrupted; the run's last output:" >&2
    tail -n 20 "$work/out" >&2
  fi
  stop_namespaces "${made[@]}"
  rm -rf "$work"
}
# Ends whatever still runs in the given namespaces (SIGTERM, so ranks remove their shared segments;
# SIGKILL after 3 s), then removes the namespaces (their veths and bridge go with them).
ns_pids() { local ns; for ns in "$@"; do ip netns pids "$ns" 2>/dev/null; done; }
stop_namespaces() {
  local ns i pids=()
  mapfile -t pids < <(ns_pids "$@")
  ((${#pids[@]})) && kill -TERM "${pids[@]}" 2>/dev/null
  for ((i = 0; i < 30; ++i)); do mapfile -t pids < <(ns_pids "$@"); ((${#pids[@]})) || break; sleep 0.1; done
  ((${#pids[@]})) && kill -KILL "${pids[@]}" 2>/dev/null
  for ns in "$@"; do ip netns del "$ns" 2>/dev/null; done
  return 0
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# What a run killed by SIGKILL (no trap) left is removed once its script is gone: its namespaces
# (and what still runs in them) and its directory.
for pid in $( (ip netns list 2>/dev/null | awk '{print $1}'; ls "${TMPDIR:-/tmp}") | sed -n 's/^cclab-nh-\([0-9][0-9]*\).*/\1/p' | sort -u); do
  grep -qs netns_hosts "/proc/$pid/cmdline" && continue
  mapfile -t stale < <(ip netns list 2>/dev/null | awk '{print $1}' | grep "^cclab-nh-$pid-")
  stop_namespaces "${stale[@]}"
  rm -rf "${TMPDIR:-/tmp}/cclab-nh-$pid"
done

setup() {  # one line per step; a failure here is the machine's (skip), not the test's
  local out
  if ! out=$("$@" 2>&1); then skip "'$*' failed: ${out//$'\n'/ } (needs root or CAP_NET_ADMIN + CAP_SYS_ADMIN, veth and bridge support)"; fi
}
addns() { setup ip netns add "$1"; made+=("$1"); setup ip -n "$1" link set lo up; }
addns "$head"
setup ip -n "$head" link add br0 type bridge
setup ip -n "$head" addr add "$subnet.1/24" dev br0
setup ip -n "$head" link set br0 up
if ! rm -rf "$work" || ! mkdir -m 700 "$work"; then echo "netns_hosts: cannot make $work" >&2; exit 1; fi
map=""
for ((h = 0; h < hosts; ++h)); do
  ns="$prefix-h$h" addr="$subnet.$((h + 2))"
  addns "$ns"
  setup ip link add name eth0 netns "$ns" type veth peer name "h$h" netns "$head"
  setup ip -n "$head" link set "h$h" master br0 up
  setup ip -n "$ns" addr add "$addr/24" dev eth0
  setup ip -n "$ns" link set eth0 up
  echo "$addr slots=$per_host" >>"$work/hostfile"
  map="$map $addr=$ns=cclab-h$h"
done
setup ip netns exec "$prefix-h0" unshare --uts true

counter() { ip netns exec "$1" cat "/sys/class/net/eth0/statistics/$2"; }
declare -a tx0 rx0
for ((h = 0; h < hosts; ++h)); do tx0[h]=$(counter "$prefix-h$h" tx_bytes); rx0[h]=$(counter "$prefix-h$h" rx_bytes); done

np=$((hosts * per_host))
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
echo "netns_hosts: $hosts hosts (namespaces $prefix-h0..h$((hosts - 1)), $subnet.2..$((hosts + 1)) on a bridge in $head), $per_host processes each, $algo allreduce of $bytes bytes" >&2
export CCLAB_NETNS_MAP="${map# }"
set -x
timeout -k 5 "$limit" ip netns exec "$head" "$mpirun" "${root[@]}" --oversubscribe --bind-to none \
  --hostfile "$work/hostfile" -np "$np" "${env_flags[@]}" \
  --mca plm_rsh_agent "$agent" --mca plm_rsh_no_tree_spawn 1 --mca orte_tmpdir_base "$work" \
  --mca btl tcp,vader,self --mca btl_tcp_if_include "$subnet.0/24" --mca oob_tcp_if_include "$subnet.0/24" \
  "$perf" --algo "$algo" -b "$bytes" -e "$bytes" -w "$warmup" -n "$iters" --timeout 20000 >"$work/out" 2>&1 &
{ runner=$!; set +x; } 2>/dev/null
started=$SECONDS
wait "$runner"  # in the background so that a signal to this script runs the trap at once
rc=$?
took=$((SECONDS - started))
runner=""
cat "$work/out"
fail() { echo "netns_hosts: FAILED: $*" >&2; exit 1; }
if ((rc == 124 || rc == 137)) && ((took >= limit)); then fail "mpirun did not end within $limit s"; fi
[ $rc -eq 0 ] || fail "mpirun exited with status $rc"
grep -q "^# Out of bounds values : 0 OK" "$work/out" || fail "no '# Out of bounds values : 0 OK' line"
grep -q "processes on $hosts nodes" "$work/out" || fail "the header does not say $hosts nodes"
for ((r = 0; r < np; ++r)); do
  h=$((r / per_host))
  grep -Eq "^# +Rank +$r Group +0 pid [0-9]+ on cclab-h$h node $h " "$work/out" ||
    fail "rank $r is not listed on host cclab-h$h, node $h"
done
calls=$((2 * (warmup + iters + 1)))
need=$((calls * bytes))
for ((h = 0; h < hosts; ++h)); do
  tx=$(($(counter "$prefix-h$h" tx_bytes) - tx0[h]))
  rx=$(($(counter "$prefix-h$h" rx_bytes) - rx0[h]))
  echo "netns_hosts: host cclab-h$h eth0 sent $tx bytes, received $rx bytes (at least $need: $calls calls x $bytes)"
  ((tx >= need && rx >= need)) || fail "host cclab-h$h's veth carried less than $need bytes each way"
done
echo "netns_hosts: OK: $np processes on $hosts namespace hosts, #wrong 0, the data crossed the veths"
