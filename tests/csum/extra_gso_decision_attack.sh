#!/bin/bash
# bench-timeout: 600
# Attack on 8139cp's GSO decision (cp_features_check(): LargeSend when it
# segments as software GSO would; else the GSO features go, and where the
# chip could not checksum the segments the checksum features too, so that
# the core checksums the segments as it makes them), by ways the authors'
# tests do not send GSO packets (gso_attack.c sends them, taps what the
# driver is handed and reads the counters at quiet points around it):
#
#  - TCP/IPv6 by sendfile(2), by vmsplice(2) + splice(2) of user pages and
#    by MSG_ZEROCOPY; TCP/IPv4 with a loose source route (LSRR) by
#    sendfile(2); TCP/IPv4 by MSG_ZEROCOPY (LargeSend);
#  - UDP GSO (UDP_SEGMENT) over IPv4 (the core segments, the chip sums each
#    segment), over IPv6 and behind an 802.1ad tag (the core sums), over
#    VLAN 100 with the tag the chip's and in-band, from two threads on one
#    socket, with MSG_ZEROCOPY;
#  - VXLAN over IPv4 without and with an outer UDP checksum and over IPv6,
#    TCP and UDP GSO inside; GRE with checksums (where ip_gre is built);
#  - TSO and tx checksumming flipped with ethtool while a TCP flow runs;
#  - four flows at once (TCP/IPv4, TCP/IPv6, UDP GSO over both);
#  - packet-socket GSO frames (SKB_GSO_DODGY) whose tot_len, seed or IPv4
#    header checksum lie, or that ask for no checksum, checked segment by
#    segment at the receiver.
#
# Every flow must arrive byte for byte with no new checksum error at the
# receiver (its stack verifies every checksum) and nothing in tx_dropped.
# Every window asserts the exact deltas of tx-needs-csum, tx-csum-none and
# tx_csum_sw that the frames handed to the driver call for (each counted by
# the tap: GSO frames to LargeSend by their segments, requests the chip
# takes, requests left to the driver, frames already summed), and then the
# direction that tells the decision apart: where the chip cannot checksum
# the segments, the core sums them (most frames handed over summed, or all
# of them where every packet is GSO); where it can, every segment is the
# chip's. A window in which a frame that is not the flows' passed is
# measured again (4 tries).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"

G=$HERE/gso_attack
TAP_PID=
TOGGLE_PID=
TCPN=150	# chunks of 1000 bytes a TCP flow
UDPN=64		# datagrams of 1000 bytes (and an index) a UDP GSO flow

cleanup() {
	[ -n "$TAP_PID" ] && { touch /tmp/gtap.stop; wait "$TAP_PID" 2>/dev/null; }
	[ -n "$TOGGLE_PID" ] && { touch /tmp/gtoggle.stop; wait "$TOGGLE_PID" 2>/dev/null; }
	if [ -n "${TX:-}" ] && [ -e "/sys/class/net/$TX" ]; then
		ethtool -K "$TX" tx on tso on txvlan on >/dev/null 2>&1
	fi
	local d
	for d in vx4c gre1; do
		[ -e "/sys/class/net/$d" ] && ip link del "$d"
	done
	teardown_topology
}

# the receiver's TcpInCsumErrors, UdpInCsumErrors and Udp6InCsumErrors,
# in one process
rx_csum_errs() {
	# shellcheck disable=SC2016 # awk's own variables
	ip netns exec rx awk '
		FILENAME ~ /snmp6/ { if ($1 == "Udp6InCsumErrors") u6 = $2; next }
		/^(Tcp|Udp):/ { p = $1; if (!(p in hdr)) { hdr[p] = $0; next }
			n = split(hdr[p], h); for (i = 2; i <= n; i++) if (h[i] == "InCsumErrors") v[p] = $i }
		END { print v["Tcp:"] + 0, v["Udp:"] + 0, u6 + 0 }
	' /proc/net/snmp /proc/net/snmp6
}

# toggler: TSO off and on, tx checksumming off and on, until
# /tmp/gtoggle.stop; the flips made go to /tmp/gtoggle.n
toggler() {
	local f n=0
	while [ ! -e /tmp/gtoggle.stop ]; do
		for f in "tso off" "tso on" "tx off" "tx on"; do
			# shellcheck disable=SC2086 # the feature and its state
			ethtool -K "$TX" $f >/dev/null 2>&1
			n=$((n + 1))
			sleep 0.1
		done
	done
	ethtool -K "$TX" tx on tso on >/dev/null 2>&1
	echo "$n" >/tmp/gtoggle.n
}

# flows' ports below the ephemeral range (a TCP client's, VXLAN's source ports)
NEXT_PORT=$((20000 + RANDOM % 10000))

# gcase NAME KIND SPEC...: the flows SPEC... ("tcp FAMILY ADDR COUNT MODE
# [lsrr:HOP]" or "udp FAMILY ADDR COUNT SEGS THREADS [zerocopy]") at once,
# each to a port of its own on rx, in one tap window; then what KIND says:
#   core     the chip can checksum no segment: no GSO packet and no request
#            for the chip reach the driver, most frames arrive summed
#   tso      LargeSend takes GSO packets, nothing is left to the driver
#   chipseg  UDP GSO the chip can checksum: every datagram a segment the
#            core made, each asked of the chip
#   coreseg  UDP GSO it cannot: every segment handed over summed
#   tunchip  TCP in a tunnel whose outer UDP/IPv4 checksum is the chip's:
#            the segments' outer checksums asked of the chip, inner summed
#   toggle   flips TSO and tx checksumming meanwhile: nothing left to the
#            driver
#   mixed    the exact counters only
gcase() {
	local name=$1 kind=$2 try i n base out=/tmp/gflow.$$ proto fam addr count rest
	local total=0 e0 what
	shift 2
	local specs=("$@") rpids spids
	n=${#specs[@]}
	e0=$(rx_csum_errs)
	for try in 1 2 3 4; do
		base=$NEXT_PORT
		NEXT_PORT=$((NEXT_PORT + n))
		rpids=() spids=()
		for ((i = 0; i < n; i++)); do
			read -r proto fam addr count rest <<<"${specs[i]}"
			rm -f "$out.$i" "$out.$i.ready"
			FLOW_WAIT=10 ip netns exec rx "$FLOW" recv "$fam" "$proto" $((base + i)) "$count" \
				"$out.$i" &
			rpids+=($!)
		done
		for ((i = 0; i < n; i++)); do
			for _ in $(seq 100); do [ -e "$out.$i.ready" ] && break; sleep 0.05; done
		done
		# (a tap that is only slow to get ready goes unremarked)
		gso_tap_start /tmp/gtap "$base" $((base + n - 1)) || [ $? = 2 ] ||
			diag "$name: the tap did not start"
		if [ "$kind" = toggle ]; then
			rm -f /tmp/gtoggle.stop /tmp/gtoggle.n
			toggler &
			TOGGLE_PID=$!
		fi
		for ((i = 0; i < n; i++)); do
			read -r proto fam addr count rest <<<"${specs[i]}"
			# shellcheck disable=SC2086 # rest: the sender's own arguments
			"$G" "$proto" "$fam" "$addr" $((base + i)) "$count" $rest >"$out.$i.err" 2>&1 &
			spids+=($!)
		done
		wait "${spids[@]}"
		wait "${rpids[@]}"
		if [ -n "$TOGGLE_PID" ]; then
			touch /tmp/gtoggle.stop
			wait "$TOGGLE_PID"
			TOGGLE_PID=
			diag "$name: $(cat /tmp/gtoggle.n 2>/dev/null || echo 0) feature flips while the flow ran"
		fi
		gso_tap_stop /tmp/gtap
		[ "$T_OTHERS" = 0 ] && break
		diag "$name: try $try: $T_OTHERS frame(s) not the flows' in the window, measuring again"
	done

	for ((i = 0; i < n; i++)); do
		read -r proto fam addr count rest <<<"${specs[i]}"
		total=$((total + count))
		what=$name
		[ "$n" -gt 1 ] && what="$name, flow $((i + 1)) ($proto $fam $addr $count $rest)"
		flow_received "$what" "$out.$i" "$count" $((count * 1000)) "every byte arrives"
	done
	is "$(rx_csum_errs)" "$e0" "$name: no new checksum error at the receiver (Tcp, Udp, Udp6 InCsumErrors)"

	if [ "$T_OTHERS" != 0 ]; then
		not_ok "$name: a window with the flows' frames only (4 tries; $T_OTHERS others in the last)"
		return
	fi
	if [ "$T_DROPS" != 0 ]; then
		skip "$name: counters against the frames handed over" "the tap dropped $T_DROPS frames"
		return
	fi
	diag "$name: $T_FRAMES frames handed over: $T_HWF asked of the chip ($T_HWW on the wire), $T_SWF requests it cannot take, $T_PLAIN already summed, $T_GSO GSO; largest $T_MAX bytes"
	is "$D_NEEDS $D_NONE $D_SW $D_DROP" "$T_HWW $((T_FRAMES - T_HWF)) $T_SWF 0" \
		"$name: tx-needs-csum, tx-csum-none, tx_csum_sw, tx_dropped as the frames handed over call for"
	case $kind in
	core)
		is "$T_GSO $T_HWF" "0 0" "$name: no GSO packet and no request for the chip reach the driver"
		if [ "$T_PLAIN" -gt "$T_SWF" ]; then
			ok "$name: the core checksummed the segments ($T_PLAIN of $T_FRAMES frames handed over summed, $T_SWF left to the driver)"
		else
			not_ok "$name: the core checksummed the segments ($T_PLAIN of $T_FRAMES frames handed over summed, $T_SWF left to the driver: tx_csum_sw +$D_SW)"
		fi
		;;
	tso)
		is "$T_SWF $D_SW" "0 0" "$name: nothing left to the driver to sum"
		if [ "$T_GSO" -gt 0 ]; then
			ok "$name: LargeSend took GSO packets ($T_GSO, largest frame $T_MAX bytes)"
		else
			not_ok "$name: LargeSend took GSO packets (none; largest frame $T_MAX bytes)"
		fi
		;;
	chipseg)
		is "$T_FRAMES $T_HWF $T_HWW $T_GSO" "$total $total $total 0" \
			"$name: the core segmented, every segment asked of the chip (frames, asked, on the wire, GSO)"
		;;
	coreseg)
		is "$T_FRAMES $T_PLAIN $T_SWF $T_GSO" "$total $total 0 0" \
			"$name: the core segmented and checksummed every segment (frames, summed, left to the driver, GSO)"
		;;
	tunchip)
		is "$T_GSO" 0 "$name: no GSO packet reaches the driver"
		if [ "$T_HWF" -gt "$T_SWF" ]; then
			ok "$name: the segments' outer checksums asked of the chip, the inner summed by the core ($T_HWF asked, $T_SWF left to the driver)"
		else
			not_ok "$name: the segments' outer checksums asked of the chip, the inner summed by the core ($T_HWF asked, $T_SWF left to the driver)"
		fi
		;;
	toggle)
		is "$T_SWF $D_SW" "0 0" "$name: nothing left to the driver to sum while the features flip"
		;;
	tunouter)
		# the tunnel's segmenter leaves the outer checksum a request
		# (from skb->dev->features), which the chip cannot take
		is "$T_GSO $T_HWF" "0 0" "$name: no GSO packet and no request for the chip reach the driver"
		if [ "$T_SWF" -gt "$T_PLAIN" ]; then
			ok "$name: the driver sums the segments' outer checksums ($T_SWF of $T_FRAMES frames left to it)"
		else
			not_ok "$name: the driver sums the segments' outer checksums ($T_SWF of $T_FRAMES frames left to it, $T_PLAIN summed)"
		fi
		;;
	drvseg)
		is "$T_FRAMES $T_PLAIN $T_SWF $T_GSO" "$total 0 $total 0" \
			"$name: the core segmented, the driver summed each segment's outer checksum (frames, summed, left to the driver, GSO)"
		;;
	esac
}

setup_topology
trap cleanup EXIT
D0=$(dmesg | wc -l)
DROP0=$(cat "/sys/class/net/$TX/statistics/tx_dropped")
ethtool -k "$TX" | grep -Eq '^tcp-segmentation-offload: on' ||
	diag "TSO is not on: $(ethtool -k "$TX" | grep -E '^tcp-segmentation-offload')"

# --- packet-socket GSO frames whose headers lie (SKB_GSO_DODGY)
tap_include "$G" dodgy "$TX" "$RX"

# --- TCP: page cache, user pages and zerocopy frags over IPv6 (the chip
# checksums no IPv6: the core sums the segments), LSRR (the chip's
# pseudo-header would be the first hop's), zerocopy over IPv4 (LargeSend)
V4=198.18.81.2
V6=2001:db8:81::2
gcase "TCP/IPv6, sendfile(2)" core "tcp 6 $V6 $TCPN sendfile"
gcase "TCP/IPv6, vmsplice(2) + splice(2) of user pages" core "tcp 6 $V6 $TCPN vmsplice"
gcase "TCP/IPv6, MSG_ZEROCOPY" core "tcp 6 $V6 $TCPN zerocopy"
gcase "TCP/IPv4, MSG_ZEROCOPY" tso "tcp 4 $V4 $TCPN zerocopy"
source_routing 198.18.81 "$RX" "$TX"
gcase "TCP/IPv4 with a loose source route, sendfile(2)" core \
	"tcp 4 198.18.81.3 $TCPN sendfile lsrr:198.18.81.2"

# --- UDP GSO: the core segments; the chip sums UDP/IPv4 segments, the
# core all others
gcase "UDP GSO/IPv4" chipseg "udp 4 $V4 $UDPN 8 1"
gcase "UDP GSO/IPv6" coreseg "udp 6 $V6 $UDPN 8 1"
gcase "UDP GSO/IPv4 from 2 threads on one socket" chipseg "udp 4 $V4 $UDPN 8 2"
gcase "UDP GSO/IPv6, MSG_ZEROCOPY" coreseg "udp 6 $V6 $UDPN 8 1 zerocopy"
add_vlan 100 198.18.100
gcase "UDP GSO/IPv4 over VLAN 100, the tag the chip's" chipseg "udp 4 198.18.100.2 $UDPN 8 1"
ethtool -K "$TX" txvlan off >/dev/null
gcase "UDP GSO/IPv4 over VLAN 100, the tag in-band" coreseg "udp 4 198.18.100.2 $UDPN 8 1"
ethtool -K "$TX" txvlan on >/dev/null
add_8021ad 201 198.18.201
gcase "UDP GSO/IPv4 over 802.1ad" coreseg "udp 4 198.18.201.2 $UDPN 8 1"

# --- tunnels: the inner checksums are never the chip's; an outer UDP/IPv4
# checksum is. Where the chip can checksum neither, the contract is that
# the core sums the segments whole.
add_vxlan vx4 42 198.18.81.1 198.18.81.2 4789 198.18.42 noudpcsum
gcase "TCP/IPv4 in VXLAN over IPv4, no outer checksum" core "tcp 4 198.18.42.2 $TCPN bulk"
gcase "UDP GSO/IPv4 in VXLAN over IPv4, no outer checksum" coreseg "udp 4 198.18.42.2 32 8 1"
add_vxlan vx4c 43 198.18.81.1 198.18.81.2 4791 198.18.43 udpcsum
gcase "TCP/IPv4 in VXLAN over IPv4 with an outer checksum" tunchip "tcp 4 198.18.43.2 $TCPN bulk"
gcase "UDP GSO/IPv4 in VXLAN over IPv4 with an outer checksum" chipseg "udp 4 198.18.43.2 32 8 1"
# Over IPv6 (and in GRE with checksums) the outer checksum is no more the
# chip's than the inner one; __skb_udp_tunnel_segment() and
# gre_gso_segment() decide whether to leave it to the device from
# skb->dev->features, not from the features cp_features_check() returned:
# the outer checksum stays a request on each segment, which the driver
# resolves (as 8139cp's tunnel patch says)
add_vxlan vx6 46 2001:db8:81::1 2001:db8:81::2 4790 198.18.46
gcase "TCP/IPv4 in VXLAN over IPv6 (outer UDPv6 checksum)" tunouter "tcp 4 198.18.46.2 $TCPN bulk"
gcase "UDP GSO/IPv4 in VXLAN over IPv6 (outer UDPv6 checksum)" drvseg "udp 4 198.18.46.2 32 8 1"
if ip link add gre1 type gre local 198.18.81.1 remote 198.18.81.2 csum 2>/dev/null &&
	ip -n rx link add gre1 type gre local 198.18.81.2 remote 198.18.81.1 csum 2>/dev/null; then
	sysctl -qw net.ipv6.conf.gre1.disable_ipv6=1
	ip netns exec rx sysctl -qw net.ipv6.conf.gre1.disable_ipv6=1
	ip addr add 198.18.47.1/24 dev gre1 && ip link set gre1 up
	ip -n rx addr add 198.18.47.2/24 dev gre1 && ip -n rx link set gre1 up
	gcase "TCP/IPv4 in GRE with checksums over IPv4" tunouter "tcp 4 198.18.47.2 $TCPN bulk"
else
	skip "TCP/IPv4 in GRE with checksums over IPv4" "no ip_gre in this kernel"
	ip link del gre1 2>/dev/null
fi

# --- the decision against features that change under a running flow, and
# against flows that meet in the driver
gcase "TCP/IPv4 while TSO and tx checksumming flip" toggle "tcp 4 $V4 400 bulk"
gcase "four flows at once" mixed "tcp 4 $V4 $TCPN bulk" "tcp 6 $V6 $TCPN sendfile" \
	"udp 4 $V4 $UDPN 8 2" "udp 6 $V6 $UDPN 8 1"

is "$(($(cat "/sys/class/net/$TX/statistics/tx_dropped") - DROP0))" 0 "nothing dropped on the port during the test (tx_dropped)"
warn=$(dmesg | tail -n +$((D0 + 1)) | grep -E 'WARNING:|BUG:|Oops|Net bug|bad offload|skb_warn_bad_offload|caps=\(' | head -5)
is "$warn" "" "no kernel warning, BUG, 'Net bug' or bad offload in the log during the test"
done_testing
