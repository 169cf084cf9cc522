#!/bin/bash
# clsact (seed 007): our sch_clsact on a veth, one ingress and one egress
# BPF filter sharing a map, traffic both ways, the qdisc's counters.
. /bench/tests/clsact/lib.sh
say() { echo "clsact: $*"; }
trap topology_down EXIT
topology_up
tc qdisc add dev v0 clsact || { say "cannot add clsact"; exit 1; }
say "$(tc qdisc show dev v0 | grep clsact) (loaded: $(lsmod | awk '$1 ~ /^sch_(clsact|ingress)$/ {print $1}'))"
say "static keys wanted with no filter yet: $(cat $PARAM)"
tc filter add dev v0 ingress bpf da obj "$OBJ" sec ingress &&
	tc filter add dev v0 egress bpf da obj "$OBJ" sec egress || { say "cannot add filters"; exit 1; }
say "static keys wanted with an ingress and an egress filter: $(cat $PARAM), held: $(cat $HELD)"
say "ingress filter: $(tc filter show dev v0 ingress | grep -o 'bpf .*direct-action')"
say "egress filter:  $(tc filter show dev v0 egress | grep -o 'bpf .*direct-action')"
say "5 pings out, 5 replies in: $(pings 5) answered"
udp_from_peer '\x06'
say "a datagram from the peer set the egress priority in the shared map: $(map_get $ST_EG_PRIO)"
map_set $ST_EG_VERDICT 3	# TC_ACT_SHOT + 1
drops=$(qdisc_stat v0 clsact drops)
answered=$(pings 3)
# ping retries a send that fails with ENOBUFS, so there are more drops than pings.
say "egress verdict shot: $answered of 3 answered; drops counted: $(($(qdisc_stat v0 clsact drops) - drops)) (ping retries a dropped send)"
map_set $ST_EG_VERDICT 0
say "BPF map: ingress saw $(map_get $ST_IN_PKTS), egress saw $(map_get $ST_EG_PKTS) packets"
say "qdisc total: $(tc -s qdisc show dev v0 | awk '/clsact/ {f=1} f && /Sent/ {print; exit}')"
tc qdisc del dev v0 clsact
say "static keys after delete: wanted $(cat $PARAM), held $(cat $HELD) (given back after release_delay_ms), then $(keys_held_settled)"
