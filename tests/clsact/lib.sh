# shellcheck shell=bash
# Topology and helpers for the clsact tests and demo: a veth pair, v0 in
# this namespace and v1 in netns "peer", static neighbours and no IPv6, so
# that the only packets are the ones a test sends.
CLSACT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OBJ=$CLSACT_DIR/clsact_state.bpf.o
PIN=/sys/fs/bpf/tc/globals/lk45_state
PARAM=/sys/module/sch_clsact/parameters/keys_held
A=198.18.70.1
B=198.18.70.2

# Map slots (clsact_state.bpf.c)
ST_IN_PKTS=0 ST_EG_PKTS=1 ST_EG_PRIO=2 ST_IN_VERDICT=3 ST_EG_VERDICT=4 ST_REDIRECT_IFINDEX=5

topology_up() {
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	modprobe veth
	ip netns add peer
	ip link add v0 numtxqueues 4 numrxqueues 4 type veth peer name v1 \
		numtxqueues 4 numrxqueues 4 netns peer
	sysctl -qw net.ipv6.conf.v0.disable_ipv6=1
	ip netns exec peer sysctl -qw net.ipv6.conf.v1.disable_ipv6=1
	ip addr add $A/24 dev v0
	ip -n peer addr add $B/24 dev v1
	ip link set v0 up
	ip -n peer link set v1 up
	ip -n peer link set lo up
	ip neigh replace $B lladdr "$(ip -n peer -br link show v1 | awk '{print $3}')" dev v0 nud permanent
	ip -n peer neigh replace $A lladdr "$(ip -br link show v0 | awk '{print $3}')" dev v1 nud permanent
}

topology_down() {
	ip link del v0 2>/dev/null
	ip netns del peer 2>/dev/null
	rm -f $PIN
}

# map_set SLOT VALUE / map_get SLOT: the shared map, through bpftool.
map_set() {
	bpftool map update pinned $PIN key "$(le32 "$1")" value "$(le64 "$2")"
}
map_get() {
	bpftool -j map lookup pinned $PIN key "$(le32 "$1")" |
		python3 -c 'import json,sys; v=json.load(sys.stdin)["value"]; print(int.from_bytes(bytes(int(x,16) for x in v),"little"))'
}
le32() { printf '%d %d %d %d' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)); }
le64() { echo "$(le32 $(($1 & 0xffffffff))) $(le32 $(($1 >> 32)))"; }

# class_stat DEV CLASSID FIELD: packets|bytes|dropped of a class, from tc -s -j.
class_stat() {
	tc -s -j class show dev "$1" | python3 -c '
import json, sys
for c in json.load(sys.stdin):
    if c.get("handle") == sys.argv[1]:
        print(c["stats"][sys.argv[2]]); break
else:
    print("none")' "$2" "$3"
}

# qdisc_stat DEV KIND FIELD: the same for the (first) qdisc of KIND.
qdisc_stat() {
	tc -s -j qdisc show dev "$1" | python3 -c '
import json, sys
for q in json.load(sys.stdin):
    if q.get("kind") == sys.argv[1]:
        print(q[sys.argv[2]]); break
else:
    print("none")' "$2" "$3"
}

# pings N: N echo requests v0 -> peer, 0.05 s apart; prints the replies.
pings() {
	ping -q -c "$1" -i 0.05 -W 1 $B 2>/dev/null | awk '/received/ {print $4}'
}

# udp_from_peer PAYLOAD: one datagram peer -> v0 port 7777.
udp_from_peer() {
	printf "$1" | ip netns exec peer socat -u - UDP4-SENDTO:$A:7777
}
