#!/bin/bash
# bench-timeout: 300
# An ingress qdisc bound to shared block 7, which holds a filter, replaced
# over raw rtnetlink (NLM_F_CREATE | NLM_F_REPLACE, handle 0) by a clsact
# qdisc that binds the same block. The new qdisc publishes its mini_Qdisc
# to the device's hook while it is set up; the old one's teardown must not
# withdraw it, or the block's filters stop running while the hook's static
# key stays held. Counted by the filter's action for 5 answered pings
# before and after the replace, with our module, then with the tree's
# sch_ingress in the same boot.
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
	out=$($NL -r -H 0:0 -i 7 v0 clsact)
	is "${out%%:*}" OK "$mod: ingress replaced by clsact on the same block"
	is "$(tc qdisc show dev v0 | grep -c 'qdisc clsact ffff: .*ingress_block 7')" 1 \
		"$mod: the device has the clsact qdisc on block 7"
	is "$(pings 5)" 5 "$mod: 5 more pings answered"
	n=$(($(block_pkts) - 5))
	if [ $mod = sch_clsact ]; then
		is "$n" 5 "ours: the block's filter still counts every reply after the replace"
		is "$(cat $PARAM)" 1 "ours: still one static key held, now the new qdisc's"
	else
		ok "tree's sch_ingress: the block's filter counted $n of 5 replies after the replace # informational"
	fi
	check "$mod: delete the clsact qdisc" tc qdisc del dev v0 clsact
	[ $mod = sch_clsact ] && is "$(cat $PARAM)" 0 "ours: no static key held after the delete"
done
check "the tree's sch_ingress unloads" modprobe -r sch_ingress
done_testing
