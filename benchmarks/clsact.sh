#!/bin/bash
# clsact (seed 007) per-packet cost with the tree's pktgen samples on a
# dummy device: ingress (xmit_mode netif_receive) and egress (queue_xmit),
# for no qdisc, our clsact and the tree's sch_ingress each with no filter
# and with a no-op BPF filter, and ours with the cheapest filter there is
# (matchall, a class id and no action: the floor of the core's hook and classify).
#
# make clsact-bench boots QEMU with -icount shift=0: the guest clock then
# counts instructions, so "ns" are instructions and a run's time is its
# path length, free of the host's noise (BENCH_ICOUNT=0 for wall-clock
# TCG, which drifts by tens of percent here). Every number printed is a
# ratio of runs from the same round: each round visits all
# setups (in an order rotated per round, after a discarded warm-up run),
# and a setup's ratio is the median over rounds of its time divided by
# "none" in that round. "none2" is "none" measured again: its ratio is the
# A/A noise, printed as the median and the interquartile range.
. /bench/benchmarks/lib.sh

PG=/bench/pktgen
OBJ=/bench/tests/clsact/clsact_state.bpf.o
COUNT_INGRESS=${CLSACT_BENCH_COUNT_INGRESS:-200000}	# about as long as
COUNT_EGRESS=${CLSACT_BENCH_COUNT_EGRESS:-40000}	# an egress run
ROUNDS=${CLSACT_BENCH_ROUNDS:-5}	# icount runs repeat exactly; 5 still show an IQR
SETUPS=(none ours-empty tree-empty ours-nop tree-nop ours-mall none2)
say() { echo "clsact-bench: $*"; }
declare -A T	# T[dir:setup] = "ns ns ..." one per round, in round order

modprobe pktgen && modprobe dummy && modprobe cls_bpf && modprobe cls_matchall || { say "cannot load pktgen, dummy, cls_bpf or cls_matchall"; exit 1; }
ip link add pg0 type dummy && ip link set pg0 up
modprobe -r sch_ingress sch_clsact 2>/dev/null

# pg DIR COUNT: one pktgen run, prints ns per packet (pktgen's busy time);
# fails, with pktgen's output on stderr, if pktgen reports no result.
pg() {
	local mode=netif_receive out us
	[ "$1" = egress ] && mode=queue_xmit
	out=$(bash $PG/pktgen_bench_xmit_mode_$mode.sh -i pg0 -n "$2" -t 1 2>/dev/null)
	us=$(echo "$out" | sed -n 's/.*Result: OK: [0-9]*(c\([0-9]*\)+d[0-9]*).*/\1/p')
	[ -n "$us" ] || { say "pktgen failed: $out" >&2; return 1; }
	echo $((us * 1000 / $2))
}

# use MODULE: the module that provides clsact, the other one unloaded
use() {
	local other=sch_clsact
	[ "$1" = sch_clsact ] && other=sch_ingress
	modprobe -r $other 2>/dev/null
	modprobe "$1"
}

# setup NAME: put pg0 in that state; the prefix names the module.
setup() {
	tc qdisc del dev pg0 clsact 2>/dev/null
	case $1 in
	none*) return 0 ;;
	ours-*) use sch_clsact ;;
	tree-*) use sch_ingress ;;
	esac && tc qdisc add dev pg0 clsact || return
	case $1 in
	*-nop)
		tc filter add dev pg0 ingress bpf da obj $OBJ sec nop &&
			tc filter add dev pg0 egress bpf da obj $OBJ sec nop
		;;
	# (tc sends no options for a bare "matchall", which the kernel refuses)
	*-mall) tc filter add dev pg0 ingress matchall classid :1 && tc filter add dev pg0 egress matchall classid :1 ;;
	esac
}

n=${#SETUPS[@]}
for r in $(seq 0 $((ROUNDS - 1))); do
	for i in $(seq 0 $((n - 1))); do
		s=${SETUPS[$(((i + r) % n))]}
		setup "$s" || { say "setup $s failed"; exit 1; }
		for d in ingress egress; do
			c=$COUNT_INGRESS
			[ $d = egress ] && c=$COUNT_EGRESS
			pg $d $((c / 10)) >/dev/null &&	# warm-up after the change
				ns=$(pg $d $c) || exit 1
			T[$d:$s]+="$ns "
		done
	done
done
tc qdisc del dev pg0 clsact 2>/dev/null
ip link del pg0
modprobe -r sch_ingress sch_clsact pktgen 2>/dev/null

# paired A B DIR: per-round T[A]/T[B], one per line
paired() {
	paste <(tr ' ' '\n' <<<"${T[$3:$1]}" | grep .) <(tr ' ' '\n' <<<"${T[$3:$2]}" | grep .) |
		awk '{printf "%.4f\n", $1 / $2}'
}
fmt() { printf '%s (IQR %s..%s)' "$2" "$1" "$3"; }

say "$ROUNDS rounds; per run $COUNT_INGRESS packets ingress, $COUNT_EGRESS egress"
for d in ingress egress; do
	for s in "${SETUPS[@]}"; do
		say "$(printf '%-8s %-11s median %5s ns  (runs: %s)' $d $s \
			"$(tr ' ' '\n' <<<"${T[$d:$s]}" | grep . | median | cut -d. -f1)" "${T[$d:$s]% }")"
	done
done
for d in ingress egress; do
	read -r aq1 aa aq3 < <(paired none2 none $d | quart)
	read -r eq1 em eq3 < <(paired ours-empty none $d | quart)
	read -r oq1 ot oq3 < <(paired ours-nop tree-nop $d | quart)
	read -r pq1 pt pq3 < <(paired ours-empty tree-empty $d | quart)
	read -r nq1 nn nq3 < <(paired ours-nop none $d | quart)
	read -r tq1 tn tq3 < <(paired tree-nop none $d | quart)
	read -r mq1 mn mq3 < <(paired ours-mall none $d | quart)
	within=no
	awk -v e="$em" -v lo="$aq1" -v hi="$aq3" 'BEGIN { exit !(e >= lo && e <= hi) }' && within=yes
	say "$d: A/A, none again / none: $(fmt $aq1 $aa $aq3)"
	say "$d: ours / tree, no-op filter: $(fmt $oq1 $ot $oq3) (goal <= 1.01)"
	say "$d: ours present, no filter / none: $(fmt $eq1 $em $eq3) (goal: within the A/A IQR: $within)"
	say "$d: ours / tree, both present with no filter: $(fmt $pq1 $pt $pq3)"
	say "$d: no-op filter / none: ours $(fmt $nq1 $nn $nq3), tree $(fmt $tq1 $tn $tq3)$([ $d = egress ] && echo ' (goal <= 1.10)')"
	say "$d: cheapest filter (matchall, no action) / none: ours $(fmt $mq1 $mn $mq3)"
done
