#!/bin/bash
# Seed 004's case: TCP over IPv4 and IPv6 through a device whose checksum
# offload is limited to NETIF_F_IP_CSUM (vmxnet3 with tx-checksum-ipv6 off)
# arrives with valid checksums: the stack resolves what the device cannot.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"
trap 'teardown_topology; [ -n "${V:-}" ] && ip addr flush dev "$V"' EXIT
setup_topology

V=$(iface_by_driver vmxnet3) || { echo "Bail out! no vmxnet3 port"; exit 1; }
ethtool -K "$V" tx-checksum-ipv6 off >/dev/null 2>&1
features=$(ethtool -k "$V")
grep -Eq '^\s*tx-checksum-ipv4: on' <<<"$features" && grep -Eq '^\s*tx-checksum-ipv6: off' <<<"$features" &&
	! grep -Eq '^\s*tx-checksum-ip-generic: on' <<<"$features" &&
	ok "vmxnet3 limited to NETIF_F_IP_CSUM" || not_ok "vmxnet3 limited to NETIF_F_IP_CSUM"

ip addr add 198.18.82.1/24 dev "$V"
ip -6 addr add 2001:db8:82::1/64 dev "$V" nodad
ip link set "$V" up
ip -n rx addr add 198.18.82.2/24 dev "$RX"
ip -n rx -6 addr add 2001:db8:82::2/64 dev "$RX" nodad
for _ in $(seq 50); do ping -c1 -W1 198.18.82.2 >/dev/null 2>&1 && break; sleep 0.2; done

errs0=$(rx_stat TcpInCsumErrors)
for fam in 4 6; do
	addr=198.18.82.2
	[ $fam = 6 ] && addr=2001:db8:82::2
	flow "TCP/IPv$fam via IP_CSUM-only device" $fam tcp $addr
	[ $FLOW_OK = 1 ] && ok "TCP/IPv$fam through an IP_CSUM-only device arrives intact" ||
		not_ok "TCP/IPv$fam through an IP_CSUM-only device arrives intact"
done
is "$(($(rx_stat TcpInCsumErrors) - errs0))" 0 "receiver: no TCP checksum error"
done_testing
