#!/bin/bash
# bench-timeout: 600
# The hooks' static keys under filter and qdisc churn. A key is taken as
# soon as a filter needs it and given back release_delay_ms after the last
# one went, so a loop of add/delete changes it a bounded number of times;
# with release_delay_ms=0 every empty<->non-empty change is a key change.
# Filters still run across the transitions, and unloading the module with a
# release pending gives the key back.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"
own_netns clsact "$@"
K=/sys/module/sch_clsact/parameters
N=${CLSACT_CHURN:-1000}

cleanup() { ip link del kc0 2>/dev/null; }
trap cleanup EXIT
# batch FILE PAIRS: PAIRS egress filter add/delete pairs on kc0
batch() {
	local i
	for i in $(seq "$2"); do
		echo "filter add dev kc0 egress pref 1 matchall action pass"
		echo "filter del dev kc0 egress pref 1"
	done >"$1"
}
# bounded_batch WHAT FILE: run the tc batch FILE; the key may change once,
# then at most give back and take again once per second (the delay) elapsed.
bounded_batch() {
	local c0 s0 s c
	c0=$(cat $K/key_changes)
	s0=$(date +%s)
	check "$1" tc -b "$2"
	s=$(($(date +%s) - s0 + 1))
	c=$(($(cat $K/key_changes) - c0))
	[ $c -ge 1 ] && [ $c -le $((2 * s + 1)) ] &&
		ok "$1 in ${s} s changed the key $c times (at most $((2 * s + 1)))" ||
		not_ok "$1 in ${s} s changed the key $c times (at most $((2 * s + 1)))"
}
# sent: packets kc0's egress filter has passed
sent() { tc -s filter show dev kc0 egress | awk '/Sent/ {print $4; exit}'; }

modprobe -r sch_clsact 2>/dev/null
modprobe dummy && modprobe cls_matchall && modprobe act_gact && modprobe sch_clsact
is "$(cat $K/release_delay_ms) $(cat $K/keys_wanted) $(cat $K/keys_held) $(cat $K/key_changes)" "1000 0 0 0" \
	"loaded: release_delay_ms 1000, no key wanted, held or changed"
ip link add kc0 type dummy && sysctl -qw net.ipv6.conf.kc0.disable_ipv6=1 && ip link set kc0 up
ip addr add 198.18.74.1/24 dev kc0
tc qdisc add dev kc0 clsact

# --- add/delete in a loop, default delay
batch /tmp/churn.batch "$N"
bounded_batch "$N filter add/delete pairs in one tc batch" /tmp/churn.batch
is "$(cat $K/keys_wanted)" 0 "no filter left: no key wanted"
is "$(keys_held_settled)" 0 "the key given back after the delay"

# --- a filter back while the release is pending reuses the held key
echo 5000 >$K/release_delay_ms
tc filter add dev kc0 egress pref 1 matchall action pass
tc filter del dev kc0 egress pref 1
c0=$(cat $K/key_changes)
is "$(cat $K/keys_wanted) $(cat $K/keys_held)" "0 1" "filter deleted: wanted 0, held 1 until the delay passes"
check "a filter again while the release is pending" tc filter add dev kc0 egress pref 1 matchall action pass
is "$(cat $K/keys_held) $(($(cat $K/key_changes) - c0))" "1 0" "the held key serves it: no key change"
p=$(sent)
ping -q -c 3 -i 0.1 -W 0.2 198.18.74.2 >/dev/null 2>&1
is "$(($(sent) - p))" 3 "the filter sees the 3 packets sent"
tc filter del dev kc0 egress pref 1

# --- unload with a release pending
tc qdisc del dev kc0 clsact
is "$(cat $K/keys_wanted) $(cat $K/keys_held)" "0 1" "qdisc deleted: the key still held, release pending"
check "sch_clsact unloads with the release pending" modprobe -r sch_clsact
check "and loads again" modprobe sch_clsact
is "$(cat $K/keys_held) $(cat $K/key_changes)" "0 0" "a fresh module holds nothing"

# --- at once: every change is a key change (what the delay saves)
echo 0 >$K/release_delay_ms
tc qdisc add dev kc0 clsact
batch /tmp/churn.batch 100
c0=$(cat $K/key_changes)
check "100 add/delete pairs with release_delay_ms=0" tc -b /tmp/churn.batch
is "$(($(cat $K/key_changes) - c0)) $(cat $K/keys_held)" "200 0" "200 key changes, none held after"

# --- bad delays: refused with EINVAL, the old value kept
for bad in 3600001 -1 abc 4294967296; do
	err=$( (echo "$bad" >$K/release_delay_ms) 2>&1)
	is "$? $(cat $K/release_delay_ms)" "1 0" "release_delay_ms=$bad refused, 0 kept"
	grep -q "Invalid argument\|Numerical result" <<<"$err" && ok "release_delay_ms=$bad: $err" ||
		not_ok "release_delay_ms=$bad: error was '$err'"
done
echo 3600000 >$K/release_delay_ms && is "$(cat $K/release_delay_ms)" 3600000 "an hour is accepted"
is "$(stat -c %a $K/keys_wanted $K/keys_held $K/key_changes | tr '\n' ' ')" "400 400 400 " \
	"the key counters are root's only"

# --- qdisc churn: create and delete clsact with a filter, default delay
echo 1000 >$K/release_delay_ms
tc qdisc del dev kc0 clsact
for i in $(seq 200); do
	echo "qdisc add dev kc0 clsact"
	echo "filter add dev kc0 egress pref 1 matchall action pass"
	echo "qdisc del dev kc0 clsact"
done >/tmp/churn.batch
bounded_batch "200 clsact qdiscs with a filter created and deleted" /tmp/churn.batch
is "$(keys_held_settled) $(cat $K/keys_wanted)" "0 0" "all given back after the delay"
ip link del kc0
modprobe -r sch_clsact
done_testing
