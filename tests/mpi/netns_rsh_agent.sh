#!/bin/sh
# mpirun's remote-shell agent for tests/mpi/netns_hosts.sh (`--mca plm_rsh_agent`): OpenMPI calls it as
# `agent [options] HOST COMMAND...`, as it would call ssh. HOST is one of the emulated hosts' addresses;
# CCLAB_NETNS_MAP ("ADDRESS=NAMESPACE=HOSTNAME ...", set by netns_hosts.sh and inherited through
# mpirun) says which network namespace is that host. The command (orted's, written for a remote shell:
# its words are re-parsed by sh, as ssh's remote shell would) runs inside that namespace with its own
# hostname (a UTS namespace), so each emulated host has its own name, addresses and network stack.
while [ $# -gt 0 ]; do
  case "$1" in
    -*) shift ;;  # ssh-style options (none expected)
    *) break ;;
  esac
done
[ $# -ge 2 ] || { echo "netns_rsh_agent: usage: netns_rsh_agent.sh HOST COMMAND..." >&2; exit 2; }
host="$1"
shift
for entry in $CCLAB_NETNS_MAP; do
  addr="${entry%%=*}"
  rest="${entry#*=}"
  if [ "$addr" = "$host" ]; then
    ns="${rest%%=*}"
    name="${rest#*=}"
    # shellcheck disable=SC2016  # $1 and $* are the inner sh's
    exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$1" && shift && exec sh -c "$*"' agent "$name" "$@"
  fi
done
echo "netns_rsh_agent: host $host is not one of the emulated hosts (CCLAB_NETNS_MAP: $CCLAB_NETNS_MAP)" >&2
exit 255
