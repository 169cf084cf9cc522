#!/bin/bash
# Checksum offload helpers: decision and fallback cost ratios (seed 005).
. /bench/benchmarks/lib.sh
dmesg -C
modprobe lk45_csum_bench iters=${CSUM_BENCH_ITERS:-200000} || { echo "csum: cannot load lk45_csum_bench"; exit 1; }
dmesg | sed -n 's/^\[[ 0-9.]*\] lk45_csum_bench: /csum-bench: /p'
modprobe -r lk45_csum_bench

# A 64 KiB GSO packet the chip cannot checksum (TCP/IPv6, 45 segments):
# the cost per segment through our 8139cp against 6.12's own driver
# (8139cp_pristine) on the same packets, in the same boot; ours twice
# for the A/A ratio. Instructions under -icount, so rounds repeat.
GSO=/bench/tests/csum/gso_send
GSO_COUNT=${CSUM_BENCH_GSO_COUNT:-200}
GSO_ROUNDS=${CSUM_BENCH_GSO_ROUNDS:-5}
# gso_round MODULE: ns per segment with MODULE driving the rtl8139 port
gso_round() {
	local d dev=
	modprobe -r 8139cp 8139cp_pristine 2>/dev/null
	modprobe "$1" || return 1
	for _ in $(seq 100); do
		for d in /sys/class/net/*/device/driver; do
			[ "$d" -ef /sys/bus/pci/drivers/8139cp ] || continue
			d=${d%/device/driver}
			dev=${d##*/}
		done
		[ -n "$dev" ] && break
		sleep 0.1
	done
	[ -n "$dev" ] || return 1
	# no frame of its own in the count: no IPv6, no address
	sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=1"
	ip link set "$dev" up
	for _ in $(seq 100); do
		[ "$(cat "/sys/class/net/$dev/carrier" 2>/dev/null)" = 1 ] && break
		sleep 0.1
	done
	"$GSO" "$dev" "$GSO_COUNT"
}
declare -A G
for r in $(seq "$GSO_ROUNDS"); do
	for s in ours pristine ours2; do
		m=8139cp
		[ $s = pristine ] && m=8139cp_pristine
		v=$(gso_round $m) || { echo "csum-bench: GSO round with $m failed"; exit 1; }
		G[$s]+="$v "
	done
done
modprobe -r 8139cp_pristine 2>/dev/null
med() { tr ' ' '\n' <<<"${G[$1]}" | sed '/^$/d' | median; }
o=$(med ours) p=$(med pristine) a=$(med ours2)
echo "csum-bench: GSO TCP/IPv6 of 64800 bytes (45 segments, none the chip's to checksum), instructions per segment, median of $GSO_ROUNDS rounds of $GSO_COUNT packets: ours $o, 6.12's driver $p"
awk -v o="$o" -v p="$p" -v a="$a" 'BEGIN {
	printf "csum-bench: GSO per segment, ours / 6.12'\''s driver = %.3f (goal <= 1.0); A/A ours / ours = %.3f\n", o / p, a / o }'
