#!/bin/bash
# clsact (seed 007) per-packet cost with the tree's pktgen samples on a
# dummy device: ingress (xmit_mode netif_receive) and egress (queue_xmit),
# for no qdisc, our clsact with no filter, our clsact and the tree's
# sch_ingress each with a no-op BPF filter. Rounds interleave the setups;
# medians and the A/A spread of "no qdisc" against itself are printed.
# TCG distorts absolute times: compare ratios.
PG=/bench/pktgen
OBJ=/bench/tests/clsact/clsact_state.bpf.o
COUNT=${CLSACT_BENCH_COUNT:-300000}
ROUNDS=${CLSACT_BENCH_ROUNDS:-5}
say() { echo "clsact-bench: $*"; }
declare -A T	# T[dir:setup] = "ns ns ns..."

modprobe pktgen && modprobe dummy && modprobe cls_bpf || { say "cannot load pktgen/dummy/cls_bpf"; exit 1; }
ip link add pg0 type dummy && ip link set pg0 up
modprobe -r sch_ingress sch_clsact 2>/dev/null

# pg DIR: one pktgen run, prints ns per packet
pg() {
	local mode=netif_receive out us
	[ "$1" = egress ] && mode=queue_xmit
	out=$(bash $PG/pktgen_bench_xmit_mode_$mode.sh -i pg0 -n "$COUNT" -t 1 2>/dev/null)
	us=$(echo "$out" | sed -n 's/.*Result: OK: \([0-9]*\)(.*/\1/p')
	[ -n "$us" ] || { say "pktgen failed: $out"; exit 1; }
	echo $((us * 1000 / COUNT))
}

# setup NAME: put pg0 in that state
setup() {
	tc qdisc del dev pg0 clsact 2>/dev/null
	case $1 in
	none | none2) ;;
	ours-empty) modprobe -r sch_ingress; modprobe sch_clsact; tc qdisc add dev pg0 clsact ;;
	ours-nop | tree-nop)
		if [ "$1" = ours-nop ]; then modprobe -r sch_ingress; modprobe sch_clsact
		else modprobe -r sch_clsact; modprobe sch_ingress; fi
		tc qdisc add dev pg0 clsact &&
			tc filter add dev pg0 ingress bpf da obj $OBJ sec nop &&
			tc filter add dev pg0 egress bpf da obj $OBJ sec nop
		;;
	esac
}

SETUPS=(none ours-empty ours-nop tree-nop none2)
for r in $(seq "$ROUNDS"); do
	for s in "${SETUPS[@]}"; do
		setup $s || { say "setup $s failed"; exit 1; }
		for d in ingress egress; do T[$d:$s]+="$(pg $d) "; done
	done
done
tc qdisc del dev pg0 clsact 2>/dev/null
ip link del pg0
modprobe -r sch_ingress sch_clsact pktgen 2>/dev/null

med() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { echo "scale=3; $1 / $2" | bc -l; }
say "$COUNT packets per run, $ROUNDS rounds, medians in ns per packet"
for d in ingress egress; do
	for s in "${SETUPS[@]}"; do
		say "$(printf '%-8s %-11s %6s ns  (runs: %s)' $d $s "$(echo ${T[$d:$s]} | med)" "${T[$d:$s]% }")"
	done
done
for d in ingress egress; do
	none=$(echo ${T[$d:none]} | med) none2=$(echo ${T[$d:none2]} | med)
	ours=$(echo ${T[$d:ours-nop]} | med) tree=$(echo ${T[$d:tree-nop]} | med)
	empty=$(echo ${T[$d:ours-empty]} | med)
	say "$d: A/A no qdisc, second / first: $(ratio $none2 $none)"
	say "$d: ours / tree, no-op filter: $(ratio $ours $tree) (goal <= 1.01)"
	say "$d: ours present, no filter / no qdisc: $(ratio $empty $none) (goal: within the A/A spread)"
	say "$d: no-op filter (ours) / no qdisc: $(ratio $ours $none)$([ $d = egress ] && echo ' (goal <= 1.10)')"
done
