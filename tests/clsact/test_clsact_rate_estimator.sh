#!/bin/bash
# bench-timeout: 300
# A clsact qdisc created with a rate estimator, under steady pktgen traffic
# through its egress hook: the rate tc -s shows must match the packets the
# qdisc counted, from the first dump on, and dumping must not move it.
# With our module, then with the tree's sch_ingress in the same boot.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"
own_netns clsact "$@"
. "$(dirname "$0")/../lib/pktgen.sh"
RATE=400	# packets per second asked of pktgen

cleanup() {
	[ -e $PG/pgctrl ] && echo stop >$PG/pgctrl 2>/dev/null
	wait 2>/dev/null
	ip link del re0 2>/dev/null
	modprobe -r sch_ingress 2>/dev/null
}
trap cleanup EXIT

# dump: "seconds packets pps" from one tc -s qdisc show
dump() {
	local out
	out=$(tc -s qdisc show dev re0)
	echo "$(date +%s.%N) $(PAT="qdisc clsact " sent_stat packets <<<"$out") $(grep -o '[0-9]*pps' <<<"$out" | head -1 | tr -d pps)"
}
# judge < "t p r" lines: for each dump with an earlier one at least 1 s
# before it, "rate counted near", the packets the qdisc counted between
# the latest such dump and this one per second, and whether the rate tc
# showed lies within [0.5, 1.6] of it. The window follows the dumps, so
# that pktgen catching up after a stall of the guest moves both alike;
# an estimator that reads other counters than the hooks update shows 0
# or twice the rate.
judge() {
	awk '{ t[NR] = $1; p[NR] = $2; r[NR] = $3 }
	END {
		for (i = 2; i <= NR; i++) {
			for (j = i - 1; j >= 1 && t[i] - t[j] < 1; j--)
				;
			if (j < 1)
				continue
			c = (p[i] - p[j]) / (t[i] - t[j])
			printf "%d %d %d\n", r[i], c, (c > 0 && r[i] >= 0.5 * c && r[i] <= 1.6 * c)
		}
	}'
}

modprobe pktgen && modprobe dummy && modprobe cls_matchall && modprobe act_gact ||
	{ not_ok "cannot load pktgen, dummy, cls_matchall or act_gact"; done_testing; }
for mod in sch_clsact sch_ingress; do
	modprobe -r sch_clsact sch_ingress 2>/dev/null
	check "$mod: load" modprobe --ignore-install $mod
	# no IPv6 on it: its router solicitations would pass the counted hook
	ip link add re0 type dummy && sysctl -qw net.ipv6.conf.re0.disable_ipv6=1
	ip link set re0 up
	check "$mod: clsact with estimator 250ms 1sec" tc qdisc add dev re0 estimator 250ms 1sec clsact
	check "$mod: an egress filter" tc filter add dev re0 egress matchall action pass

	pg_clear
	echo "add_device re0" >$PG/kpktgend_0
	for c in "count 0" "pkt_size 100" "ratep $RATE" "xmit_mode queue_xmit" \
		"dst 198.18.73.2" "dst_mac 02:00:00:00:00:02"; do
		echo "$c" >$PG/re0
	done
	echo start >$PG/pgctrl &
	sleep 1
	# one dump, then a dump every quarter second from 2 s to 6 s
	dumps=$(dump; sleep 1; for i in $(seq 17); do dump; sleep 0.25; done)
	echo stop >$PG/pgctrl
	wait
	verdicts=$(judge <<<"$dumps")
	n=$(wc -l <<<"$verdicts")
	diag "$mod: shown/counted pps per dump: $(awk '{ printf "%s/%s ", $1, $2 }' <<<"$verdicts")"
	read -r r c good <<<"$verdicts"
	[ "$good" = 1 ] && ok "$mod: the first rate shown, $r pps, matches the $c pps counted" ||
		not_ok "$mod: the first rate shown, $r pps, matches the $c pps counted"
	bad=$(awk '!$3' <<<"$verdicts" | wc -l)
	[ "$n" -ge 12 ] && [ "$bad" = 0 ] &&
		ok "$mod: $n dumps a quarter second apart each match the rate counted" ||
		not_ok "$mod: $n dumps a quarter second apart each match the rate counted ($bad do not, 12 needed)"
	ip link del re0
done
done_testing
