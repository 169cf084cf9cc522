#!/bin/bash
# TCP over a VLAN device with the tag in-band, where LargeSend must not get
# the frames; then raw frames from a packet socket with a virtio-net header
# (raw_frames.c): every frame byte for byte what a NETIF_F_HW_CSUM device
# sends, or refused, and counted on the path it took. The same frames go
# through 6.12's own 8139cp (8139cp_pristine.ko), whose outcome is printed
# for the README's comparison, not asserted.
# bench-timeout: 900
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"

BURST=${RAW_BURST:-3000}

# Tags stay in the frame at the receiver, whatever VLAN they carry; the
# sender sends nothing of its own (no addresses, no IPv6), so that the
# device's counters move for the test's frames only.
receiver_raw() {
	ip netns exec rx ethtool -K "$RX" rxvlan off ||
		diag "cannot turn rxvlan off on the receiver"
	ip addr flush dev "$TX"
	sysctl -qw "net.ipv6.conf.$TX.disable_ipv6=1"
}

# snmp NS FILE LINE FIELD: a counter of /proc/net/FILE (snmp, netstat) in
# namespace NS, found by its name in the header line
snmp() {
	ip netns exec "$1" awk -v p="$3:" -v f="$4" '$1 == p {
		if (!h) { for (i = 2; i <= NF; i++) if ($i == f) c = i; h = 1 }
		else print $c + 0 }' "/proc/net/$2"
}

# rx_errors: what the receiver refused for a bad checksum or header
rx_errors() {
	echo $(($(snmp rx snmp Tcp InCsumErrors) + $(snmp rx snmp Tcp InErrs) +
		$(snmp rx snmp Ip InHdrErrors) + $(snmp rx netstat IpExt InCsumErrors)))
}

# vlan_bulk LABEL: 1 MB over TCP on a VLAN device, tag in-band; sets
# FLOW_OK, OFFLOAD_DELTA and STRAYS (see flow()), RX_BAD (frames the
# receiver refused), DROPPED (tx_dropped of the port) and RETRANS (TCP
# retransmissions, which timing alone can cause: reported, not asserted)
vlan_bulk() {
	local r0 d0 e0
	add_vlan 100 198.18.100
	ethtool -K "$TX" txvlan off >/dev/null
	r0=$(awk '/^Tcp:/ { if (h) print $13; h = 1 }' /proc/net/snmp)
	d0=$(cat /sys/class/net/$TX/statistics/tx_dropped)
	e0=$(rx_errors)
	FLOW_COUNT=1000 flow "$1" 4 tcp 198.18.100.2
	RETRANS=$(($(awk '/^Tcp:/ { if (h) print $13; h = 1 }' /proc/net/snmp) - r0))
	DROPPED=$(($(cat /sys/class/net/$TX/statistics/tx_dropped) - d0))
	RX_BAD=$(($(rx_errors) - e0))
	ethtool -K "$TX" txvlan on >/dev/null
	ip link del tx.100
	ip -n rx link del rx.100
}

trap 'teardown_topology' EXIT
setup_topology
vlan_bulk "TCP over VLAN, tag in-band"
[ "$FLOW_OK" = 1 ] && ok "TCP over a VLAN device with txvlan off: every byte arrives" ||
	not_ok "TCP over a VLAN device with txvlan off: every byte arrives"
# the chip checksums, or cuts with LargeSend, none of the tagged frames
is "strays=$STRAYS tx-needs-csum=+$OFFLOAD_DELTA dropped=$DROPPED rx-refused=$RX_BAD" \
	"strays=0 tx-needs-csum=+0 dropped=0 rx-refused=0" \
	"... the chip gets no tagged frame to checksum, nothing dropped or refused"
diag "TCP over VLAN: $RETRANS retransmissions (timing alone can cause them)"
receiver_raw
tap_include "$RAW_FRAMES" "$TX" "$RX" ours "$BURST"
teardown_topology

# 6.12's own driver, for the record
modprobe -r 8139cp
CP_MODULE=8139cp_pristine setup_topology
# lost through it: give up after 5 s, not 30
FLOW_WAIT=5 vlan_bulk "TCP over VLAN, tag in-band (6.12's driver)" >/dev/null
diag "pristine TCP over a VLAN device with txvlan off: bytes $([ "$FLOW_OK" = 1 ] && echo intact || echo LOST), $RETRANS retransmissions, $DROPPED dropped"
receiver_raw
"$RAW_FRAMES" "$TX" "$RX" pristine $((BURST / 5)) | grep '^#'
teardown_topology
modprobe -r 8139cp_pristine
modprobe 8139cp
done_testing
