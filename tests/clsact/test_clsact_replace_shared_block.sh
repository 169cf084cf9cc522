#!/bin/bash
# bench-timeout: 300
# An ingress qdisc bound to shared block 7, which holds a filter, replaced
# over raw rtnetlink (NLM_F_CREATE | NLM_F_REPLACE, handle 0) by a clsact
# qdisc that binds the same block. The new qdisc publishes its mini_Qdisc
# to the device's hook while it binds the block; 6.12's core then refuses
# the bind (EBUSY: the device is in the block's ports already) and its
# error path withdraws the hook's pointer, which was the old qdisc's: the
# block's filters stop running while the static key stays held. Counted by
# the filter's action for 5 answered pings before and after the replace,
# with our module, then with the tree's sch_ingress in the same boot.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"
NL=$CLSACT_DIR/qdisc_nl

cleanup() {
	tc qdisc del dev v0 clsact 2>/dev/null
	tc qdisc del dev v0 ingress 2>/dev/null
	topology_down
	modprobe -r sch_ingress 2>/dev/null
}
trap cleanup EXIT
# block_pkts: packets the block's filter action has seen
block_pkts() { tc -s filter show block 7 | awk '/Sent/ {print $4; exit}'; }

modprobe dummy && modprobe veth && modprobe cls_matchall && modprobe act_gact
topology_up
for mod in sch_clsact sch_ingress; do
	modprobe -r sch_clsact sch_ingress 2>/dev/null
	check "$mod: load" modprobe $mod
	check "$mod: ingress qdisc on shared block 7" tc qdisc add dev v0 ingress_block 7 ingress
	check "$mod: a matchall filter on block 7" tc filter add block 7 matchall action pass
	is "$(pings 5)" 5 "$mod: 5 pings answered"
	is "$(block_pkts)" 5 "$mod: the block's filter counted the 5 replies"
	[ $mod = sch_clsact ] && is "$(cat $PARAM)" 1 "ours: one static key held"
	# The core refuses with EBUSY while it holds the old qdisc; either
	# answer must leave the block's filter running on the device's hook.
	out=$($NL -r -H 0:0 -i 7 v0 clsact)
	case ${out%%:*} in OK | EBUSY) ok "$mod: the replace answers ${out%%:*}" ;;
	*) not_ok "$mod: the replace answers $out" ;; esac
	is "$(tc qdisc show dev v0 | grep -cE 'qdisc (ingress|clsact) ffff: .*ingress_block 7')" 1 \
		"$mod: the device has one qdisc on block 7"
	is "$(pings 5)" 5 "$mod: 5 more pings answered"
	n=$(($(block_pkts) - 5))
	if [ $mod = sch_clsact ]; then
		is "$n" 5 "ours: the block's filter still counts every reply after the ${out%%:*} replace"
		is "$(cat $PARAM)" 1 "ours: one static key held"
	else
		ok "tree's sch_ingress: after the ${out%%:*} replace the block's filter counted $n of 5 replies # informational"
	fi
	check "$mod: delete the qdisc" tc qdisc del dev v0 ingress
	[ $mod = sch_clsact ] && is "$(cat $PARAM)" 0 "ours: no static key held after the delete"
done
check "the tree's sch_ingress unloads" modprobe -r sch_ingress
done_testing
