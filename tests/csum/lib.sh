# shellcheck shell=bash
# Topology for the checksum tests: the rtl8139 port (8139cp, the driver under
# test) in the script's own namespace (tests/lib/netns.sh), the e1000
# receiver in netns "rx" with RX checksum offload off, so its stack verifies
# every checksum. Both sit on one QEMU hub that leads nowhere else.
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FLOW=$HERE/flow
. "$HERE/../lib/netns.sh"
own_netns csum "$@"

# iface_by_driver DRIVER: DRIVER's port in this namespace (no process is
# started: under the debug kernel each one costs a good part of a second)
iface_by_driver() {
	local d
	for d in /sys/class/net/*/device/driver; do
		[ "$d" -ef "/sys/bus/pci/drivers/$1" ] || continue
		d=${d%/device/driver}
		echo "${d##*/}"
		return 0
	done
	return 1
}

# rebind_pci DRIVER: each PCI function DRIVER drives, unbound and bound
# again: a new netdev, in the initial namespace (the e1000 is built in)
rebind_pci() {
	local f drv=/sys/bus/pci/drivers/$1
	for f in "$drv"/0000:*; do
		[ -e "$f" ] || continue
		echo "${f##*/}" >"$drv/unbind" && echo "${f##*/}" >"$drv/bind"
	done
}

# host_iface_by_driver DRIVER: DRIVER's port in the initial namespace
host_iface_by_driver() { host bash -c "$(declare -f iface_by_driver); iface_by_driver $1"; }

# claim_port DRIVER: DRIVER's port, if the initial namespace has it, into
# this one (nothing to do when the script runs there)
claim_port() {
	local dev
	[ -n "${OWN_NETNS:-}" ] || return 0
	dev=$(host_iface_by_driver "$1") && host ip link set dev "$dev" netns $$
}

# stat NAME: a counter from the rx namespace's /proc/net/snmp or snmp6
rx_stat() {
	ip netns exec rx awk -v n="$1" '
		FILENAME ~ /snmp6/ { if ($1 == n) print $2; next }
		/^[A-Za-z]+:/ { p = $1; sub(":", "", p)
			if (hdr[p] == "") { hdr[p] = $0; next }
			split(hdr[p], h); for (i = 2; i <= NF; i++) if (p h[i] == n) print $i }
	' /proc/net/snmp /proc/net/snmp6
}

RAW_FRAMES=$HERE/raw_frames

# tx_counter NAME: tx_csum_offload (the netdev netlink family's tx-needs-csum,
# what the chip checksummed) or any ethtool -S counter of the port
tx_counter() {
	case $1 in
	tx_csum_offload) "$RAW_FRAMES" counters "$TX" | awk '{ print $1 }' ;;
	*) ethtool -S "$TX" | awk -v n="$1:" '$1 == n { v = $2 } END { print v + 0 }' ;;
	esac
}

# take_ports: fresh ports (nothing stacked on them, a VLAN sending onto
# the port or holding an ID the test adds on the receiver, or set on them
# while they sat in the initial namespace comes along), in this namespace
take_ports() {
	if [ -n "${OWN_NETNS:-}" ]; then
		modprobe -r 8139cp 8139cp_pristine 8139cp_netfix 2>/dev/null
		rebind_pci e1000
	fi
	# 8139cp is a module here, so that 6.12's own can stand in for ours
	lsmod | grep -q '^8139cp' || modprobe "${CP_MODULE:-8139cp}"
	# both ports into this namespace: a new one appears in the initial
	# namespace, and so does the e1000 when rx goes (after
	# teardown_topology, or a killed run's), asynchronously
	local end=$((SECONDS + 60))
	while [ $SECONDS -lt $end ]; do
		iface_by_driver e1000 >/dev/null || claim_port e1000
		iface_by_driver 8139cp >/dev/null || claim_port 8139cp
		iface_by_driver e1000 >/dev/null && iface_by_driver 8139cp >/dev/null && break
		sleep 0.2
	done
}

# stacked_on DRIVER...: devices of the initial namespace stacked on these
# drivers' ports here (their link is a port of another namespace with its
# ifindex)
stacked_on() {
	local drv dev idx at=
	[ -n "${OWN_NETNS:-}" ] || return 0
	for drv; do
		dev=$(iface_by_driver "$drv") || continue
		read -r idx <"/sys/class/net/$dev/ifindex"
		at+=" @if$idx:"
	done
	[ -n "$at" ] || return 0
	host ip -o -d link show | awk -v at="$at" '
		BEGIN { n = split(at, a, " ") }
		/link-netns/ && /[ \\](vlan|macvlan|macvtap|ipvlan|ipvtap|macsec) / {
			for (i = 1; i <= n; i++)
				if (index($0, a[i])) { sub(/@.*/, "", $2); print $2; next }
		}'
}

# port_lines DEV ADDR4 ADDR6 PEER4 PEER6 PEER_MAC: ip -batch lines that put
# the addresses on DEV, bring it up and make the peer's addresses known for
# good: no neighbour probes either way (a reply from the port is a frame
# too). One ip process a namespace.
port_lines() {
	echo "address add $2/24 dev $1"
	echo "address add $3/64 dev $1 nodad"
	echo "link set dev $1 up"
	echo "neighbour replace $4 lladdr $6 dev $1 nud permanent"
	echo "neighbour replace $5 lladdr $6 dev $1 nud permanent"
}

setup_topology() {
	local i
	# an rx this run left behind; deleting it hands the e1000 back to the
	# initial namespace
	[ -e /run/netns/rx ] && ip netns del rx
	take_ports
	# another process may stack a device on a new port in the moment it
	# sits in the initial namespace, and send through it from there; once
	# the port is here, nothing there can stack on it: delete what did
	local d stacked
	stacked=$(stacked_on 8139cp e1000)
	if [ -n "$stacked" ]; then
		for d in $stacked; do
			echo "# $d, of the initial namespace, was stacked on a port: deleted"
			host ip link del "$d"
		done
		stacked=$(stacked_on 8139cp e1000)
		[ -z "$stacked" ] || { echo "Bail out! devices of the initial namespace stacked on the ports: $stacked"; exit 1; }
	fi
	TX=$(iface_by_driver 8139cp) || { echo "Bail out! no 8139cp port"; exit 1; }
	RX=$(iface_by_driver e1000) || { echo "Bail out! no e1000 port"; exit 1; }
	read -r TX_MAC <"/sys/class/net/$TX/address"
	read -r RX_MAC <"/sys/class/net/$RX/address"
	trap 'teardown_topology; exit 1' TERM INT
	ip netns add rx
	# as little chatter of its own from the port as IPv6 allows (counter
	# windows measure again when a frame of another leaves in them)
	echo 0 >"/proc/sys/net/ipv6/conf/$TX/router_solicitations"
	{
		echo "link set dev $RX netns rx"
		port_lines "$TX" 198.18.81.1 2001:db8:81::1 198.18.81.2 2001:db8:81::2 "$RX_MAC"
	} | ip -force -b - || { echo "Bail out! cannot set up the port"; exit 1; }
	{
		echo "link set dev lo up"
		port_lines "$RX" 198.18.81.2 2001:db8:81::2 198.18.81.1 2001:db8:81::1 "$TX_MAC"
	} | ip -n rx -force -b - || { echo "Bail out! cannot set up the receiver"; exit 1; }
	# not the initial namespace's forwarding; the stack verifies checksums
	ip netns exec rx sh -c "echo 0 >/proc/sys/net/ipv4/ip_forward &&
		ethtool -K $RX rx off gro off >/dev/null"
	# wait for the links (the e1000 model reports link up after a moment)
	for i in $(seq 50); do
		ping -c1 -W1 198.18.81.2 >/dev/null 2>&1 && break
		sleep 0.2
	done
}

# add_vlan ID SUBNET: VLAN ID on both ends, SUBNET.1 here and SUBNET.2 in rx
add_vlan() {
	ip link add link "$TX" name "tx.$1" type vlan id "$1"
	sysctl -qw "net.ipv6.conf.tx/$1.disable_ipv6=1"	# IPv4 only: no chatter
	ip -n rx link add link "$RX" name "rx.$1" type vlan id "$1"
	ip addr add "$2.1/24" dev "tx.$1" && ip link set "tx.$1" up
	ip -n rx addr add "$2.2/24" dev "rx.$1" && ip -n rx link set "rx.$1" up
	static_neighbours "tx.$1" "rx.$1" "$2"
}

# source_routing SUBNET RXDEV TXDEV: rx takes SUBNET.3 on RXDEV as well and
# accepts source routes there; TXDEV knows .3's address for good
source_routing() {
	ip -n rx addr add "$1.3/24" dev "$2"
	ip netns exec rx sysctl -qw net.ipv4.conf.all.accept_source_route=1 \
		"net.ipv4.conf.${2//./\/}.accept_source_route=1"
	ip neigh replace "$1.3" lladdr "$(ip -n rx -br link show "$2" | awk '{print $3}')" \
		dev "$3" nud permanent
}

# add_8021ad ID SUBNET: an 802.1ad tag (which the chip cannot insert: it
# goes in-band) on both ends as tx.ad and rx.ad, SUBNET.1 here and SUBNET.2
# in rx, IPv4 only
add_8021ad() {
	ip link add link "$TX" name tx.ad type vlan proto 802.1ad id "$1"
	sysctl -qw net.ipv6.conf.tx/ad.disable_ipv6=1
	ip -n rx link add link "$RX" name rx.ad type vlan proto 802.1ad id "$1"
	ip netns exec rx sysctl -qw net.ipv6.conf.rx/ad.disable_ipv6=1
	ip addr add "$2.1/24" dev tx.ad && ip link set tx.ad up
	ip -n rx addr add "$2.2/24" dev rx.ad && ip -n rx link set rx.ad up
	static_neighbours tx.ad rx.ad "$2"
}

# static_neighbours HERE THERE SUBNET: SUBNET.1 on HERE and SUBNET.2 on
# THERE (in rx) know each other for good: no ARP in the counter windows
static_neighbours() {
	ip neigh replace "$3.2" lladdr "$(ip -n rx -br link show "$2" | awk '{print $3}')" \
		dev "$1" nud permanent
	ip -n rx neigh replace "$3.1" lladdr "$(ip -br link show "$1" | awk '{print $3}')" \
		dev "$2" nud permanent
}

# add_vxlan NAME VNI HERE THERE PORT SUBNET [options]: a VXLAN device NAME on
# both ends over the underlay addresses HERE (ours) and THERE (rx's)
add_vxlan() {
	local name=$1 vni=$2 here=$3 there=$4 port=$5 net=$6
	shift 6
	ip link add "$name" type vxlan id "$vni" local "$here" remote "$there" \
		dstport "$port" "$@" dev "$TX"
	sysctl -qw "net.ipv6.conf.$name.disable_ipv6=1"	# IPv4 inside: no chatter
	ip -n rx link add "$name" type vxlan id "$vni" local "$there" remote "$here" \
		dstport "$port" "$@" dev "$RX"
	ip addr add "$net.1/24" dev "$name" && ip link set "$name" up
	ip -n rx addr add "$net.2/24" dev "$name" && ip -n rx link set "$name" up
	static_neighbours "$name" "$name" "$net"
}

teardown_topology() {
	local d
	[ -e /run/netns/rx ] && ip netns del rx
	for d in tx.100 tx.ad vx4 vx6; do
		[ -e "/sys/class/net/$d" ] && ip link del "$d"
	done
	[ -n "${TX:-}" ] && [ -e "/sys/class/net/$TX" ] || return 0
	ethtool -K "$TX" txvlan on >/dev/null 2>&1
	ip addr flush dev "$TX"
}

# watch_start PORT [quiet] / watch_stop: a window on the port for a flow on
# PORT; watch_stop sets STRAYS, the frames of others the driver was handed
# in between (raw_frames.c "watch"), which would spoil the counter deltas.
watch_start() {
	rm -f /tmp/watch.stop /tmp/watch.out
	"$RAW_FRAMES" watch "$TX" "$@" /tmp/watch.stop >/tmp/watch.out &
	WATCH_PID=$!
	WATCH_READY=0
	for _ in $(seq 400); do
		grep -q '^ready$' /tmp/watch.out 2>/dev/null && { WATCH_READY=1; break; }
		sleep 0.05
	done
}
watch_stop() {
	touch /tmp/watch.stop
	wait "$WATCH_PID"
	STRAYS=$(tail -1 /tmp/watch.out)
	STRAY_WHAT=$(sed -n 's/^# //p' /tmp/watch.out)
	# not ready before the counters were read: it was still settling
	# when the flow began
	[ "$WATCH_READY" = 1 ] && [ "$STRAYS" != ready ] && [ -n "$STRAYS" ] || {
		STRAYS=-1
		STRAY_WHAT="the watch was not ready in time"
	}
}

# flow NAME FAMILY PROTO ADDR [OPTION]: one flow from the test's
# namespace to rx (OPTION: see flow.c); sets FLOW_OK, OFFLOAD_DELTA,
# SW_DELTA and FLOW_TRIES. A window in
# which frames of others left the port is measured again (at most 4 tries;
# then STRAYS stays non-zero and the deltas are not the flow's).
flow() {
	local name=$1 fam=$2 proto=$3 addr=$4 opt=${5:-} port
	local out=/tmp/flow.$$ count=${FLOW_COUNT:-48} o0 s0 got try quiet=
	for try in 1 2 3 4; do
		# a port no earlier flow of this test used: the watch tells the
		# flow's frames by port, and an earlier flow's tail is not its
		FLOW_PORT=$(((${FLOW_PORT:-$((5000 + RANDOM % 500))} + 1 - 5000) % 1000 + 5000))
		port=$FLOW_PORT
		rm -f "$out" "$out.ready"
		ip netns exec rx "$FLOW" recv "$fam" "$proto" $port "$count" "$out" &
		local pid=$!
		for _ in $(seq 100); do [ -e "$out.ready" ] && break; sleep 0.05; done
		watch_start $port $quiet
		o0=$(tx_counter tx_csum_offload)
		s0=$(tx_counter tx_csum_sw)
		"$FLOW" send "$fam" "$proto" "$addr" $port "$count" $opt 2>/tmp/flow.err
		wait $pid
		sleep 0.5
		OFFLOAD_DELTA=$(($(tx_counter tx_csum_offload) - o0))
		SW_DELTA=$(($(tx_counter tx_csum_sw) - s0))
		watch_stop
		FLOW_TRIES=$try
		[ "$STRAYS" = 0 ] && break
		diag "$name: $STRAYS frames of others left the port in the window (try $try; $STRAY_WHAT)"
		quiet=quiet
	done
	got=$(cat "$out" 2>/dev/null)
	FLOW_OK=0
	[ "$got" = "$count $((count * 1000)) 0" ] && FLOW_OK=1
	[ $FLOW_OK = 1 ] || { diag "$name: got '$got' (chunks bytes bad), want '$count $((count * 1000)) 0'"; sed 's/^/# /' /tmp/flow.err; }
}

# check_flow NAME PATH(offload|sw|stack) FAMILY PROTO ADDR [send option]: one
# flow (see flow()) that must arrive intact and take PATH through the port
check_flow() {
	local name=$1 path=$2
	shift 2
	flow "$name" "$@"
	# the deltas of a window that never stayed quiet are not the flow's
	local q=
	[ "$STRAYS" = 0 ] || q="; no quiet window in $FLOW_TRIES tries, $STRAYS frames of others in the last"
	[ $FLOW_OK = 1 ] && ok "$name: every byte arrives" || not_ok "$name: every byte arrives"
	case "$path" in
	offload)
		[ "$STRAYS" = 0 ] && [ "$OFFLOAD_DELTA" -gt 0 ] && [ "$SW_DELTA" = 0 ] &&
			ok "$name: offloaded to the chip (tx-needs-csum +$OFFLOAD_DELTA, tx_csum_sw +$SW_DELTA)" ||
			not_ok "$name: offloaded to the chip (tx-needs-csum +$OFFLOAD_DELTA, tx_csum_sw +$SW_DELTA$q)"
		;;
	sw)
		[ "$STRAYS" = 0 ] && [ "$SW_DELTA" -gt 0 ] && [ "$OFFLOAD_DELTA" = 0 ] &&
			ok "$name: checksummed in software by the driver (tx_csum_sw +$SW_DELTA, tx-needs-csum +$OFFLOAD_DELTA)" ||
			not_ok "$name: checksummed in software by the driver (tx_csum_sw +$SW_DELTA, tx-needs-csum +$OFFLOAD_DELTA$q)"
		;;
	stack)
		# UDPv6 with extension headers is checksummed by the stack itself
		# (__ip6_append_data asks for CHECKSUM_PARTIAL only without them)
		[ "$STRAYS" = 0 ] && [ "$SW_DELTA" = 0 ] && [ "$OFFLOAD_DELTA" = 0 ] &&
			ok "$name: checksummed by the stack before the driver (tx_csum_sw +0, tx-needs-csum +0)" ||
			not_ok "$name: checksummed by the stack before the driver (tx_csum_sw +$SW_DELTA, tx-needs-csum +$OFFLOAD_DELTA$q)"
		;;
	esac
	echo "# path $name: offload +$OFFLOAD_DELTA sw +$SW_DELTA" >&2
}

# wait_link: rx's 198.18.81.2 answers a ping (100 tries at most); says so
# when it never does
wait_link() {
	for _ in $(seq 100); do
		ping -c1 -W1 198.18.81.2 >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	diag "no ping to 198.18.81.2"
	return 1
}

# flow_received WHAT OUT COUNT BYTES CLAIM: what "flow recv" wrote to OUT
# (chunks bytes bad) is COUNT chunks, BYTES in all, none bad: ok or not_ok
# "WHAT: CLAIM", with the sender's stderr (OUT.err) when not; then the
# sender's MSG_ZEROCOPY line, if any
flow_received() {
	local got
	got=$(cat "$2" 2>/dev/null)
	if [ "$got" = "$3 $4 0" ]; then
		ok "$1: $5"
	else
		not_ok "$1: $5 (got '$got', want '$3 $4 0': chunks bytes bad)"
		sed 's/^/# /' "$2.err"
	fi
	grep -h '^# MSG_ZEROCOPY' "$2.err"
}

GSO_ATTACK=$HERE/gso_attack

# gso_tap_start FILE PORTLO PORTHI / gso_tap_stop FILE: gso_attack.c "tap",
# a window on the port for the flows on ports PORTLO to PORTHI, as TAP_PID,
# its stop file FILE.stop and its output FILE.out. gso_tap_start returns 0
# once it is ready, 1 when it ended before, 2 when it is not ready after
# some 30 s; gso_tap_stop sets the T_* counts of the frames handed over and the
# D_* counter deltas (all -1 when the tap said no such line)
gso_tap_start() {
	rm -f "$1.stop" "$1.out"
	"$GSO_ATTACK" tap "$TX" "$2" "$3" "$1.stop" >"$1.out" 2>&1 &
	TAP_PID=$!
	for _ in $(seq 600); do
		grep -q '^ready$' "$1.out" 2>/dev/null && return 0
		kill -0 "$TAP_PID" 2>/dev/null || return 1
		sleep 0.05
	done
	return 2
}
gso_tap_stop() {
	local line
	touch "$1.stop"
	wait "$TAP_PID"
	TAP_PID=
	line=$(tail -1 "$1.out")
	# shellcheck disable=SC2034 # the caller's
	if [[ "$line" =~ ^-?[0-9]+( -?[0-9]+){12}$ ]]; then
		read -r T_FRAMES T_HWF T_HWW T_SWF T_PLAIN T_GSO T_MAX T_DROPS D_NEEDS D_NONE D_SW \
			D_DROP T_OTHERS <<<"$line"
	else
		diag "the tap said: $(tr '\n' ' ' <"$1.out")"
		T_FRAMES=-1 T_HWF=-1 T_HWW=-1 T_SWF=-1 T_PLAIN=-1 T_GSO=-1 T_MAX=-1 T_DROPS=-1
		D_NEEDS=-1 D_NONE=-1 D_SW=-1 D_DROP=-1 T_OTHERS=-1
	fi
}
