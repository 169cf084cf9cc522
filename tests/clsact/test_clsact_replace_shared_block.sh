#!/bin/bash
# bench-timeout: 400
# An ingress qdisc whose block holds a filter, replaced over raw rtnetlink
# (NLM_F_CREATE | NLM_F_REPLACE, handle 0) by a clsact qdisc bound to a
# shared block that holds filters. The new qdisc publishes its mini_Qdisc
# to the device's hook while it binds its blocks, before the old one is
# destroyed; the old one's teardown must not withdraw it, or the new
# filters stop running while the hook's static key stays held. Counted by
# the filters' actions for 5 answered pings, with our module, then with the
# tree's sch_ingress in the same boot.
#
# Onto the same shared block the replace is refused (EBUSY, "block dev
# insert failed"), and 6.12's core withdraws the old qdisc's pointer on the
# way out (tcf_block_get_ext() publishes the chain head before it checks the
# block's ports): both modules lose the filters. Measured, not asserted.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"
NL=$CLSACT_DIR/qdisc_nl

cleanup() {
	del_v0 2>/dev/null
	ip link del d1 2>/dev/null
	topology_down
	modprobe -r sch_ingress 2>/dev/null
}
trap cleanup EXIT
# block_pkts N: packets block N's filter action has seen
block_pkts() { tc -s filter show block "$1" | awk '/Sent/ {print $4; exit}'; }
# del_v0: delete v0's ingress or clsact qdisc, whichever it has
del_v0() { tc qdisc del dev v0 ingress 2>/dev/null || tc qdisc del dev v0 clsact; }
# one_qdisc BLOCK: whether v0 has one ingress/clsact qdisc, on BLOCK
one_qdisc() { tc qdisc show dev v0 | grep -cE "qdisc (ingress|clsact) ffff: .*ingress_block $1"; }

modprobe dummy && modprobe veth && modprobe cls_matchall && modprobe act_gact
topology_up
for mod in sch_clsact sch_ingress; do
	modprobe -r sch_clsact sch_ingress 2>/dev/null
	check "$mod: load" modprobe --ignore-install $mod
	who=$mod
	[ $mod = sch_clsact ] && who=ours

	# Another block: block 8, shared with dummy d1, has a filter already.
	ip link add d1 type dummy && ip link set d1 up
	check "$mod: d1 on shared block 8" tc qdisc add dev d1 ingress_block 8 ingress
	check "$mod: a matchall filter on block 8" tc filter add block 8 matchall action pass
	check "$mod: v0's ingress qdisc on block 7" tc qdisc add dev v0 ingress_block 7 ingress
	check "$mod: a matchall filter on block 7" tc filter add block 7 matchall action pass
	is "$(pings 5) $(block_pkts 7)" "5 5" "$mod: 5 pings answered, counted on block 7"
	out=$($NL -r -H 0:0 -i 8 v0 clsact)
	is "${out%%:*}" OK "$mod: v0's ingress replaced by clsact on block 8"
	is "$(one_qdisc 8)" 1 "$mod: v0 has its clsact qdisc on block 8"
	is "$(pings 5)" 5 "$mod: 5 more pings answered"
	n=$(block_pkts 8)
	if [ $mod = sch_clsact ]; then
		is "$n" 5 "ours: block 8's filter counts the 5 replies after the replace"
		is "$(cat $PARAM)" 2 "ours: two static keys held (d1's and v0's ingress hooks)"
	else
		ok "tree's sch_ingress: block 8's filter counted $n of 5 replies after the replace # informational"
	fi
	check "$mod: delete v0's qdisc" del_v0
	check "$mod: delete d1" ip link del d1
	[ $mod = sch_clsact ] && is "$(cat $PARAM)" 0 "ours: no static key held after the deletes"

	# The same block: refused, and 6.12's core loses the old filters.
	check "$mod: v0's ingress qdisc on block 7 again" tc qdisc add dev v0 ingress_block 7 ingress
	check "$mod: a matchall filter on the new block 7" tc filter add block 7 matchall action pass
	is "$(pings 5)" 5 "$mod: 5 pings answered"
	before=$(block_pkts 7)
	out=$($NL -r -H 0:0 -i 7 v0 clsact)
	is "${out%%:*}" EBUSY "$mod: replacing it by clsact on the same block 7 is refused"
	is "$(one_qdisc 7)" 1 "$mod: v0 keeps its ingress qdisc on block 7"
	pings 5 >/dev/null
	ok "$who: after the refused replace block 7's filter counted $(($(block_pkts 7) - before)) of 5 replies (6.12's core withdraws the hook pointer) # informational"
	check "$mod: delete v0's qdisc" del_v0
done
check "the tree's sch_ingress unloads" modprobe -r sch_ingress
done_testing
