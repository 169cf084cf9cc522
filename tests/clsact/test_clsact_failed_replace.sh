#!/bin/bash
# bench-timeout: 900
# Requests that would replace v0's ingress or clsact qdisc and fail, each
# after the new qdisc has bound a block that already holds filters, over
# raw rtnetlink (tc cannot ask to replace one kind by the other): the
# qdisc that stays must keep every filter running, in both directions, and
# the request must fail with its exact errno and extack. Then a replace
# that succeeds onto such a block must run the new qdisc's filters. With
# our module, then with the tree's sch_ingress, in the same boot.
#
# The failing requests: onto the block v0 already sits on (the device
# cannot join a block's ports twice), a clsact given one block for both
# directions, a rate estimator that cannot start, and a graft refused
# while a filter request holds the old qdisc.
#
# The kernel core decides this, not the module: with the core fix
# (mini_qdisc_pair_attach in the kernel) both must pass every case. On a
# kernel without it (make stock-check) the failing requests lose the
# filters of the qdisc that stays, for the tree's module too: there each
# case asserts that ours loses no more than the tree's.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"
own_netns clsact "$@"
NL=$CLSACT_DIR/qdisc_nl
HOLD=/run/clsact-hold
HOLD_RULE=/run/modprobe.d/clsact-hold.conf	# /etc is read-only in the guest
mkdir -p /run/modprobe.d
FIXED=0
grep -qw mini_qdisc_pair_attach /proc/kallsyms && FIXED=1
KST=/bench/selftests/net
OUT=/results/tc_ingress_replace
ALL_PASS="test_failed_replace_keeps_clsact pass test_failed_replace_keeps_ingress pass test_replace_runs_new_filters pass "
declare -A st

cleanup() {
	rm -f $HOLD $HOLD_RULE
	wait
	del_v0 2>/dev/null
	ip link del d1 2>/dev/null
	topology_down
	modprobe -r sch_ingress cls_basic 2>/dev/null
}
trap cleanup EXIT

# blk_pkts N: packets block N's filter action has seen
blk_pkts() { tc -s filter show block "$1" | awk '/Sent/ {print $4; exit}'; }
del_v0() { tc qdisc del dev v0 ingress 2>/dev/null || tc qdisc del dev v0 clsact; }
# v0_qdisc: "KIND IBLOCK EBLOCK" of v0's ingress or clsact qdisc
v0_qdisc() {
	tc qdisc show dev v0 | awk '/ffff:/ {
		ib = eb = "-"
		for (i = 1; i < NF; i++) {
			if ($i == "ingress_block") ib = $(i + 1)
			if ($i == "egress_block") eb = $(i + 1)
		}
		print $2, ib, eb }'
}

# hold_filter_request: a filter request on v0's qdisc that keeps it (a
# reference) until release_filter_request. The kernel loads cls_basic for
# it with the reference held; modprobe's install rule for cls_basic waits.
hold_filter_request() {
	modprobe -r cls_basic 2>/dev/null
	echo "install cls_basic touch $HOLD.in; while [ -e $HOLD ]; do sleep 0.05; done; modprobe --ignore-install cls_basic" >$HOLD_RULE
	rm -f $HOLD.in && touch $HOLD
	tc filter add dev v0 ingress pref 9 basic action pass >/dev/null 2>&1 &
	local end=$((SECONDS + 20))	# wall clock: under TCG a loop's count means little
	while [ $SECONDS -lt $end ]; do [ -e $HOLD.in ] && return 0; sleep 0.1; done
	return 1
}
release_filter_request() {
	rm -f $HOLD
	wait
	rm -f $HOLD_RULE $HOLD.in
	modprobe -r cls_basic
}

# survives WHO WHAT EXPECT BLOCKS...: after a request that answered EXPECT
# (errno: extack), 5 pings must be counted once by each of BLOCKS'
# filters (ingress replies, egress requests), or on a kernel without the
# core fix no fewer than with the tree's module. Records the count.
declare -A lost
survives() {
	local who=$1 what=$2 expect=$3 out b before=() n=0 got=()
	shift 3
	for b in "$@"; do before+=("$(blk_pkts "$b")"); done
	out=$($NL "${req[@]}" v0 "$kind")
	is "$out" "$expect" "$who: $what: refused"
	is "$(v0_qdisc)" "$keep" "$who: $what: v0 keeps its $keep qdisc"
	is "$(pings 5)" 5 "$who: $what: 5 pings answered"
	for b in "$@"; do got+=($(($(blk_pkts "$b") - before[n]))); n=$((n + 1)); done
	if [ $FIXED = 1 ]; then
		is "${got[*]}" "$(printf '5 %.0s' "$@" | sed 's/ $//')" \
			"$who: $what: block(s) $* count the 5 pings"
	elif [ "$who" = ours ]; then
		lost[$what]="${got[*]}"
	else
		is "$(printf '%s\n' "${lost[$what]}" "${got[*]}" | awk 'NR == 1 { split($0, o) } NR == 2 { for (i = 1; i <= NF; i++) if (o[i] < $i) bad = 1; print bad ? "worse" : "no worse" }')" \
			"no worse" "$what: ours counts ${lost[$what]}, the tree's ${got[*]} (no core fix)"
	fi
}

modprobe dummy && modprobe veth && modprobe cls_matchall && modprobe act_gact
topology_up
# Block 8, shared with the dummy d1, holds a filter: a qdisc that binds it
# publishes a chain head from its init.
ip link add d1 type dummy && ip link set d1 up
diag "core fix present: $FIXED"
for mod in sch_clsact sch_ingress; do
	modprobe -r sch_clsact sch_ingress 2>/dev/null
	check "$mod: load" modprobe --ignore-install $mod
	who=$mod
	[ $mod = sch_clsact ] && who=ours
	check "$who: d1 on shared block 8" tc qdisc add dev d1 ingress_block 8 ingress
	check "$who: a filter on block 8" tc filter add block 8 matchall action pass

	# The qdisc that stays: clsact, blocks 7 (ingress) and 9 (egress).
	check "$who: clsact on blocks 7 and 9" tc qdisc add dev v0 ingress_block 7 egress_block 9 clsact
	check "$who: a filter on block 7" tc filter add block 7 matchall action pass
	check "$who: a filter on block 9" tc filter add block 9 matchall action pass
	keep="clsact 7 9" kind=ingress
	req=(-r -H 0:0 -i 7)
	survives $who "ingress onto block 7" "EBUSY: block dev insert failed" 7 9
	req=(-r -H 0:0 -i 8 -R 4)
	survives $who "ingress on block 8, bad estimator" "EINVAL: Failed to generate new estimator" 7 9
	if hold_filter_request; then
		req=(-r -H 0:0 -i 8)
		survives $who "ingress on block 8, old qdisc held" \
			"EBUSY: Current ingress or clsact Qdisc has ongoing filter requests" 7 9
		release_filter_request
	else
		not_ok "$who: a filter request holds v0's qdisc (modprobe's install rule never ran)"
		release_filter_request
	fi
	check "$who: delete v0's clsact" del_v0

	# The qdisc that stays: ingress, block 7.
	check "$who: ingress on block 7" tc qdisc add dev v0 ingress_block 7 ingress
	# (block 7 went with the clsact, its last user: a new one, empty)
	check "$who: a filter on the new block 7" tc filter add block 7 matchall action pass
	keep="ingress 7 -" kind=clsact
	req=(-r -H 0:0 -i 7 -e 10)
	survives $who "clsact onto block 7" "EBUSY: block dev insert failed" 7
	req=(-r -H 0:0 -i 8 -e 8)
	survives $who "clsact with block 8 both ways" "EBUSY: block dev insert failed" 7
	req=(-r -H 0:0 -i 8 -e 10 -R 4)
	survives $who "clsact on block 8, bad estimator" "EINVAL: Failed to generate new estimator" 7
	check "$who: delete v0's ingress" del_v0

	# A replace that succeeds: the new qdisc's filters run (the old one's
	# have filters, whose teardown withdraws them).
	check "$who: clsact on blocks 11 and 12" tc qdisc add dev v0 ingress_block 11 egress_block 12 clsact
	check "$who: filters on blocks 11 and 12" \
		bash -c 'tc filter add block 11 matchall action pass && tc filter add block 12 matchall action pass'
	before=$(blk_pkts 8)
	is "$($NL -r -H 0:0 -i 8 v0 ingress)" OK "$who: replaced by ingress on block 8"
	is "$(v0_qdisc)" "ingress 8 -" "$who: v0 has its ingress qdisc on block 8"
	is "$(pings 5)" 5 "$who: 5 pings answered"
	n=$(($(blk_pkts 8) - before))
	if [ $FIXED = 1 ] || [ $who = ours ]; then
		is "$n" 5 "$who: block 8's filter counts the 5 replies after the replace"
	else
		diag "tree's sch_ingress without the core fix: block 8's filter counted $n of 5 replies after the replace"
	fi
	[ $who = ours ] && is "$(cat $PARAM)" 2 "ours: two static keys wanted (d1's and v0's ingress hooks)"
	check "$who: delete v0's qdisc" del_v0
	check "$who: delete d1's qdisc" tc qdisc del dev d1 ingress
	[ $who = ours ] && is "$(cat $PARAM)" 0 "ours: no static key wanted after the deletes"

	# The kernel's own selftest of the same, over YNL: its case lines.
	(cd $KST && timeout --foreground -k 5 300 python3 ./tc_ingress_replace.py) >$OUT.$who.log 2>&1
	st[$who]=$(sed -nE 's/^not ok [0-9]+ tc_ingress_replace\.([a-z_]+).*/\1 fail/p
		s/^ok [0-9]+ tc_ingress_replace\.([a-z_]+) # SKIP.*/\1 skip/p
		s/^ok [0-9]+ tc_ingress_replace\.([a-z_]+)$/\1 pass/p' $OUT.$who.log | sort | tr '\n' ' ')
	diag "$who: net/tc_ingress_replace.py: ${st[$who]}"
	is "$(wc -w <<<"${st[$who]}")" 6 "$who: the selftest reported its 3 cases (log: $OUT.$who.log)"
	if [ $FIXED = 1 ]; then
		is "${st[$who]}" "$ALL_PASS" "$who: the kernel's selftest net/tc_ingress_replace.py passes"
	fi
done
if [ $FIXED = 0 ]; then
	worse=$(join <(tr ' ' '\n' <<<"${st[ours]}" | paste - - | sort) \
		<(tr ' ' '\n' <<<"${st[sch_ingress]}" | paste - - | sort) | awk '$2 == "fail" && $3 == "pass"')
	is "$worse" "" "the selftest's cases: ours fails none that the tree's passes (no core fix)"
fi
check "the tree's sch_ingress unloads" modprobe -r sch_ingress
done_testing
