#!/bin/bash
# bench-timeout: 600
# The tc hooks' static keys, counted in the running kernel (static_key
# reads them through /proc/kcore), for the tree's sch_ingress and for ours
# in the same boot. With the series in patches/sched, an ingress or clsact
# qdisc takes a hook's key only while chain 0 of its block has filters,
# one reference per qdisc and direction, and a key goes off a second after
# its last reference only where the kernel patches static keys into its
# text (CONFIG_JUMP_LABEL: the perf kernel, Debian's). On a kernel without
# the series (make stock-check) the tree's qdiscs hold the keys for as long
# as they exist, and ours still takes them only with filters. Then the
# kernel's own selftest net/tc_ingress_filters.py with the tree's module:
# filters run from the first packet after they are added, whenever that is.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"
own_netns clsact "$@"
SK=$CLSACT_DIR/static_key
KST=/bench/selftests/net
SERIES=0	# the bench kernel carries patches/, Debian's does not
case $(uname -r) in *-lk45) SERIES=1 ;; esac
# the core's keys go off a second after their last reference with the
# series, and only with CONFIG_JUMP_LABEL (without it a key is a counter)
DEFERRED=0
[ $SERIES = 1 ] && grep -qw jump_label_update_timeout /proc/kallsyms && DEFERRED=1
# ours holds tcf_sw_enabled_key with each hook key where the core does not
# defer it (see modules/sch_clsact/Kbuild)
OURS_SW=$((1 - SERIES))

cleanup() {
	tc qdisc del dev v0 clsact 2>/dev/null
	tc qdisc del dev v0 ingress 2>/dev/null
	ip link del d1 2>/dev/null
	topology_down
}
trap cleanup EXIT

# keys: "INGRESS EGRESS SW", the three keys' reference counts
keys() { "$SK" ingress_needed_key egress_needed_key tcf_sw_enabled_key | awk '{ printf "%s%s", s, $2; s = " " }'; }
filter() { tc filter "$1" block "$2" protocol ip pref 1 matchall ${3:+action pass}; }

if ! out=$("$SK" ingress_needed_key 2>&1); then
	skip "the hooks' static keys" "cannot read them: $out"
	done_testing
fi
modprobe dummy && modprobe veth && modprobe cls_matchall && modprobe act_gact
modprobe -r sch_clsact sch_ingress 2>/dev/null
topology_up
# A test before this one may leave a release pending.
is_within 10 "0 0 0" "no hook key held before the test" keys

for mod in sch_ingress sch_clsact; do
	who=$mod
	[ $mod = sch_clsact ] && who=ours
	check "$who: load" modprobe --ignore-install $mod
	# ours gives a key back release_delay_ms after it is no longer
	# wanted, the patched core a second after its last reference
	settle=0
	{ [ $who = ours ] || [ $DEFERRED = 1 ]; } && settle=1
	# empty: no key; the tree's without the series holds both
	check "$who: an empty clsact qdisc on v0" tc qdisc add dev v0 ingress_block 7 egress_block 9 clsact
	want="0 0 0"
	[ $who = sch_ingress ] && [ $SERIES = 0 ] && want="1 1 0"
	is "$(keys)" "$want" "$who: empty clsact qdisc: hook keys $want"

	check "$who: a filter on the ingress block" filter add 7 pass
	[ $who = ours ] && sw=$((1 + OURS_SW)) || sw=1
	want="1 0 $sw"
	[ $who = sch_ingress ] && [ $SERIES = 0 ] && want="1 1 1"
	is "$(keys)" "$want" "$who: an ingress filter: keys $want"
	check "$who: a filter on the egress block" filter add 9 pass
	[ $who = ours ] && sw=$((2 + 2 * OURS_SW)) || sw=2
	is "$(keys)" "1 1 $sw" "$who: filters in both directions: keys 1 1 $sw"

	# a second device on the same blocks: one reference per qdisc
	ip link add d1 type dummy && ip link set d1 up
	check "$who: d1's clsact qdisc shares blocks 7 and 9" tc qdisc add dev d1 ingress_block 7 egress_block 9 clsact
	[ $who = ours ] && sw=$((2 + 4 * OURS_SW)) || sw=2
	is "$(keys)" "2 2 $sw" "$who: two qdiscs with filters: keys 2 2 $sw"
	# a new qdisc that fails after binding a block with filters (the
	# ingress hook takes its key) gives back what it took
	ip link add d2 type dummy && ip link set d2 up
	out=$(tc qdisc add dev d2 ingress_block 7 egress_block 7 clsact 2>&1)
	is "$?:$(grep -c 'block dev insert failed' <<<"$out")" "2:1" "$who: a clsact with one block for both directions is refused (EBUSY)"
	is_within $((settle * 10)) "2 2 $sw" "$who: after the refused request: keys 2 2 $sw" keys
	ip link del d2
	check "$who: d1's qdisc deleted" tc qdisc del dev d1 clsact
	ip link del d1
	[ $who = ours ] && sw=$((2 + 2 * OURS_SW)) || sw=2
	is_within $((settle * 10)) "1 1 $sw" "$who: d1's references given back: keys 1 1 $sw" keys

	# filters deleted: the keys go (after the delay where there is one)
	printf 'filter del block %s protocol ip pref 1 matchall\n' 7 9 >/tmp/hook_keys.batch
	# ours: a delay long enough to be seen on a busy guest
	[ $who = ours ] && echo 5000 >/sys/module/sch_clsact/parameters/release_delay_ms
	t0=${EPOCHREALTIME/./}
	check "$who: both filters deleted" tc -b /tmp/hook_keys.batch
	now=$(keys)
	ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
	want="0 0 0"
	[ $who = sch_ingress ] && [ $SERIES = 0 ] && want="1 1 0"
	if [ $settle = 0 ]; then
		:
	elif [ $who = ours ] || [ $ms -lt 1000 ]; then
		is "${now% *}" "1 1" "$who: filters deleted: the hook keys stay for the delay (read after $ms ms)"
	else
		skip "$who: filters deleted: the hook keys stay for the delay" "read only after $ms ms"
	fi
	is_within $((settle * 10)) "$want" "$who: filters deleted: keys $want" keys
	[ $who = ours ] && echo 1000 >/sys/module/sch_clsact/parameters/release_delay_ms

	# a loop of filter changes on the empty qdisc
	for _ in $(seq 300); do
		echo "filter add block 7 protocol ip pref 1 matchall action pass"
		echo "filter del block 7 protocol ip pref 1 matchall"
	done >/tmp/hook_keys.batch
	check "$who: 300 filter add/delete pairs in one tc batch" tc -b /tmp/hook_keys.batch
	is_within $((settle * 10)) "$want" "$who: after the loop: keys $want" keys
	check "$who: qdisc deleted" tc qdisc del dev v0 clsact
	is_within $((settle * 10)) "0 0 0" "$who: qdisc deleted: no key held" keys

	# the kernel's selftest, with the tree's module it was written for
	# (ours: test_clsact_key_churn counts packets through a filter added back
	# while its key is still held)
	[ $who = sch_ingress ] && (cd $KST && timeout --foreground -k 5 300 python3 ./tc_ingress_filters.py) >/results/tc_ingress_filters.$who.log 2>&1
	[ $who = sch_ingress ] && st=$(sed -nE 's/^not ok [0-9]+ tc_ingress_filters\.([a-z_]+).*/\1 fail/p
		s/^ok [0-9]+ tc_ingress_filters\.([a-z_]+)$/\1 pass/p' /results/tc_ingress_filters.$who.log | sort | tr '\n' ' ')
	if [ $who = sch_ingress ]; then
		is "$st" "test_clsact_filters_run pass test_ingress_filters_run pass test_shared_block_filters_run pass " \
			"$who: the kernel's selftest net/tc_ingress_filters.py passes (log: /results/tc_ingress_filters.$who.log)"
		is_within $((settle * 10)) "0 0 0" "$who: after the selftest: no key held" keys
	fi
	check "$who: unload" modprobe -r $mod
done

# An empty qdisc costs nothing only while nothing else holds the hook's
# key: a tcx program on another device holds it itself.
BPFFS=/run/hook_keys_bpf	# bpffs of this test's own mount namespace
mkdir -p $BPFFS && mount -t bpf bpf $BPFFS
ip link add d3 type dummy && ip link set d3 up
check "a tcx program on d3's ingress hook" "$CLSACT_DIR/tcx_attach" d3 ingress $BPFFS/tcx_in
is "$(keys)" "1 0 0" "tcx on d3: the ingress key held, by tcx"
check "the tree's sch_ingress: load" modprobe --ignore-install sch_ingress
check "an empty clsact qdisc on v0" tc qdisc add dev v0 clsact
want="1 0 0"
[ $SERIES = 0 ] && want="2 1 0"
is "$(keys)" "$want" "with tcx on d3, v0's empty clsact: keys $want"
check "v0's clsact deleted" tc qdisc del dev v0 clsact
check "the tcx program detached (its pin removed)" rm $BPFFS/tcx_in
is_within 10 "0 0 0" "tcx gone: no key held" keys
ip link del d3
umount $BPFFS
check "the tree's sch_ingress: unload" modprobe -r sch_ingress
done_testing
