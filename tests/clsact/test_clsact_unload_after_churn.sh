#!/bin/bash
# bench-timeout: 600
# Churn: clsact and two filters added and deleted CYCLES times while flood
# pings cross the device both ways; then namespaces and devices torn down
# with filters attached, and the module unloaded after all of the clsact
# tests (this file runs last of them). 2,000 cycles: a leaked key or qdisc
# shows after one; races between writers are test_clsact_attack_keys's.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"
own_netns clsact "$@"
CYCLES=${CLSACT_CHURN_CYCLES:-2000}
trap topology_down EXIT
topology_down
modprobe sch_clsact && modprobe cls_matchall && modprobe act_gact
base=$(cat $PARAM)
topology_up
for i in $(seq "$CYCLES"); do
	echo "qdisc add dev v0 clsact"
	echo "filter add dev v0 ingress prio 1 matchall action pass"
	echo "filter add dev v0 egress prio 1 matchall action ok"
	# Half the cycles empty the ingress hook first: its key goes with
	# its last filter; otherwise with the qdisc.
	[ $((i % 2)) = 0 ] && echo "filter del dev v0 ingress prio 1"
	echo "qdisc del dev v0 clsact"
done >/tmp/churn.batch
ping -f -q -w 3000 $B >/tmp/ping-out.txt 2>&1 &
p1=$!
ip netns exec peer ping -f -q -w 3000 $A >/tmp/ping-in.txt 2>&1 &
p2=$!
t0=$(date +%s)
tc -batch /tmp/churn.batch >/tmp/churn.out 2>&1
rc=$?
kill -INT $p1 $p2 2>/dev/null
wait $p1 $p2 2>/dev/null
is "$rc" 0 "$CYCLES add/delete cycles of clsact with two filters, under traffic ($(($(date +%s) - t0)) s)"
[ $rc = 0 ] || diag "$(tail -3 /tmp/churn.out)"
diag "flood pings meanwhile: out $(grep -o '[0-9]* received' /tmp/ping-out.txt), in $(grep -o '[0-9]* received' /tmp/ping-in.txt)"
is "$(tc qdisc show dev v0 | grep -c clsact) $(cat $PARAM)" "0 $base" "no qdisc left, no static key held"
is "$(pings 3)" 3 "traffic still flows"

tc qdisc add dev v0 clsact
tc filter add dev v0 ingress bpf da obj "$OBJ" sec ingress
tc filter add dev v0 egress bpf da obj "$OBJ" sec egress
ip netns exec peer tc qdisc add dev v1 clsact
ip netns exec peer tc filter add dev v1 ingress matchall action pass
ip netns exec peer tc filter add dev v1 egress matchall action pass
pings 3 >/dev/null
check "delete the peer namespace with clsact and filters on v1" ip netns del peer
is_within 20 gone "v0, with clsact and BPF filters, went with its peer" \
	bash -c 'ip link show v0 >/dev/null 2>&1 && echo there || echo gone'
modprobe dummy
ip link add t0 type dummy && ip link set t0 up
tc qdisc add dev t0 clsact
tc filter add dev t0 ingress bpf da obj "$OBJ" sec ingress
tc filter add dev t0 egress bpf da obj "$OBJ" sec egress
check "delete a dummy device with clsact and BPF filters attached" ip link del t0
rm -f $PIN
is "$(cat $PARAM)" "$base" "every static key released"
check "sch_clsact unloads after all of it" modprobe -r sch_clsact
done_testing
