#!/bin/bash
# bench-timeout: 900
# IPv4 headers with options (IP_OPTIONS) through 8139cp, TCP and UDP, with
# and without a VLAN tag. The chip sums a pseudo-header of its own, from the
# addresses in the IPv4 header. With a loose or strict source route (LSRR,
# SSRR) the header's destination is the first hop, while TCP's checksum
# covers the final destination: the seed in the checksum field tells, so
# such frames are checksummed in software and arrive intact. Options that
# leave the addresses alone (timestamps, record route, NOPs) stay with the
# chip. The same boot runs some of these flows through 6.12's driver with
# the net fix alone, and through 6.12's own driver.
#
# UDP is different: the stack itself seeds a source-routed datagram's
# checksum with the first hop (udp_sendmsg() sums over the flow's address),
# so the chip's result is the stack's own, and such a datagram fares
# exactly as when the stack checksums it in software (tx off), which this
# test measures in the same boot and compares.
#
# rx owns SUBNET.2 and SUBNET.3: a flow to .3 source-routed through .2 leaves
# with .2 in the header, and rx's stack (accept_source_route) delivers it to
# .3 and verifies its checksum against .3.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"

# FLOW_WAIT=5 where a flow may be lost: it gives up after 5 s, not 30

restore_driver() {
	ethtool -K "$TX" tx on >/dev/null 2>&1
	teardown_topology
	modprobe -r 8139cp_pristine 8139cp_netfix 2>/dev/null
	lsmod | grep -q '^8139cp ' || modprobe 8139cp
}
trap restore_driver EXIT

setup_both() {
	setup_topology
	source_routing 198.18.81 "$RX" "$TX"
	add_vlan 100 198.18.100
	source_routing 198.18.100 rx.100 tx.100
}

# CASES: "PROTO SUBNET OPTION": TCP with every option untagged, and with
# two over VLAN 100 with the tag inserted by the chip (an in-band tag is
# software's anyway); UDP with the options that leave addresses alone
# and one source route (test_8139cp_paths sends UDP with NOPs)
CASES=()
for opt in ipopts ts rr lsrr ssrr; do CASES+=("tcp 198.18.81 $opt"); done
CASES+=("tcp 198.18.100 ts" "tcp 198.18.100 lsrr")
CASES+=("udp 198.18.81 ts" "udp 198.18.81 rr" "udp 198.18.81 lsrr" "udp 198.18.100 ts")
# 16 chunks a flow: the options are in every segment's header either way
export FLOW_COUNT=16

# case_args PROTO SUBNET OPTION: sets NAME and ARGS (flow's arguments)
case_args() {
	local where=
	[ "$2" = 198.18.100 ] && where=" over VLAN 100"
	NAME="${1^^}/IPv4 with $3$where"
	case $3 in
	lsrr | ssrr) ARGS="4 $1 $2.3 $3:$2.2" ;;
	*) ARGS="4 $1 $2.2 $3" ;;
	esac
}

setup_both
tcp0=$(rx_stat TcpInCsumErrors)
drop0=$(cat "/sys/class/net/$TX/statistics/tx_dropped")
for c in "${CASES[@]}"; do
	# shellcheck disable=SC2086
	set -- $c
	case_args "$@"
	case "$1 $3" in
	"tcp lsrr" | "tcp ssrr")
		# shellcheck disable=SC2086
		check_flow "$NAME" sw $ARGS
		;;
	"udp lsrr" | "udp ssrr")
		# what the stack's own software checksum gets, then the driver:
		# the same datagrams arrive, the same fail the receiver's check
		# (errors per try: a try that met frames of others is repeated)
		ethtool -K "$TX" tx off >/dev/null
		u0=$(rx_stat UdpInCsumErrors)
		# shellcheck disable=SC2086
		FLOW_WAIT=5 flow "$NAME (tx off)" $ARGS 2>/dev/null
		stack="$FLOW_OK $((($(rx_stat UdpInCsumErrors) - u0) / FLOW_TRIES))"
		ethtool -K "$TX" tx on >/dev/null
		u0=$(rx_stat UdpInCsumErrors)
		# shellcheck disable=SC2086
		FLOW_WAIT=5 flow "$NAME" $ARGS
		got="$FLOW_OK $((($(rx_stat UdpInCsumErrors) - u0) / FLOW_TRIES))"
		is "$got" "$stack" \
			"$NAME: arrived (1 or 0) and receiver UdpInCsumErrors '$got', as when the stack checksums it (tx off)"
		[ "$STRAYS" = 0 ] && [ "$OFFLOAD_DELTA" -gt 0 ] && [ "$SW_DELTA" = 0 ] &&
			ok "$NAME: offloaded to the chip, whose pseudo-header is the stack's (tx-needs-csum +$OFFLOAD_DELTA, tx_csum_sw +$SW_DELTA)" ||
			not_ok "$NAME: offloaded to the chip, whose pseudo-header is the stack's (tx-needs-csum +$OFFLOAD_DELTA, tx_csum_sw +$SW_DELTA)"
		;;
	*)
		# shellcheck disable=SC2086
		check_flow "$NAME" offload $ARGS
		;;
	esac
done
is "$(($(rx_stat TcpInCsumErrors) - tcp0))" 0 "receiver: no TCP checksum error"
is "$(($(cat "/sys/class/net/$TX/statistics/tx_dropped") - drop0))" 0 "no packet dropped (tx_dropped)"
teardown_topology

# 6.12's driver with the net fix alone (8139cp_netfix.ko, built from the
# tree at that patch): what the fix promises, without the net-next series
modprobe -r 8139cp
CP_MODULE=8139cp_netfix setup_both
grep -Eq '^\s*tx-checksum-ipv4: on' <<<"$(ethtool -k "$TX")" &&
	ok "the net fix alone: NETIF_F_IP_CSUM, as 6.12" || not_ok "the net fix alone: NETIF_F_IP_CSUM, as 6.12"
tcp0=$(rx_stat TcpInCsumErrors)
bad=
for c in "tcp 198.18.81 ts" "tcp 198.18.81 lsrr" "tcp 198.18.81 ssrr" "tcp 198.18.100 lsrr" \
	"udp 198.18.81 ts"; do
	# shellcheck disable=SC2086
	set -- $c
	case_args "$@"
	# shellcheck disable=SC2086
	flow "$NAME" $ARGS 2>/dev/null
	[ "$FLOW_OK" = 1 ] || bad+=" $NAME;"
done
ethtool -K "$TX" txvlan off >/dev/null
flow "TCP/IPv4 over VLAN 100, in-band tag" 4 tcp 198.18.100.2 2>/dev/null
[ "$FLOW_OK" = 1 ] || bad+=" TCP/IPv4 over VLAN 100, in-band tag;"
ethtool -K "$TX" txvlan on >/dev/null
is "${bad:-none}" none "the net fix alone: every TCP flow and UDP without a source route arrives intact (lost:${bad:- none})"
is "$(($(rx_stat TcpInCsumErrors) - tcp0))" 0 "the net fix alone: receiver counts no TCP checksum error"
teardown_topology
modprobe -r 8139cp_netfix

# 6.12's driver offloads all of these to the chip (NETIF_F_IP_CSUM): the
# cases the comparison needs
modprobe -r 8139cp 2>/dev/null	# ours is out already
CP_MODULE=8139cp_pristine setup_both
tcp0=$(rx_stat TcpInCsumErrors)
declare -A PRISTINE
for c in "tcp 198.18.81 ts" "tcp 198.18.81 lsrr" "tcp 198.18.100 lsrr" "udp 198.18.81 ts"; do
	# shellcheck disable=SC2086
	set -- $c
	case_args "$@"
	# shellcheck disable=SC2086
	# the source-routed ones are lost: they give up after 3 s
	wait=30
	[ "${3%srr}" = "$3" ] || wait=3
	FLOW_WAIT=$wait flow "$NAME" $ARGS 2>/dev/null
	PRISTINE[$NAME]=$FLOW_OK
	diag "6.12's driver, $NAME: $([ "$FLOW_OK" = 1 ] && echo intact || echo LOST)"
done
tcp_errs=$(($(rx_stat TcpInCsumErrors) - tcp0))
diag "6.12's driver: receiver TcpInCsumErrors +$tcp_errs"
is "${PRISTINE["TCP/IPv4 with lsrr"]}${PRISTINE["TCP/IPv4 with lsrr over VLAN 100"]}" 00 \
	"6.12's driver: TCP with a source route does not arrive (the chip's checksum covers the first hop)"
[ "$tcp_errs" -gt 0 ] && ok "6.12's driver: ... and the receiver counts TCP checksum errors (+$tcp_errs)" ||
	not_ok "6.12's driver: ... and the receiver counts TCP checksum errors (+$tcp_errs)"
is "${PRISTINE["TCP/IPv4 with ts"]}${PRISTINE["UDP/IPv4 with ts"]}" 11 \
	"6.12's driver: TCP and UDP with timestamps arrive (options the chip handles)"
done_testing
