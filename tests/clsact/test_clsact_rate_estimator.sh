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
# near X Y: X within 35 % of Y (the estimator's average lags a little)
near() { awk -v x="$1" -v y="$2" 'BEGIN { exit !(y > 0 && x >= 0.65 * y && x <= 1.35 * y) }'; }

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
	sleep 5
	read -r t1 p1 r1 < <(dump)
	sleep 3
	read -r t2 p2 r2 < <(dump)
	for i in 1 2 3 4 5; do read -r _ _ r[$i] < <(dump); done
	echo stop >$PG/pgctrl
	wait
	m=$(awk -v a="$p1" -v b="$p2" -v s="$t1" -v e="$t2" 'BEGIN { printf "%d", (b - a) / (e - s) }')
	diag "$mod: counted $p1 then $p2 packets, $m pps between the dumps; estimator: $r1, $r2, then ${r[*]} pps"
	near "$r1" "$m" && ok "$mod: the first dump's rate, $r1 pps, matches the $m pps counted" ||
		not_ok "$mod: the first dump's rate, $r1 pps, matches the $m pps counted"
	near "$r2" "$m" && ok "$mod: 3 s later, $r2 pps" || not_ok "$mod: 3 s later, $r2 pps (counted $m)"
	bad=0
	for i in 1 2 3 4 5; do near "${r[$i]}" "$m" || bad=1; done
	[ $bad = 0 ] && ok "$mod: five dumps in a row leave it there" ||
		not_ok "$mod: five dumps in a row leave it there (${r[*]})"
	ip link del re0
done
done_testing
