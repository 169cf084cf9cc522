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
add_vlan 100 198.18.100
show "TCP/IPv4 over VLAN (chip tags)" 4 tcp 198.18.100.2
ethtool -K "$TX" txvlan off >/dev/null
show "TCP/IPv4 over VLAN (in-band tag)" 4 tcp 198.18.100.2
ethtool -K "$TX" txvlan on >/dev/null
add_vxlan vx4 42 198.18.81.1 198.18.81.2 4789 198.18.42 noudpcsum
show "TCP/IPv4 in VXLAN over IPv4" 4 tcp 198.18.42.2
echo "csum: receiver checksum errors: TcpInCsumErrors=$(rx_stat TcpInCsumErrors) UdpInCsumErrors=$(rx_stat UdpInCsumErrors) Udp6InCsumErrors=$(rx_stat Udp6InCsumErrors)"
