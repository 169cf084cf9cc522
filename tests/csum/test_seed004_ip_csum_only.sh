#!/bin/bash
# Seed 004's case: TCP over IPv4 and IPv6 through a device whose checksum
# offload is limited to NETIF_F_IP_CSUM arrives with valid checksums. The
# device is 6.12's own 8139cp (before our conversion), built from the
# pristine tree as 8139cp_pristine.ko and loaded in place of ours.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"

restore_driver() {
	teardown_topology
	modprobe -r 8139cp_pristine 2>/dev/null
	modprobe 8139cp
}
trap restore_driver EXIT
modprobe -r 8139cp 2>/dev/null
CP_MODULE=8139cp_pristine setup_topology

features=$(ethtool -k "$TX")
grep -Eq '^\s*tx-checksum-ipv4: on' <<<"$features" &&
	grep -Eq '^\s*tx-checksum-ip-generic: off \[fixed\]' <<<"$features" &&
	grep -Eq '^\s*tx-checksum-ipv6: off \[fixed\]' <<<"$features" &&
	ok "6.12's 8139cp is limited to NETIF_F_IP_CSUM" ||
	not_ok "6.12's 8139cp is limited to NETIF_F_IP_CSUM"

errs0=$(rx_stat TcpInCsumErrors)
flow "TCP/IPv4" 4 tcp 198.18.81.2
[ $FLOW_OK = 1 ] && ok "TCP/IPv4 through an IP_CSUM-only device arrives intact" ||
	not_ok "TCP/IPv4 through an IP_CSUM-only device arrives intact"
flow "TCP/IPv6" 6 tcp 2001:db8:81::2
[ $FLOW_OK = 1 ] && ok "TCP/IPv6 through an IP_CSUM-only device arrives intact" ||
	not_ok "TCP/IPv6 through an IP_CSUM-only device arrives intact"
is "$(($(rx_stat TcpInCsumErrors) - errs0))" 0 "receiver: no TCP checksum error"
done_testing
