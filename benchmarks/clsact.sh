#!/bin/bash
# clsact (seed 007) per-packet cost with the tree's pktgen samples on a
# dummy device: ingress (xmit_mode netif_receive) and egress (queue_xmit),
# for no qdisc, our clsact and the tree's sch_ingress each with no filter
# and with a no-op BPF filter, ours with the cheapest filter there is
# (matchall, a class id and no action: the floor of the core's hook and
# classify), and the same no-op program attached to tcx (BPF_LINK_CREATE,
# BPF_TCX_INGRESS/EGRESS: bpf_mprog, no qdisc), the floor of 6.12's hooks.
# Then, with perf in the guest, where a no-op filter's instructions go:
# per function, instructions per packet of the pktgen thread, tc filter
# against tcx (perf's cpu-clock samples the instruction-counting clock).
# Last, the cost of filter churn: CHURN filter add/delete pairs in one tc
# batch on an otherwise empty clsact, with the tree's module, ours and ours
# giving keys back at once (release_delay_ms=0).
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
CHURN=${CLSACT_BENCH_CHURN:-10000}
TCX=/bench/tests/clsact/tcx_attach
SETUPS=(none ours-empty tree-empty ours-nop tree-nop ours-mall tcx-nop none2)
say() { echo "clsact-bench: $*"; }
declare -A T	# T[dir:setup] = "ns ns ..." one per round, in round order

modprobe pktgen && modprobe dummy && modprobe cls_bpf && modprobe cls_matchall || { say "cannot load pktgen, dummy, cls_bpf or cls_matchall"; exit 1; }
ip link add pg0 type dummy && ip link set pg0 up
modprobe -r sch_ingress sch_clsact 2>/dev/null
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf

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

# keys_released: wait until our module holds no hook key (it gives them
# back release_delay_ms after the last filter went), so that "none" and
# "empty" are measured with the hooks off.
keys_released() {
	local p=/sys/module/sch_clsact/parameters/keys_held i
	for i in $(seq 50); do
		[ ! -e $p ] || [ "$(cat $p)" = 0 ] && return 0
		sleep 0.2
	done
	say "sch_clsact still holds $(cat $p) keys"
	return 1
}

# setup NAME: put pg0 in that state; the prefix names the module.
setup() {
	tc qdisc del dev pg0 clsact 2>/dev/null
	rm -f /sys/fs/bpf/tcx_in /sys/fs/bpf/tcx_eg
	keys_released || return
	case $1 in
	none*) return 0 ;;
	tcx-*)
		$TCX pg0 ingress /sys/fs/bpf/tcx_in && $TCX pg0 egress /sys/fs/bpf/tcx_eg
		return
		;;
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
rm -f /sys/fs/bpf/tcx_in /sys/fs/bpf/tcx_eg

# profile SETUP DIR: "symbol samples" of the pktgen thread in one run of
# SETUP with 10x the usual packets. Under TCG perf's cpu-clock samples this
# thread sparsely (a few hundred samples a run, whatever the period), so
# only the shares are used: times the setup's instructions per packet from
# the rounds above.
profile() {
	local mode=netif_receive c=$((COUNT_INGRESS * 10))
	[ "$2" = egress ] && mode=queue_xmit c=$((COUNT_EGRESS * 10))
	setup "$1" || return
	perf record -q -e cpu-clock -a -o /tmp/perf.data -- \
		bash $PG/pktgen_bench_xmit_mode_$mode.sh -i pg0 -n $c -t 1 >/dev/null 2>&1 || return
	perf report -q -i /tmp/perf.data --stdio -n --comms kpktgend_0 --sort sym 2>/dev/null |
		awk '$3 == "[k]" {print $4, $2}'
}
declare -A P	# P[dir:setup] = profile lines
if command -v perf >/dev/null; then
	for d in ingress egress; do
		for s in ours-nop tcx-nop; do
			P[$d:$s]=$(profile $s $d) || { say "profile $s $d failed"; exit 1; }
		done
	done
fi
tc qdisc del dev pg0 clsact 2>/dev/null
rm -f /sys/fs/bpf/tcx_in /sys/fs/bpf/tcx_eg

# churn MODULE [DELAY]: prints guest ns (instructions) for CHURN add/delete
# pairs of an egress filter on pg0's clsact, in one tc batch, and for our
# module the static key references taken or given back meanwhile.
churn() {
	local k=/sys/module/sch_clsact/parameters t0 t1 c0=0 c1=0 i
	use "$1" && keys_released || return
	[ -n "$2" ] && echo "$2" >$k/release_delay_ms && c0=$(cat $k/key_changes)
	tc qdisc add dev pg0 clsact || return
	for i in $(seq "$CHURN"); do
		echo "filter add dev pg0 egress pref 1 matchall action pass"
		echo "filter del dev pg0 egress pref 1"
	done >/tmp/churn.batch
	t0=$(date +%s%N)
	tc -b /tmp/churn.batch || return
	t1=$(date +%s%N)
	[ -n "$2" ] && c1=$(cat $k/key_changes)
	tc qdisc del dev pg0 clsact
	echo "$((t1 - t0)) $((c1 - c0))"
}
churn sch_ingress >/dev/null	# warm-up
read -r tt _ < <(churn sch_ingress)
read -r to co < <(churn sch_clsact 1000)
read -r t0 c0 < <(churn sch_clsact 0)
[ -n "$tt" ] && [ -n "$to" ] && [ -n "$t0" ] || { say "churn failed"; exit 1; }
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
	read -r xq1 xn xq3 < <(paired tcx-nop none $d | quart)
	read -r yq1 yt yq3 < <(paired ours-nop tcx-nop $d | quart)
	read -r zq1 zt zq3 < <(paired tree-nop tcx-nop $d | quart)
	within=no
	awk -v e="$em" -v lo="$aq1" -v hi="$aq3" 'BEGIN { exit !(e >= lo && e <= hi) }' && within=yes
	say "$d: A/A, none again / none: $(fmt $aq1 $aa $aq3)"
	say "$d: ours / tree, no-op filter: $(fmt $oq1 $ot $oq3) (goal <= 1.01)"
	say "$d: ours present, no filter / none: $(fmt $eq1 $em $eq3) (goal: within the A/A IQR: $within)"
	say "$d: ours / tree, both present with no filter: $(fmt $pq1 $pt $pq3)"
	say "$d: no-op filter / none: ours $(fmt $nq1 $nn $nq3), tree $(fmt $tq1 $tn $tq3)$([ $d = egress ] && echo ' (goal <= 1.10)')"
	say "$d: cheapest filter (matchall, no action) / none: ours $(fmt $mq1 $mn $mq3)"
	say "$d: tcx, no-op program / none: $(fmt $xq1 $xn $xq3)"
	say "$d: no-op BPF, tc filter / tcx program: ours $(fmt $yq1 $yt $yq3) (goal <= 1.03), tree $(fmt $zq1 $zt $zq3)"
done
for d in ingress egress; do
	[ -n "${P[$d:ours-nop]}" ] || { say "$d: no profile (no perf)"; continue; }
	say "$d: instructions per packet by function (>= 4), ours no-op tc filter against the no-op tcx program:"
	# Both lists joined by symbol, each function's share of its setup's
	# samples times that setup's median instructions per packet.
	no=$(tr ' ' '\n' <<<"${T[$d:ours-nop]}" | grep . | median)
	nt=$(tr ' ' '\n' <<<"${T[$d:tcx-nop]}" | grep . | median)
	awk -v no="$no" -v nt="$nt" 'NR == FNR {o[$1] = $2; so += $2; next} {t[$1] = $2; st += $2}
		END {
			printf "%8s %8s %8s  (samples %d and %d; one sample is %.1f and %.1f)\n", "ours", "tcx", "diff", so, st, no / so, nt / st
			for (f in o) u[f] = 1
			for (f in t) u[f] = 1
			for (f in u) {
				a = o[f] * no / so; b = t[f] * nt / st
				if (a >= 4 || b >= 4) printf "%8.1f %8.1f %+8.1f  %s\n", a, b, a - b, f
			}
		}' <(echo "${P[$d:ours-nop]}") <(echo "${P[$d:tcx-nop]}") |
		{ IFS= read -r h; echo "$h"; sort -s -k3,3gr; } | sed "s/^/clsact-bench: $d:   /"
done
say "churn: $CHURN filter add/delete pairs in one tc batch: tree $((tt / 1000000)) ms, ours $((to / 1000000)) ms ($co key changes), ours giving keys back at once $((t0 / 1000000)) ms ($c0 key changes)"
say "churn (one vCPU: no IPIs, so a key change costs little here; counted above): ours / tree $(awk -v a="$to" -v b="$tt" 'BEGIN {printf "%.3f", a / b}'), at once / tree $(awk -v a="$t0" -v b="$tt" 'BEGIN {printf "%.3f", a / b}'), ours / at once $(awk -v a="$to" -v b="$t0" 'BEGIN {printf "%.3f", a / b}')"
