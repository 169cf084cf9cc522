#!/bin/bash
# bench-timeout: 600
# Our sch_clsact (seed 007) through real tc, BPF objects and traffic: the
# seed's examples, minors, exclusion, actions on both hooks, tc_index, the
# priority use case, shared BPF state, statistics, static keys.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"
own_netns clsact "$@"
trap 'kill "${HOSTGEN:-}" 2>/dev/null; host ip link del strays1 2>/dev/null; topology_down' EXIT

loaded() { [ -e /sys/module/"$1" ] && echo yes || echo no; }
# fails DESC CMD...: the command must fail; its message is shown.
fails() {
	local desc=$1
	shift
	if "$@" >/tmp/tap.out.$$ 2>&1; then not_ok "$desc"; diag "it succeeded"; else ok "$desc"; diag "$(head -c 200 /tmp/tap.out.$$)"; fi
}

# A test of the other lane may have left a qdisc module loaded, idle: this
# one holds the sch_clsact lock (tests/locks), so no qdisc of another test
# exists now. Unload them (a module goes a moment after its last qdisc).
for m in sch_clsact sch_ingress; do
	for _ in $(seq 25); do
		[ -e /sys/module/$m ] || break
		modprobe -r $m 2>/dev/null || sleep 0.2
	done
done
is "$(loaded sch_clsact) $(loaded sch_ingress)" "no no" "neither qdisc module loaded before the test"
topology_up
# Other processes live in the initial namespace, where v0 is not: one that
# sends toward the peer there (a dummy device routes its address) all
# through the test moves no counter here.
[ "$(readlink /proc/self/ns/net)" != "$(host readlink /proc/self/ns/net)" ] &&
	ok "the test and v0 are in a namespace other than the initial one" ||
	not_ok "the test and v0 are in a namespace other than the initial one"
host ip link del strays1 2>/dev/null	# a killed run's
host ip link add strays1 type dummy
host ip addr add 198.18.70.9/24 dev strays1
host ip link set strays1 up
rm -f /tmp/clsact.strays
nsenter -t 1 -n -m -- bash -c "while :; do
		ping -c1 -W1 -q $B
		echo x >/dev/udp/$B/7777 && echo sent >>/tmp/clsact.strays
		sleep 0.2
	done" >/dev/null 2>&1 &
HOSTGEN=$!

# --- the seed changelog's examples
check "tc qdisc add dev v0 clsact" tc qdisc add dev v0 clsact
is "$(loaded sch_clsact) $(loaded sch_ingress)" "yes no" "the clsact alias loaded our module, not sch_ingress"
is "$(tc qdisc show dev v0 | grep clsact)" "qdisc clsact ffff: parent ffff:fff1 " \
	"tc qdisc show: qdisc clsact ffff: parent ffff:fff1"
is "$(cat $PARAM)" 0 "clsact without filters holds no static key (its hooks cost nothing)"
check "tc filter add dev v0 ingress bpf da obj clsact_state.bpf.o sec ingress" \
	tc filter add dev v0 ingress bpf da obj "$OBJ" sec ingress
is "$(cat $PARAM)" 1 "the first ingress filter took the ingress key"
check "tc filter add dev v0 egress bpf da obj clsact_state.bpf.o sec egress" \
	tc filter add dev v0 egress bpf da obj "$OBJ" sec egress
is "$(cat $PARAM)" 2 "the first egress filter took the egress key"
tc filter show dev v0 ingress | grep -q 'clsact_state.bpf.o:\[ingress\] direct-action' &&
	ok "tc filter show dev v0 ingress lists the ingress program" ||
	not_ok "tc filter show dev v0 ingress lists the ingress program"
tc filter show dev v0 egress | grep -q 'clsact_state.bpf.o:\[egress\] direct-action' &&
	ok "tc filter show dev v0 egress lists the egress program" ||
	not_ok "tc filter show dev v0 egress lists the egress program"
is "$(tc filter show dev v0)" "" "tc filter show dev v0 (root) lists nothing"
is "$(tc filter show dev v0 parent ffff:)" "" "tc filter show dev v0 parent ffff: lists nothing"
is "$(tc filter show dev v0 parent ffff:fff2 | grep -c '\[ingress\]')" 1 "parent ffff:fff2 is the ingress hook"
is "$(tc filter show dev v0 parent ffff:fff3 | grep -c '\[egress\]')" 1 "parent ffff:fff3 is the egress hook"
fails "a filter under ffff:fff4 is refused" tc filter add dev v0 parent ffff:fff4 matchall action pass

# --- traffic both ways, counted by the programs and by the qdisc
is "$(pings 5)" 5 "5 pings through both hooks are answered"
is "$(map_get $ST_EG_PKTS) $(map_get $ST_IN_PKTS)" "5 5" "the programs saw 5 egress and 5 ingress packets"
# (the receive hook counts the length from the network header, as the tree)
is "$(qdisc_stat v0 clsact packets) $(qdisc_stat v0 clsact bytes)" "10 910" \
	"tc -s qdisc: both hooks counted, 5 x 98 bytes out and 5 x 84 in"
is "$(tc class show dev v0 | wc -l)" 0 "no classes listed, as with the tree's module"

# --- the seed's use case: ingress state steers egress priority; band counters
check "root prio qdisc on v0 (pfifo_fast's priomap, with per-band classes)" \
	tc qdisc add dev v0 root handle 1: prio
udp_from_peer '\x06'
is "$(map_get $ST_EG_PRIO)" 6 "a datagram to 7777 told the ingress program: priority 6"
b1=$(class_stat v0 1:1 packets)
b2=$(class_stat v0 1:2 packets)
pings 4 >/dev/null
is "$(($(class_stat v0 1:1 packets) - b1)) $(($(class_stat v0 1:2 packets) - b2))" "4 0" \
	"egress set skb->priority 6 (interactive): 4 packets in band 1:1, none in 1:2"
udp_from_peer '\x00'
map_set $ST_EG_PRIO 0
b2=$(class_stat v0 1:2 packets)
pings 3 >/dev/null
is "$(($(class_stat v0 1:2 packets) - b2))" 3 "priority left alone: band 1:2 (best effort)"

# --- actions on egress and ingress
d=$(qdisc_stat v0 clsact drops)
n=$(map_get $ST_EG_PKTS)
map_set $ST_EG_VERDICT $((2 + 1))	# TC_ACT_SHOT
is "$(pings 3)" 0 "egress shot: no reply"
n=$(($(map_get $ST_EG_PKTS) - n))
is "$(($(qdisc_stat v0 clsact drops) - d))" "$n" "the qdisc counted a drop for each of the $n packets the program shot"
# (TC_ACT_QUEUED takes the same path in the core, but neither cls_bpf nor
# any action hands it to a clsact hook in 6.12.)
for v in 4:stolen 8:trap; do
	map_set $ST_EG_VERDICT $((${v%%:*} + 1))
	d=$(qdisc_stat v0 clsact drops)
	is "$(pings 2) $(($(qdisc_stat v0 clsact drops) - d))" "0 0" "egress ${v#*:}: consumed, not counted as drops"
done
map_set $ST_EG_VERDICT 0
map_set $ST_IN_VERDICT $((2 + 1))
d=$(qdisc_stat v0 clsact drops)
is "$(pings 2)" 0 "ingress shot: replies dropped"
is "$(($(qdisc_stat v0 clsact drops) - d))" 2 "the qdisc counted 2 drops"
map_set $ST_IN_VERDICT 0
is "$(pings 2)" 2 "verdicts back to ok: traffic flows"

# redirect: egress of v0 to a dummy, with bpf_redirect and with mirred
modprobe dummy
ip link add red0 type dummy && sysctl -qw net.ipv6.conf.red0.disable_ipv6=1 && ip link set red0 up
map_set $ST_REDIRECT_IFINDEX "$(cat /sys/class/net/red0/ifindex)"
map_set $ST_EG_VERDICT $((7 + 1))	# TC_ACT_REDIRECT
r=$(cat /sys/class/net/red0/statistics/tx_packets)
pings 3 >/dev/null
is "$(($(cat /sys/class/net/red0/statistics/tx_packets) - r))" 3 "egress bpf_redirect: 3 packets left by red0"
map_set $ST_EG_VERDICT 0
check "egress mirred redirect filter (prio 1, before the BPF one)" \
	tc filter add dev v0 egress prio 1 matchall action mirred egress redirect dev red0
r=$(cat /sys/class/net/red0/statistics/tx_packets)
pings 2 >/dev/null
is "$(($(cat /sys/class/net/red0/statistics/tx_packets) - r))" 2 "egress mirred redirect: 2 packets left by red0"
tc filter del dev v0 egress prio 1
check "ingress mirred redirect to red0" \
	tc filter add dev v0 ingress prio 1 matchall action mirred egress redirect dev red0
r=$(cat /sys/class/net/red0/statistics/tx_packets)
is "$(pings 2)" 0 "ingress redirect: the replies went to red0"
is "$(($(cat /sys/class/net/red0/statistics/tx_packets) - r))" 2 "2 packets left by red0"
tc filter del dev v0 ingress prio 1

# --- ok sets tc_index from the class id; a root filter reads it
tc filter add dev v0 parent 1: bpf obj "$OBJ" sec classify
tc filter add dev v0 egress prio 1 matchall classid :3 action ok
b=$(class_stat v0 1:3 packets)
pings 2 >/dev/null
is "$(($(class_stat v0 1:3 packets) - b))" 2 "egress matchall classid :3 action ok: tc_index 3, prio band 1:3"
tc filter del dev v0 egress prio 1
# reclassify at the hook restarts classification, and past the loop limit
# the core drops (tcf_classify); tc_run would set tc_index as for ok.
tc filter add dev v0 egress prio 1 matchall classid :2 action reclassify
d=$(qdisc_stat v0 clsact drops)
is "$(pings 2)" 0 "egress matchall action reclassify: looped, then dropped"
[ "$(($(qdisc_stat v0 clsact drops) - d))" -ge 2 ] && ok "counted as drops" || not_ok "counted as drops"
tc filter del dev v0 egress prio 1
tc qdisc del dev v0 root

# --- egress hook before any root qdisc, without its lock: pfifo_fast, mq
# (v0 has 4 tx queues) and noqueue (veth's default)
for root in pfifo_fast mq noqueue; do
	tc qdisc del dev v0 root 2>/dev/null	# back to veth's noqueue
	[ $root = noqueue ] || tc qdisc add dev v0 root handle 2: $root
	n=$(map_get $ST_EG_PKTS)
	pings 3 >/dev/null
	is "$(($(map_get $ST_EG_PKTS) - n)) $(tc qdisc show dev v0 | grep -c "qdisc $root")" "3 1" \
		"egress filter runs with root qdisc $root"
done

# --- exclusion, parents, bad input
fails "ingress on a device with clsact is refused" tc qdisc add dev v0 ingress
fails "clsact as root qdisc is refused" tc qdisc add dev red0 root clsact
fails "ingress as root qdisc is refused" tc qdisc add dev red0 root ingress
tc qdisc add dev red0 root handle 1: prio
fails "clsact under class 1:1 of a prio qdisc is refused" tc qdisc add dev red0 parent 1:1 clsact
fails "ingress under class 1:1 of a prio qdisc is refused" tc qdisc add dev red0 parent 1:1 ingress
tc qdisc del dev red0 root
fails "a second clsact (exclusive add) is refused" tc qdisc add dev v0 clsact
fails "tc with an unknown clsact option is refused" tc qdisc add dev red0 clsact foo
fails "ingress_block 0 is refused" tc qdisc add dev red0 ingress_block 0 clsact
is "$(tc qdisc show dev red0 | grep -cE 'clsact|ingress')" 0 "after all that, red0 has neither"

# --- ingress accepts filters on any minor
check "tc qdisc add dev red0 ingress" tc qdisc add dev red0 ingress
check "ingress: a filter under ffff:1234" tc filter add dev red0 parent ffff:1234 matchall action pass
check "ingress: a filter under ffff:" tc filter add dev red0 parent ffff: matchall action pass
fails "clsact on a device with ingress is refused" tc qdisc add dev red0 clsact
is "$(cat $PARAM)" 3 "static keys held: 2 for clsact on v0, 1 for ingress on red0"
tc filter add dev red0 parent ffff: chain 1 matchall action pass
tc filter del dev red0 parent ffff: prio 49152
is "$(tc filter show dev red0 parent ffff: | grep -c 'matchall chain 0 handle') $(cat $PARAM)" "1 3" \
	"one filter left on red0's chain 0: its key still held"
tc filter del dev red0 parent ffff: chain 0
is "$(tc filter show dev red0 parent ffff: | grep -c 'matchall chain 1 handle') $(cat $PARAM)" "1 2" \
	"red0's chain 0 emptied: its key released (chain 1 alone is never run)"

# --- shared blocks
check "clsact with ingress_block 21 egress_block 22 on red1" bash -c \
	'ip link add red1 type dummy && tc qdisc add dev red1 ingress_block 21 egress_block 22 clsact'
check "a filter on block 21" tc filter add block 21 matchall action drop
is "$(tc qdisc show dev red1 | grep -o 'ingress_block 21 egress_block 22')" "ingress_block 21 egress_block 22" \
	"tc qdisc show reports both block indexes"
is "$(tc filter show block 21 | grep -c 'matchall chain 0 handle')" 1 "tc filter show block 21 lists it"
is "$(cat $PARAM)" 3 "block 21's filter: red1's ingress key, not its egress one"
check "clsact on red2 binding block 21, which has a filter" bash -c \
	'ip link add red2 type dummy && tc qdisc add dev red2 ingress_block 21 clsact'
is "$(cat $PARAM)" 4 "red2 took its ingress key when it bound the block"
tc filter del block 21
is "$(cat $PARAM)" 2 "block 21 emptied: both its qdiscs released their keys"
tc filter add block 21 matchall action pass
is "$(cat $PARAM)" 4 "a filter on block 21 again: both take their keys"
ip link del red2
is "$(cat $PARAM)" 3 "red2 deleted with the block in use: its key released, red1's kept"

# --- teardown: keys released with the last qdisc
tc qdisc del dev v0 clsact
tc qdisc del dev red0 ingress
ip link del red1
ip link del red0
is "$(cat $PARAM)" 0 "all qdiscs gone: no static key wanted"
is "$(keys_held_settled)" 0 "and, after the release delay, none held"
topology_down
check "sch_clsact unloads" modprobe -r sch_clsact
kill "$HOSTGEN"
wait "$HOSTGEN" 2>/dev/null
n=$(grep -c . /tmp/clsact.strays 2>/dev/null)
[ "${n:-0}" -gt 0 ] && ok "the initial namespace's sender sent all along ($n datagrams toward $B)" ||
	not_ok "the initial namespace's sender sent all along (no datagram)"
done_testing
