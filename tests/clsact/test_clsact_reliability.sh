#!/bin/bash
# sch_clsact under the upstream fix scenarios, failures half-way through
# init, churn with traffic both ways, and teardown with filters attached;
# each must end in a clean error or a clean teardown (the bench fails the
# run on any kernel report, and scans kmemleak at the end).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"
NL=$CLSACT_DIR/qdisc_nl
trap 'topology_down; ip netns del cve 2>/dev/null' EXIT
fails() {
	local desc=$1
	shift
	if "$@" >/tmp/tap.out 2>&1; then not_ok "$desc"; diag "it succeeded"; else ok "$desc"; diag "$(head -c 200 /tmp/tap.out)"; fi
}
none_on() { [ "$(tc qdisc show dev "$1" | grep -cE 'qdisc (ingress|clsact)')" = 0 ]; }

modprobe sch_clsact && modprobe dummy && modprobe cls_matchall && modprobe act_gact
ip link add d0 type dummy && ip link set d0 up

# --- the fix scenarios (net/sched ingress/clsact hardening, 2023-2024)
fails "ingress under a non-ingress parent: refused" bash -c \
	'tc qdisc add dev d0 root handle 1: prio && tc qdisc add dev d0 parent 1:1 ingress'
fails "clsact under a non-ingress parent: refused" tc qdisc add dev d0 parent 1:2 clsact
tc qdisc del dev d0 root
fails "TC_H_INGRESS as the parent of another qdisc: refused" tc qdisc add dev d0 parent ffff:fff1 handle 2: prio
none_on d0 && ok "nothing left on d0" || not_ok "nothing left on d0"
tc qdisc add dev d0 ingress
tc qdisc add dev d0 root handle 1: prio
fails "regrafting ingress under another parent: refused" tc qdisc replace dev d0 parent 1:1 handle ffff: ingress
fails "changing ingress into clsact: refused" tc qdisc change dev d0 handle ffff: parent ffff:fff1 clsact
is "$(tc qdisc show dev d0 | grep -c 'qdisc ingress ffff:')" 1 "the ingress qdisc is still there, whole"
tc qdisc del dev d0 root
check "replacing ingress by ingress" tc qdisc replace dev d0 ingress
check "replacing ingress by clsact" tc qdisc replace dev d0 clsact
is "$(tc qdisc show dev d0 | grep -c 'qdisc clsact ffff:')" 1 "clsact took its place"
is "$(cat $PARAM)" 2 "static keys: the two of clsact, none left from ingress"
check "replacing clsact by ingress" tc qdisc replace dev d0 ingress
is "$(cat $PARAM)" 1 "static keys: the one of ingress"
tc qdisc del dev d0 ingress

# CVE-2024-41010: ingress with a shared block replaced by clsact, then the
# namespace deleted.
ip netns add cve
ip -n cve link add c0 type dummy
ip -n cve link set c0 up
tc -n cve qdisc add dev c0 ingress_block 1 ingress
tc -n cve filter add block 1 matchall action pass
tc -n cve qdisc replace dev c0 clsact >/tmp/tap.out 2>&1
diag "replace shared-block ingress by clsact: $(head -c 120 /tmp/tap.out)"
tc -n cve qdisc del dev c0 ingress 2>/dev/null
tc -n cve qdisc add dev c0 clsact ingress_block 1 >/dev/null 2>&1
check "delete the netns with the shared block in use" ip netns del cve
sleep 2
ok "the namespace went away without a kernel report (see the console check)"

# --- init failing half-way, at every allocation in turn (fail-nth)
for d in /sys/kernel/debug/failslab; do
	echo N >$d/ignore-gfp-wait && echo 0 >$d/probability && echo 0 >$d/verbose
done
ip link add d1 type dummy
for kind in ingress clsact; do
	n=1 ok_at=0 bad=0 errs=
	while [ $n -le 200 ]; do
		if [ $kind = clsact ]; then out=$($NL d1 $kind $n 31 32); else out=$($NL d1 $kind $n 31); fi
		if [ "$out" = OK ]; then ok_at=$n; break; fi
		errs+="${out%%:*} "
		none_on d1 || { bad=1; diag "after fail-nth $n ($out): $(tc qdisc show dev d1)"; }
		[ "$(cat $PARAM)" = 0 ] || { bad=1; diag "after fail-nth $n: keys_held $(cat $PARAM)"; }
		n=$((n + 1))
	done
	[ $ok_at -gt 1 ] && [ $bad = 0 ] && ok "$kind init failing at each of its first $((ok_at - 1)) allocations: a clean error, nothing left, no key held" ||
		not_ok "$kind init failing at each allocation (succeeded at $ok_at, bad $bad)"
	diag "errors seen: $(echo $errs | tr ' ' '\n' | sort | uniq -c | tr '\n' ' ')"
	tc qdisc del dev d1 $kind
done
is "$(cat $PARAM)" 0 "no static key held afterwards"

# --- replace and delete while filter requests are in flight (unlocked ops)
tc qdisc add dev d1 clsact
( for i in $(seq 300); do echo "filter add dev d1 ingress prio $((i % 7 + 1)) matchall action pass"
	echo "filter add dev d1 egress prio $((i % 5 + 1)) matchall action drop"
	echo "filter del dev d1 ingress prio $((i % 7 + 1))"; done ) >/tmp/filters.batch
tc -force -batch /tmp/filters.batch >/dev/null 2>&1 &
fpid=$!
for i in $(seq 100); do
	tc qdisc replace dev d1 clsact 2>/dev/null
	tc qdisc del dev d1 clsact 2>/dev/null
	tc qdisc add dev d1 clsact 2>/dev/null
done
wait $fpid
ok "300 filter add/del rounds raced 100 qdisc replace/del/add rounds"
tc qdisc del dev d1 clsact 2>/dev/null
ip link del d1

# --- churn: qdisc and filters added and deleted while traffic flows
topology_up
CYCLES=${CLSACT_CHURN_CYCLES:-10000}
for i in $(seq $CYCLES); do
	echo "qdisc add dev v0 clsact"
	echo "filter add dev v0 ingress prio 1 matchall action pass"
	echo "filter add dev v0 egress prio 1 matchall action ok"
	echo "qdisc del dev v0 clsact"
done >/tmp/churn.batch
ping -f -q -w 600 $B >/tmp/ping-out.txt 2>&1 &
p1=$!
ip netns exec peer ping -f -q -w 600 $A >/tmp/ping-in.txt 2>&1 &
p2=$!
t0=$(date +%s)
tc -batch /tmp/churn.batch >/tmp/churn.out 2>&1
rc=$?
kill -INT $p1 $p2 2>/dev/null
wait $p1 $p2 2>/dev/null
is "$rc" 0 "$CYCLES add/delete cycles of clsact and two filters, in $(($(date +%s) - t0)) s"
diag "traffic meanwhile: out $(grep -o '[0-9]* received' /tmp/ping-out.txt), in $(grep -o '[0-9]* received' /tmp/ping-in.txt)"
none_on v0 && ok "v0 ends without a qdisc" || not_ok "v0 ends without a qdisc"
is "$(pings 3)" 3 "traffic still flows"

# --- netns teardown with filters attached
tc qdisc add dev v0 clsact
tc filter add dev v0 ingress bpf da obj "$OBJ" sec ingress
tc filter add dev v0 egress bpf da obj "$OBJ" sec egress
ip netns exec peer tc qdisc add dev v1 clsact
ip netns exec peer tc filter add dev v1 ingress matchall action pass
pings 3 >/dev/null
check "delete the peer netns with clsact and filters on v1" ip netns del peer
sleep 1
check "delete v0 with clsact and BPF filters" ip link del v0
rm -f $PIN
is "$(cat $PARAM)" 0 "every static key released"
ip link del d0
check "sch_clsact unloads after all of it" modprobe -r sch_clsact
done_testing
