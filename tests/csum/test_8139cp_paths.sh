#!/bin/bash
# bench-timeout: 600
# Traffic through 8139cp on NETIF_F_HW_CSUM: every flow arrives intact with
# valid checksums (the receiver verifies them all), and the driver's counters
# show which path each took: TCP/UDP over plain IPv4 offloaded to the chip,
# everything else checksummed in software by skb_csum_offload_chk().
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"
trap teardown_topology EXIT
setup_topology
drop0=$(cat "/sys/class/net/$TX/statistics/tx_dropped")

features=$(ethtool -k "$TX")
grep -Eq '^\s*tx-checksum-ip-generic: on' <<<"$features" && ok "8139cp advertises NETIF_F_HW_CSUM" ||
	not_ok "8139cp advertises NETIF_F_HW_CSUM"
grep -Eq '^\s*tx-checksum-ipv4: off \[fixed\]' <<<"$features" && ok "8139cp no longer advertises NETIF_F_IP_CSUM" ||
	not_ok "8139cp no longer advertises NETIF_F_IP_CSUM"

check_flow "TCP/IPv4" offload 4 tcp 198.18.81.2
check_flow "UDP/IPv4" offload 4 udp 198.18.81.2
check_flow "TCP/IPv4 with IP options" offload 4 tcp 198.18.81.2 ipopts
check_flow "UDP/IPv4 with IP options" offload 4 udp 198.18.81.2 ipopts
check_flow "TCP/IPv6" sw 6 tcp 2001:db8:81::2
check_flow "UDP/IPv6" sw 6 udp 2001:db8:81::2
check_flow "TCP/IPv6 with a destination options header" sw 6 tcp 2001:db8:81::2 dstopts
check_flow "UDP/IPv6 with a destination options header" stack 6 udp 2001:db8:81::2 dstopts

# VLAN: the chip inserts the tag itself (offloaded); with tx-vlan-offload off
# the tag is in-band and hides the IPv4 type from the chip (software).
add_vlan 100 198.18.100
check_flow "TCP/IPv4 over VLAN 100 (tag inserted by the chip)" offload 4 tcp 198.18.100.2
ethtool -K "$TX" txvlan off >/dev/null
check_flow "TCP/IPv4 over VLAN 100 (in-band tag)" sw 4 tcp 198.18.100.2
check_flow "UDP/IPv4 over VLAN 100 (in-band tag)" sw 4 udp 198.18.100.2
ethtool -K "$TX" txvlan on >/dev/null

# QinQ: an 802.1ad tag the chip cannot insert, then 802.1Q
ip link add link "$TX" name tx.ad type vlan proto 802.1ad id 200
ip link add link tx.ad name tx.ad.300 type vlan id 300
sysctl -qw net.ipv6.conf.tx/ad.disable_ipv6=1 net.ipv6.conf.tx/ad/300.disable_ipv6=1
ip -n rx link add link "$RX" name rx.ad type vlan proto 802.1ad id 200
ip -n rx link add link rx.ad name rx.ad.300 type vlan id 300
ip link set tx.ad up && ip addr add 198.18.200.1/24 dev tx.ad.300 && ip link set tx.ad.300 up
ip -n rx link set rx.ad up && ip -n rx addr add 198.18.200.2/24 dev rx.ad.300 &&
	ip -n rx link set rx.ad.300 up
static_neighbours tx.ad.300 rx.ad.300 198.18.200
check_flow "TCP/IPv4 over QinQ" sw 4 tcp 198.18.200.2

# VXLAN over IPv4 and IPv6 underlays: inner checksums are not the chip's.
# noudpcsum: with an outer UDP checksum, tunnelled packets that carry no
# checksum request of their own (ARP) ask for the outer one, which the chip
# rightly offloads; without it every request here is an inner one.
add_vxlan vx4 42 198.18.81.1 198.18.81.2 4789 198.18.42 noudpcsum
check_flow "TCP/IPv4 in VXLAN over IPv4" sw 4 tcp 198.18.42.2
check_flow "UDP/IPv4 in VXLAN over IPv4" sw 4 udp 198.18.42.2
add_vxlan vx6 46 2001:db8:81::1 2001:db8:81::2 4790 198.18.46
check_flow "TCP/IPv4 in VXLAN over IPv6" sw 4 tcp 198.18.46.2

is "$(($(cat "/sys/class/net/$TX/statistics/tx_dropped") - drop0))" 0 "no packet dropped (tx_dropped)"
is "$(rx_stat TcpInCsumErrors)" 0 "receiver: TcpInCsumErrors stays 0"
is "$(rx_stat UdpInCsumErrors)" 0 "receiver: UdpInCsumErrors stays 0"
is "$(rx_stat Udp6InCsumErrors)" 0 "receiver: Udp6InCsumErrors stays 0"

# Negative control: the receiver does catch a bad checksum.
before=$(rx_stat UdpInCsumErrors)
ip netns exec rx "$FLOW" recv 4 udp 5999 1 /tmp/negative &
neg=$!
sleep 0.5
"$FLOW" badudp "$TX" "$RX_MAC" 198.18.81.1 198.18.81.2 5999
sleep 1
kill "$neg" 2>/dev/null
wait "$neg"
is "$(($(rx_stat UdpInCsumErrors) - before))" 1 "negative control: a UDP datagram with a wrong checksum is counted as an error"

done_testing
