#!/bin/bash
# Checksum offload (seeds 001-006): flows through 8139cp on NETIF_F_HW_CSUM,
# one line each with the path its checksums took.
T=/bench/tests/csum
diag() { echo "  ($*)"; }
. $T/lib.sh
trap teardown_topology EXIT
setup_topology
FLOW_COUNT=24

show() {
	local name=$1
	shift
	flow "$name" "$@"
	local path="checksummed by the stack before the driver"
	[ "$SW_DELTA" -gt 0 ] && path="software (skb_csum_offload_chk resolved it)"
	[ "$OFFLOAD_DELTA" -gt 0 ] && [ "$SW_DELTA" = 0 ] && path="offloaded to the chip"
	[ "$OFFLOAD_DELTA" -gt 0 ] && [ "$SW_DELTA" -gt 0 ] && path="mixed"
	printf 'csum: %-36s %-8s %s [offload +%s, sw +%s]\n' "$name" \
		"$([ $FLOW_OK = 1 ] && echo arrived || echo LOST)" "$path" "$OFFLOAD_DELTA" "$SW_DELTA"
}

echo "csum: 8139cp features: $(ethtool -k "$TX" | grep -E '^\s*tx-checksum-(ip-generic|ipv4):' | tr -s '\t\n' '  ')"
show "TCP/IPv4" 4 tcp 198.18.81.2
show "UDP/IPv4" 4 udp 198.18.81.2
show "TCP/IPv4 with IP options" 4 tcp 198.18.81.2 ipopts
show "TCP/IPv6" 6 tcp 2001:db8:81::2
show "UDP/IPv6 with dest options header" 6 udp 2001:db8:81::2 dstopts
ip link add link "$TX" name tx.100 type vlan id 100
ip -n rx link add link "$RX" name rx.100 type vlan id 100
ip addr add 198.18.100.1/24 dev tx.100 && ip link set tx.100 up
ip -n rx addr add 198.18.100.2/24 dev rx.100 && ip -n rx link set rx.100 up
show "TCP/IPv4 over VLAN (chip tags)" 4 tcp 198.18.100.2
ethtool -K "$TX" txvlan off >/dev/null
show "TCP/IPv4 over VLAN (in-band tag)" 4 tcp 198.18.100.2
ethtool -K "$TX" txvlan on >/dev/null
ip link add vx4 type vxlan id 42 local 198.18.81.1 remote 198.18.81.2 dstport 4789 noudpcsum dev "$TX"
ip -n rx link add vx4 type vxlan id 42 local 198.18.81.2 remote 198.18.81.1 dstport 4789 noudpcsum dev "$RX"
ip addr add 198.18.42.1/24 dev vx4 && ip link set vx4 up
ip -n rx addr add 198.18.42.2/24 dev vx4 && ip -n rx link set vx4 up
show "TCP/IPv4 in VXLAN over IPv4" 4 tcp 198.18.42.2
echo "csum: receiver checksum errors: TcpInCsumErrors=$(rx_stat TcpInCsumErrors) UdpInCsumErrors=$(rx_stat UdpInCsumErrors) Udp6InCsumErrors=$(rx_stat Udp6InCsumErrors)"
