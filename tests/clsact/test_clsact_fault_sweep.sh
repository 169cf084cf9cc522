#!/bin/bash
# bench-timeout: 600
# ingress and clsact init failing half-way: the Nth fault-injection point
# of the request fails, for N = 1..SWEEP (fail-nth, slab allocations). Every
# attempt must end in a clean error or a whole qdisc; after a failure no
# qdisc and no static key may be left (the core destroys a qdisc whose init
# failed: CVE-2026-23413's path). The requests bind shared blocks that
# already have filters (on f1), so init takes the hooks' static keys before
# later steps can fail.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"
NL=$CLSACT_DIR/qdisc_nl
SWEEP=${CLSACT_FAIL_SWEEP:-30}
trap 'ip link del f0 2>/dev/null; ip link del f1 2>/dev/null' EXIT
ip link del f0 2>/dev/null
ip link del f1 2>/dev/null

modprobe sch_clsact && modprobe dummy
base0=$(cat $PARAM)
F=/sys/kernel/debug/failslab
[ -d $F ] || { skip "fault sweep" "no failslab in debugfs"; done_testing; }
echo N >$F/ignore-gfp-wait && echo 0 >$F/probability && echo 0 >$F/verbose
# fail-nth counts every allocation a fault attribute lets fail: page
# allocations stay out of the sweep, whatever an earlier test set there
P=/sys/kernel/debug/fail_page_alloc
[ ! -d $P ] || { echo 0 >$P/probability && echo Y >$P/ignore-gfp-wait && echo 1 >$P/min-order; }
ip link add f0 type dummy
ip link add f1 type dummy
tc qdisc add dev f1 ingress_block 31 egress_block 32 clsact
tc filter add block 31 matchall action pass
tc filter add block 32 matchall action pass
base=$(cat $PARAM)
is "$base" $((base0 + 2)) "f1's clsact, with a filter on each of its shared blocks 31 and 32, holds both keys"
for kind in ingress clsact; do
	args=(-i 31) keys=1
	[ $kind = clsact ] && args+=(-e 32) && keys=2
	fails=0 oks=0 bad=0 errs=
	for n in $(seq "$SWEEP"); do
		out=$($NL -n "$n" "${args[@]}" f0 $kind)
		# Either a whole qdisc or nothing, whatever the answer said (the
		# answer itself can be what failed: no ack, yet a qdisc).
		if tc qdisc show dev f0 | grep -q "qdisc $kind ffff:"; then
			oks=$((oks + 1))
			[ "$(cat $PARAM)" = $((base + keys)) ] ||
				{ bad=1; diag "fail-nth $n ($out): a qdisc, but keys_held $(cat $PARAM)"; }
			tc qdisc del dev f0 $kind
		else
			fails=$((fails + 1))
			errs+="${out%%:*} "
			[ "$out" != OK ] || { bad=1; diag "fail-nth $n: OK but no qdisc"; }
		fi
		[ "$(cat $PARAM)" = "$base" ] || { bad=1; diag "after fail-nth $n: keys_held $(cat $PARAM)"; }
		[ $bad = 0 ] || break
	done
	[ $bad = 0 ] && [ $fails -gt 0 ] && ok "$kind: $n requests with the Nth allocation failing: $fails clean errors, $oks whole qdiscs, nothing half-made" ||
		not_ok "$kind: fail-nth sweep ($fails errors, $oks whole, bad $bad)"
	diag "$kind errors: $(echo "$errs" | tr ' ' '\n' | grep . | sort | uniq -c | tr -s ' \n' ' ')"
done
check "clsact still works afterwards" tc qdisc add dev f0 clsact
tc qdisc del dev f0 clsact
ip link del f0
is "$(cat $PARAM)" "$base" "no static key held but f1's"
ip link del f1
done_testing
