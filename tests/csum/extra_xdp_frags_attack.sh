#!/bin/bash
# bench-timeout: 900
# Attack on 8139cp's transmit path where the core does not decide for it,
# and on its fragment mapping (patches net/0004, 0006, 0007). Helpers:
# xdp_frags_attack.c (the XDP case runner and the TCP senders),
# extra_xdp_reflect.bpf.c (the XDP program), gso_attack.c "tap" (the frames
# handed to the driver and the counters around them).
#
# 2. Fragments (run first, with IPv6 on): TCP over IPv4 by sendfile(2),
#    splice(2) of a file, vmsplice(2) of user pieces at odd page offsets,
#    MSG_ZEROCOPY of 16 such pieces a send, and writes of 1 to 1400 bytes
#    with MSG_MORE, each with TSO on, TSO off and tx checksumming off (TSO
#    cannot be on without it); TCP over IPv6 by sendfile and MSG_MORE (the
#    core sums the segments, the driver the frames sent whole, paged ones
#    included). Each flow: every byte in order at the receiver, no TCP
#    checksum error there (its stack checks every sum), the port's counters
#    exactly what the frames a tap saw handed to the driver call for
#    (tx-needs-csum, tx-csum-none, tx_csum_sw, tx_dropped +0), and the
#    path: LargeSend took paged GSO packets / no GSO packet and nothing left
#    to the driver / nothing asked of the chip. Then:
#    - a burst of four sendfile flows with BQL out of the way and the
#      port's interrupt (which reclaims the ring) pinned to CPU 0, the
#      senders to CPU 1: the same assertions; whether the ring filled (qdisc
#      requeues) is a SKIP when it did not;
#    - TSO flipped off and on every 0.1 s under a flow while BQL (limit_max
#      0) parks each next packet, validated, in the qdisc: nothing dropped;
#    - the port set down and up three times under a 2 MB flow
#      (cp_clean_rings() over a busy ring): every byte, no checksum error,
#      tx_dropped at most 64 a time, no DMA mapping of the port while down.
# 1. Generic XDP XDP_TX (IPv6 off on the port): the e1000 peer sends TCP
#    bursts (its core segments them, its e1000 sends a burst in one go) that
#    GRO on the 8139cp receive path turns into GSO packets; the program,
#    attached in skb mode, sends them back out of the port, which hands them
#    to cp_start_xmit() without ndo_features_check() or segmentation. The
#    peer compares what comes back byte for byte with what it sent
#    (addresses and ports swapped); the port's counters must be exactly
#    what the frames the program logged call for, in a window in which the
#    port sent nothing else. Cases: MTU 1500 with timestamps (gso_size
#    1448: LargeSend, every segment back as sent) through a linear buffer
#    and through page-pool frags (xdp.frags); CWR on each burst's first
#    segment (SKB_GSO_TCP_ECN), FRAGLIST GRO (rx-gro-list) and TSO off on
#    the port, where each GRO packet must come back whole and as sent or be
#    dropped and counted; MTU 2087 (gso_size 2047, LargeSend's largest MSS:
#    QEMU's chip cuts at 1500 bytes whatever the MSS, so every payload byte
#    once and every header and checksum are checked, not the cut); MTU 2088
#    (2048) and MTU 4096 (4056) on both ends, linear and frags, where each
#    GRO packet must be dropped, counted in tx_dropped (exactly) and warned
#    about nowhere, the segments GRO left alone coming back as sent. A case
#    in which GRO coalesced nothing says SKIP for that and checks the rest.
#
# After every case: no WARNING, BUG, Oops, "Net bug", "Tx Ring full",
# transmit timeout or DMA-API report in the log, the DMA-API error count
# unchanged, and (CONFIG_DMA_API_DEBUG) the port's DMA mappings back to its
# 64 receive buffers and one coherent ring block, none for transmit.
# DMA-API debug cannot tell dma_unmap_single() from dma_unmap_page() on
# this kernel (dma_map_single() records a "single" entry through
# dma_map_page_attrs()), so what it checks is sizes, directions, addresses
# and leaks.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"

X=$HERE/xdp_frags_attack
OBJ=$HERE/extra_xdp_reflect.bpf.o
DMA=/sys/kernel/debug/dma-api
TAP_PID=
IRQ=
IRQ_AFF=
BQL_MIN=
BQL_MAX=
TOGGLE_PID=
RX_BQL_MIN=
PIDS=()

cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	[ -n "$TOGGLE_PID" ] && { touch /tmp/xtoggle.stop; wait "$TOGGLE_PID" 2>/dev/null; }
	[ -n "$TAP_PID" ] && { touch /tmp/xtap.stop; wait "$TAP_PID" 2>/dev/null; }
	[ -n "$IRQ_AFF" ] && echo "$IRQ_AFF" >"/proc/irq/$IRQ/smp_affinity_list" 2>/dev/null
	if [ -n "${TX:-}" ] && [ -e "/sys/class/net/$TX" ]; then
		ip link set dev "$TX" xdpgeneric off 2>/dev/null
		ethtool -K "$TX" tx on tso on rx-gro-list off >/dev/null 2>&1
		[ -n "$BQL_MIN" ] &&
			echo "$BQL_MIN" >"/sys/class/net/$TX/queues/tx-0/byte_queue_limits/limit_min"
		[ -n "$BQL_MAX" ] &&
			echo "$BQL_MAX" >"/sys/class/net/$TX/queues/tx-0/byte_queue_limits/limit_max"
		ip link set "$TX" mtu 1500 2>/dev/null
		ip link set "$TX" up 2>/dev/null
		sysctl -qw "net.ipv6.conf.$TX.disable_ipv6=0" 2>/dev/null
	fi
	if [ -e /run/netns/rx ]; then
		ip -n rx link set "$RX" mtu 1500 2>/dev/null
		ip netns exec rx ethtool -K "$RX" tso on >/dev/null 2>&1
		[ -n "$RX_BQL_MIN" ] && ip netns exec rx sh -c \
			"echo $RX_BQL_MIN >/sys/class/net/$RX/queues/tx-0/byte_queue_limits/limit_min"
	fi
	teardown_topology
}

# --- what the log and DMA-API debug say after a case

# dma_maps: the port's DMA-API mappings: "to_device from_device coherent"
dma_maps() {
	awk -v d="$PCI" '$1 == "8139cp" && $2 == d {
		if (/DMA_TO_DEVICE/) t++; else if (/DMA_FROM_DEVICE/) f++; else if ($3 == "coherent") c++
	} END { print t + 0, f + 0, c + 0 }' "$DMA/dump"
}

D_LAST=0
E_LAST=0
# after_case NAME: the log since the last case, DMA-API errors, mappings
after_case() {
	local name=$1 lines e
	lines=$(dmesg | tail -n +$((D_LAST + 1)) |
		grep -E 'WARNING:|(^|[^A-Z])BUG[:! ]|Oops|Net bug|Tx Ring full|DMA-API|bad offload|Transmit timeout|NETDEV WATCHDOG' |
		grep -v 'dma_debug_entry pool grown' | head -5)
	D_LAST=$(dmesg | wc -l)
	is "$lines" "" "$name: no warning, BUG, 'Net bug', 'Tx Ring full', transmit timeout or DMA-API report in the log"
	if [ -z "$DMA_ON" ]; then
		skip "$name: DMA-API errors and the port's mappings" "$DMA_OFF"
		return
	fi
	e=$(cat "$DMA/error_count")
	is "$((e - E_LAST))" 0 "$name: no new DMA-API error (error_count $E_LAST -> $e)"
	E_LAST=$e
	# the transmit ring drains as the chip's interrupts come
	is_within 10 "0 64 1" "$name: the port's DMA mappings back to 64 receive buffers and the ring block, none for transmit (to_device from_device coherent)" dma_maps
}

# --- part 1: generic XDP XDP_TX of GRO packets

# rcase NAME PROG SEG TS CWR BURSTS EXPECT (see xdp_frags_attack.c)
rcase() {
	tap_include "$X" reflect "$TX" "$RX" "$OBJ" "$2" "$1" "${@:3}"
	ip link set dev "$TX" xdpgeneric off 2>/dev/null
	after_case "$1"
}

set_mtu() {
	ip link set "$TX" mtu "$1" && ip -n rx link set "$RX" mtu "$1" && wait_link
	is "$(cat "/sys/class/net/$TX/mtu") $(ip netns exec rx cat "/sys/class/net/$RX/mtu")" "$1 $1" \
		"MTU $1 on the port and on the peer"
}

# --- part 2: flows whose skbs carry many fragments

NEXT_PORT=$((20000 + RANDOM % 10000))

# counters_check NAME: the deltas the tap's frames call for
counters_check() {
	if [ "$T_OTHERS" != 0 ]; then
		not_ok "$1: a window with the flows' frames only (3 tries; $T_OTHERS others in the last)"
		return 1
	fi
	if [ "$T_DROPS" != 0 ]; then
		skip "$1: counters against the frames handed over" "the tap dropped $T_DROPS frames"
		return 1
	fi
	diag "$1: $T_FRAMES frames handed over: $T_HWF asked of the chip ($T_HWW on the wire), $T_SWF left to the driver, $T_PLAIN summed, $T_GSO GSO; largest $T_MAX bytes"
	is "$D_NEEDS $D_NONE $D_SW $D_DROP" "$T_HWW $((T_FRAMES - T_HWF)) $T_SWF 0" \
		"$1: tx-needs-csum, tx-csum-none, tx_csum_sw, tx_dropped as the $T_FRAMES frames handed over call for"
}

# flows NAME KIND FAM ADDR MODE BYTES [N [PREFIX]]: N flows at once (one by
# default) of BYTES each, sent by MODE under PREFIX (a command that runs
# the sender); then what KIND says about the frames handed over:
#   tso     TSO on, tx on: GSO packets go to LargeSend, nothing to the driver
#   seg     TSO off: no GSO packet, segments of at most 1514 bytes, each
#           asked of the chip
#   nocsum  tx off: nothing asked of the chip or left to the driver
#   v6      IPv6: nothing asked of the chip; the core sums the segments,
#           the driver what is sent whole
#   toggle  TSO flips meanwhile: nothing dropped
flows() {
	local name=$1 kind=$2 fam=$3 addr=$4 mode=$5 bytes=$6 n=${7:-1} prefix=${8:-}
	local count=$((bytes / 1000)) try i base out=/tmp/xflow.$$ e0 rp sp what
	e0=$(rx_stat TcpInCsumErrors)
	for try in 1 2 3; do
		base=$NEXT_PORT
		NEXT_PORT=$((NEXT_PORT + n))
		rp=() sp=()
		for ((i = 0; i < n; i++)); do
			rm -f "$out.$i" "$out.$i.ready"
			ip netns exec rx "$FLOW" recv "$fam" tcp $((base + i)) "$count" "$out.$i" &
			rp+=($!)
		done
		for ((i = 0; i < n; i++)); do
			for _ in $(seq 100); do [ -e "$out.$i.ready" ] && break; sleep 0.05; done
		done
		gso_tap_start /tmp/xtap "$base" $((base + n - 1)) || diag "$name: the tap did not start"
		for ((i = 0; i < n; i++)); do
			# shellcheck disable=SC2086 # the prefix's words
			$prefix "$X" tcp "$fam" "$addr" $((base + i)) "$mode" "$bytes" \
				>"$out.$i.err" 2>&1 &
			sp+=($!)
		done
		PIDS=("${rp[@]}" "${sp[@]}")
		wait "${sp[@]}"
		wait "${rp[@]}"
		PIDS=()
		gso_tap_stop /tmp/xtap
		[ "$T_OTHERS" = 0 ] && break
		diag "$name: try $try: $T_OTHERS frame(s) not the flows' in the window, again"
	done
	for ((i = 0; i < n; i++)); do
		what=$name
		[ "$n" -gt 1 ] && what="$name, flow $((i + 1))"
		flow_received "$what" "$out.$i" "$count" "$bytes" "every byte arrives in order"
	done
	is "$(($(rx_stat TcpInCsumErrors) - e0))" 0 "$name: no TCP checksum error at the receiver"
	counters_check "$name" || return 0
	case $kind in
	tso)
		if [ "$T_GSO" -gt 0 ] && [ "$T_MAX" -gt 1514 ] && [ "$T_SWF" = 0 ]; then
			ok "$name: LargeSend took paged GSO packets ($T_GSO, largest $T_MAX bytes), nothing left to the driver"
		else
			not_ok "$name: LargeSend took paged GSO packets ($T_GSO GSO, largest $T_MAX bytes, $T_SWF left to the driver)"
		fi
		;;
	seg)
		if [ "$T_GSO" = 0 ] && [ "$T_SWF" = 0 ] && [ "$T_MAX" -le 1514 ]; then
			ok "$name: no GSO packet, nothing left to the driver, frames of at most 1514 bytes (largest $T_MAX)"
		else
			not_ok "$name: no GSO packet, nothing left to the driver, frames of at most 1514 bytes ($T_GSO GSO, $T_SWF left, largest $T_MAX)"
		fi
		;;
	toggle)
		is "$D_DROP" 0 "$name: no packet the core validated lost in the driver when TSO went off (tx_dropped +$D_DROP)"
		;;
	nocsum)
		is "$T_HWF $T_SWF $T_GSO" "0 0 0" "$name: nothing asked of the chip, nothing left to the driver, no GSO packet (asked, left, GSO)"
		;;
	v6)
		is "$T_HWF $T_GSO" "0 0" "$name: nothing asked of the chip, no GSO packet (asked, GSO)"
		# how TCP cuts the stream (GSO packets or frames sent whole) is
		# its own business: every frame is summed by one of the two
		is "$D_SW" "$T_SWF" "$name: the driver summed exactly the $T_SWF frames that reached it whole (tx_csum_sw +$D_SW), the core the $T_PLAIN segments it built"
		;;
	esac
}

setup_topology
trap cleanup EXIT
trap 'exit 1' TERM INT
ip netns exec rx ethtool -K "$RX" rxvlan off >/dev/null 2>&1
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
PCI=$(basename "$(readlink -f "/sys/class/net/$TX/device")")
# DMA-API debug: on, and not switched itself off (out of entries)
DMA_ON=
DMA_OFF="no $DMA: CONFIG_DMA_API_DEBUG is off in this kernel"
if [ -r "$DMA/dump" ]; then
	DMA_OFF="DMA-API debug switched itself off ($DMA/disabled)"
	[ "$(cat "$DMA/disabled")" = N ] && DMA_ON=1
fi
wait_link
D_LAST=$(dmesg | wc -l)
if [ -n "$DMA_ON" ]; then
	E_LAST=$(cat "$DMA/error_count")
	is_within 10 "0 64 1" "the port's DMA mappings at the start: 64 receive buffers and the ring block (to_device from_device coherent)" dma_maps
fi

V4=198.18.81.2
V6=2001:db8:81::2
B=200000

# --- 2a: fragments, TSO and tx checksumming on and off
MODES="sendfile splice vmsplice zerocopy msgmore"
for m in $MODES; do
	flows "TSO on, tx on, $m" tso 4 $V4 "$m" $B
	after_case "TSO on, tx on, $m"
done
ethtool -K "$TX" tso off >/dev/null
is "$(ethtool -k "$TX" | awk '/^tcp-segmentation-offload:/ { print $2 }')" off "TSO off on the port"
for m in $MODES; do
	flows "TSO off, tx on, $m" seg 4 $V4 "$m" $B
	after_case "TSO off, tx on, $m"
done
ethtool -K "$TX" tx off >/dev/null
is "$(ethtool -k "$TX" | awk '/^tx-checksumming:|^scatter-gather:/ { printf "%s ", $2 }')" "off on " \
	"tx checksumming off on the port, scatter-gather still on"
for m in $MODES; do
	flows "tx off, $m" nocsum 4 $V4 "$m" $B
	after_case "tx off, $m"
done
ethtool -K "$TX" tx on tso on >/dev/null
for m in sendfile msgmore; do
	flows "TCP/IPv6, TSO on, $m" v6 6 $V6 "$m" $B
	after_case "TCP/IPv6, TSO on, $m"
done

# no IPv6 chatter from the port from here on (the XDP windows count every
# frame the port sends)
sysctl -qw "net.ipv6.conf.$TX.disable_ipv6=1"

# --- 2b: a burst against the ring: BQL never stops the queue, the port's
# interrupt (which reclaims the ring) on CPU 0, the senders on CPU 1
BQLD=/sys/class/net/$TX/queues/tx-0/byte_queue_limits
IRQ=$(cat "/sys/class/net/$TX/device/irq")
PIN=
pin() {
	if [ "$(nproc)" -ge 2 ] && [ -w "/proc/irq/$IRQ/smp_affinity_list" ]; then
		IRQ_AFF=$(cat "/proc/irq/$IRQ/smp_affinity_list")
		echo 0 >"/proc/irq/$IRQ/smp_affinity_list" 2>/dev/null && PIN="taskset -c 1"
	fi
}
unpin() {
	[ -n "$IRQ_AFF" ] && echo "$IRQ_AFF" >"/proc/irq/$IRQ/smp_affinity_list"
	IRQ_AFF=
	PIN=
}
requeues() { tc -s qdisc show dev "$TX" | awk '{ for (i = 1; i < NF; i++) if ($i == "requeues") s += $(i + 1) } END { print s + 0 }'; }
BQL_MIN=$(cat "$BQLD/limit_min")
echo 100000000 >"$BQLD/limit_min"
pin
RQ0=$(requeues)
flows "ring burst, 4 sendfile flows" tso 4 $V4 sendfile 400000 4 "$PIN"
RQ=$(($(requeues) - RQ0))
if [ "$RQ" -gt 0 ]; then
	ok "ring burst: the driver stopped the queue with packets waiting (qdisc requeues +$RQ)"
else
	skip "ring burst: the driver stopped the queue with packets waiting" "the ring never filled here (qdisc requeues +0): the interrupt reclaimed it in time"
fi
unpin
echo "$BQL_MIN" >"$BQLD/limit_min" && BQL_MIN=
after_case "ring burst"

# --- 2d: TSO switched off and on while GSO packets the core validated with
# TSO on wait for the driver: BQL at 0 stops the queue after every packet,
# so the next one waits, validated, in the qdisc (which does not validate
# a requeued packet again). The driver must send what the core handed it.
BQL_MAX=$(cat "$BQLD/limit_max")
echo 0 >"$BQLD/limit_max"
pin
rm -f /tmp/xtoggle.stop /tmp/xtoggle.n
(
	n=0
	while [ ! -e /tmp/xtoggle.stop ]; do
		ethtool -K "$TX" tso off >/dev/null 2>&1
		sleep 0.05
		ethtool -K "$TX" tso on >/dev/null 2>&1
		n=$((n + 1))
		sleep 0.05
	done
	echo "$n" >/tmp/xtoggle.n
) &
TOGGLE_PID=$!
RQ0=$(requeues)
flows "TSO flipping under parked GSO packets" toggle 4 $V4 sendfile 600000 1 "$PIN"
RQ=$(($(requeues) - RQ0))
touch /tmp/xtoggle.stop
wait "$TOGGLE_PID"
TOGGLE_PID=
diag "TSO flipping: $(cat /tmp/xtoggle.n 2>/dev/null) off/on flips while the flow ran"
if [ "$RQ" -gt 0 ]; then
	ok "TSO flipping under parked GSO packets: packets waited in the qdisc (requeues +$RQ)"
else
	skip "TSO flipping under parked GSO packets: packets waited in the qdisc" "no requeue: the interrupt woke the queue before the next packet (requeues +0)"
fi
ethtool -K "$TX" tso on >/dev/null
unpin
echo "$BQL_MAX" >"$BQLD/limit_max" && BQL_MAX=
after_case "TSO flipping under parked GSO packets"

# --- 2c: the port down and up under a running flow
downup() {
	local count=2000 port=$NEXT_PORT out=/tmp/xdown.$$ rp sp i maps=() drop0 e0 got
	NEXT_PORT=$((NEXT_PORT + 1))
	e0=$(rx_stat TcpInCsumErrors)
	drop0=$(cat "/sys/class/net/$TX/statistics/tx_dropped")
	rm -f "$out" "$out.ready"
	FLOW_WAIT=60 ip netns exec rx "$FLOW" recv 4 tcp "$port" "$count" "$out" &
	rp=$!
	for _ in $(seq 100); do [ -e "$out.ready" ] && break; sleep 0.05; done
	"$X" tcp 4 $V4 "$port" sendfile $((count * 1000)) >"$out.err" 2>&1 &
	sp=$!
	PIDS=("$rp" "$sp")
	sleep 0.5
	for i in 1 2 3; do
		ip link set "$TX" down
		[ -n "$DMA_ON" ] && maps+=("$(dma_maps)")
		ip link set "$TX" up
		# the port's neighbour entries went with it
		ip neigh replace 198.18.81.2 lladdr "$RX_MAC" dev "$TX" nud permanent
		sleep 0.7
	done
	wait "$sp"
	wait "$rp"
	PIDS=()
	got=$(cat "$out" 2>/dev/null)
	is "$got" "$count $((count * 1000)) 0" "down and up under a flow: every byte arrives in order (chunks bytes bad)"
	[ "$got" = "$count $((count * 1000)) 0" ] || sed 's/^/# /' "$out.err"
	is "$(($(rx_stat TcpInCsumErrors) - e0))" 0 "down and up under a flow: no TCP checksum error at the receiver"
	i=$(($(cat "/sys/class/net/$TX/statistics/tx_dropped") - drop0))
	if [ "$i" -ge 0 ] && [ "$i" -le $((3 * 64)) ]; then
		ok "down and up under a flow: tx_dropped +$i, at most the ring's 64 descriptors a time"
	else
		not_ok "down and up under a flow: tx_dropped +$i, want at most the ring's 64 descriptors a time"
	fi
	if [ -n "$DMA_ON" ]; then
		is "${maps[*]}" "0 0 0 0 0 0 0 0 0" "down and up under a flow: no DMA mapping of the port while it is down (three times: to_device from_device coherent)"
	fi
}
wait_link
downup
after_case "down and up under a flow"

# --- 1: generic XDP XDP_TX of GRO packets
ip netns exec rx ethtool -K "$RX" tso off >/dev/null
is "$(ip netns exec rx ethtool -k "$RX" | awk '/^tcp-segmentation-offload:/ { print $2 }')" off \
	"the peer's TSO off: its core segments the bursts"
# the peer's BQL out of the way: a burst leaves its e1000 in one go
RX_BQL_MIN=$(ip netns exec rx cat "/sys/class/net/$RX/queues/tx-0/byte_queue_limits/limit_min")
ip netns exec rx sh -c "echo 100000000 >/sys/class/net/$RX/queues/tx-0/byte_queue_limits/limit_min"
wait_link

rcase "MTU 1500, gso_size 1448, linear buffer" xdp_reflect 1448 1 0 1,2,8,17,18,30,44 L
rcase "MTU 1500, gso_size 1448, page-pool frags" xdp_reflect_frags 1448 1 0 1,2,8,17,18,30,44 L
rcase "MTU 1500, CWR on each burst's first segment (SKB_GSO_TCP_ECN)" xdp_reflect 1460 0 1 8,8,1,8 E
ethtool -K "$TX" rx-gro-list on >/dev/null
is "$(ethtool -k "$TX" | awk '/^rx-gro-list:/ { print $2 }')" on "rx-gro-list on on the port"
rcase "MTU 1500, FRAGLIST GRO (rx-gro-list)" xdp_reflect 1448 1 0 1,8,30 E
ethtool -K "$TX" rx-gro-list off >/dev/null
ethtool -K "$TX" tso off >/dev/null
rcase "MTU 1500, TSO off on the port" xdp_reflect 1448 1 0 1,8,16 E
ethtool -K "$TX" tso on >/dev/null

set_mtu 2087
rcase "MTU 2087, gso_size 2047 (LargeSend's largest)" xdp_reflect 2047 0 0 1,2,8,20 C
set_mtu 2088
rcase "MTU 2088, gso_size 2048 (beyond LargeSend)" xdp_reflect 2048 0 0 1,2,8,20 D
set_mtu 4096
rcase "MTU 4096, gso_size 4056, linear buffer" xdp_reflect 4056 0 0 1,2,4,8,15 D
rcase "MTU 4096, gso_size 4056, page-pool frags" xdp_reflect_frags 4056 0 0 1,2,4,8,15 D
set_mtu 1500

ip netns exec rx sh -c "echo $RX_BQL_MIN >/sys/class/net/$RX/queues/tx-0/byte_queue_limits/limit_min" &&
	RX_BQL_MIN=
ip netns exec rx ethtool -K "$RX" tso on >/dev/null
done_testing
