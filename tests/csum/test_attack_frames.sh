#!/bin/bash
# bench-timeout: 900
# Attack on the 8139cp checksum contract by the ways a process reaches the
# port that test_raw_frames does not take (attack_frames.c does the sending,
# the byte-for-byte comparison at the e1000 receiver and the counter deltas):
#
#  - edge frames: 42/43/54/60 bytes, short datagrams padded by the sender,
#    ihl 15 with tot_len at and one past the frame, IPv4 header checksums of
#    0x0000 and of 0xffff for 0, L4 sums folding to 0 (chip and driver),
#    fragments, ihl 4, csum_offset of the other protocol, csum_start at the
#    IP end / on the last two bytes / in the IPv4 header, MTU + tag, MTU + 1,
#    GSO (SKB_GSO_DODGY: LargeSend once the core checked the headers) at
#    gso_size 2047 and beyond LargeSend's 11-bit MSS;
#  - PACKET_QDISC_BYPASS (dev_direct_xmit: GSO to LargeSend, or dropped
#    with ENOBUFS when it must be segmented), SOCK_DGRAM;
#  - TPACKET_V2/V3 TX rings with a virtio-net header: zero-copy page frags
#    split at odd offsets, the IPv4 header split between head and frags;
#  - four threads sending on one socket;
#  - tc egress actions on the port: vlan push (chip tag, in-band, 802.1ad),
#    mpls push, pedit of the type field and of the TTL, csum, and BPF
#    bpf_skb_adjust_room() moving csum_start into the IP header and before
#    the frame;
#  - raw frames from another namespace through a veth and tc mirred (in-band
#    tags become skb tags on the way), TCP forwarded from that namespace;
#  - pktgen, which calls ndo_start_xmit() without the core's validation:
#    UDPCSUM with in-band VLAN, QinQ, MPLS, IPv6, page frags, 58-byte frames;
#  - MTU 4096: paged frames from packet_snd(), TCP at gso_size 2047 (LargeSend)
#    and 2048 (the core segments), what the driver is handed seen by a tap;
#  - sendfile(2) of a file behind an 802.1ad tag, LargeSend on and off: the
#    core checksums the segments of what the chip cannot checksum.
#
# Every case asserts the bytes on the wire (or the errno) and the exact
# deltas of tx-needs-csum, tx-csum-none, tx_csum_sw and tx_dropped; the test
# ends with no kernel warning in the log.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"

A=$HERE/attack_frames
OBJ=$HERE/attack_shrink.bpf.o
TS0=$(sysctl -n net.ipv4.tcp_timestamps)
PG_LOADED=
TAP_PID=
# The qdisc modules this test's clsact qdiscs load, to unload at the end:
# a clsact test of the other lane checks that none is loaded before it.
QDISC_MODS=
for m in sch_clsact sch_ingress; do [ -e /sys/module/$m ] || QDISC_MODS+=" $m"; done

# unload_qdisc_mods: those this test loaded; a qdisc's module goes a
# moment after its last qdisc, so retry for up to 5 s.
unload_qdisc_mods() {
	local m
	for m in $QDISC_MODS; do
		for _ in $(seq 25); do
			[ -e /sys/module/$m ] || break
			modprobe -r $m 2>/dev/null || sleep 0.2
		done
	done
}

cleanup() {
	[ -n "$TAP_PID" ] && { touch /tmp/atap.stop; wait "$TAP_PID" 2>/dev/null; }
	tc qdisc del dev "$TX" clsact 2>/dev/null
	ethtool -K "$TX" txvlan on >/dev/null 2>&1
	if [ -w /proc/net/pktgen/kpktgend_0 ]; then
		echo rem_device_all >/proc/net/pktgen/kpktgend_0
	fi
	[ -n "$PG_LOADED" ] && modprobe -r pktgen 2>/dev/null
	ip netns del snd 2>/dev/null
	ip link del vh 2>/dev/null
	unload_qdisc_mods
	sysctl -qw net.ipv4.ip_forward=0
	sysctl -qw net.ipv4.tcp_timestamps="$TS0"
	ip link set "$TX" mtu 1500 2>/dev/null
	ethtool -K "$TX" tso on >/dev/null 2>&1
	ip link del tx.ad 2>/dev/null
	ip -n rx link set "$RX" mtu 1500 2>/dev/null
	sysctl -qw "net.ipv6.conf.$TX.disable_ipv6=0" 2>/dev/null
	teardown_topology
}

# xflow COUNT CMD...: COUNT chunks of 1000 bytes over TCP to rx in one
# send(), the sender run under CMD (a namespace prefix, or env); sets FLOW_OK.
# XFLOW_SENDER=sendfile sends them from a file with sendfile(2), XFLOW_ADDR
# to another of rx's addresses.
xflow() {
	local count=$1 port=${XFLOW_PORT:-$((6000 + RANDOM % 1000))} out=/tmp/aflow.$$ got pid
	shift
	rm -f "$out" "$out.ready"
	ip netns exec rx "$FLOW" recv 4 tcp $port "$count" "$out" &
	pid=$!
	for _ in $(seq 100); do [ -e "$out.ready" ] && break; sleep 0.05; done
	"$@" "$A" "${XFLOW_SENDER:-bulk}" "${XFLOW_ADDR:-198.18.81.2}" $port "$count" \
		>/tmp/aflow.err 2>&1
	wait $pid
	got=$(cat "$out" 2>/dev/null)
	FLOW_OK=0
	[ "$got" = "$count $((count * 1000)) 0" ] && FLOW_OK=1
	[ $FLOW_OK = 1 ] || { diag "flow: got '$got', want '$count $((count * 1000)) 0'"; sed 's/^/# /' /tmp/aflow.err; }
}

# tap_start [PORT]: a tap on the port: the outgoing TCP/IPv4 frames (to or
# from PORT) the driver is handed, and the port's counters read inside its
# window (see tap() in attack_frames.c)
tap_start() {
	rm -f /tmp/atap.stop /tmp/atap.out
	"$A" tap "$TX" /tmp/atap.stop ${1:-} >/tmp/atap.out &
	TAP_PID=$!
	for _ in $(seq 600); do grep -q ready /tmp/atap.out 2>/dev/null && break; sleep 0.05; done
}
tap_stop() {
	touch /tmp/atap.stop
	wait "$TAP_PID"
	TAP_PID=
	read -r TAP_FRAMES TAP_PARTIAL TAP_MAX TAP_DROPS D_NEEDS D_NONE D_SW D_DROP TAP_OTHERS \
		TAP_REQUESTS < <(tail -1 /tmp/atap.out)
	[ -n "$TAP_REQUESTS" ] || { diag "the tap said: $(tr '\n' ' ' </tmp/atap.out)"; TAP_FRAMES=-1 TAP_PARTIAL=-1 TAP_MAX=-1 TAP_DROPS=-1 TAP_OTHERS=-1 TAP_REQUESTS=-1; }
}

# flow_check NAME COUNT above|atmost LIMIT CMD...: a flow with a tap; the
# bytes, nothing checksummed by the driver or dropped, tx-needs-csum equal
# to the TCP frames the driver was handed with a checksum request (a reply
# from a time-wait socket carries its checksum), and the largest of them
# above LIMIT (LargeSend got GSO packets) or at most LIMIT (none). A try
# whose window held a frame that was not the flow's is made again.
flow_check() {
	local name=$1 count=$2 op=$3 lim=$4 try XFLOW_PORT
	shift 4
	for try in 1 2 3 4; do
		# a port of its own each try: frames of other flows are others
		XFLOW_PORT=$((6000 + RANDOM % 1000))
		tap_start $XFLOW_PORT
		xflow "$count" "$@"
		tap_stop
		[ "$TAP_OTHERS" = 0 ] && break
		diag "$name: try $try: $TAP_OTHERS frame(s) not the flow's in the window, again"
	done
	[ "$FLOW_OK" = 1 ] && ok "$name: every byte arrives" || not_ok "$name: every byte arrives"
	if [ "$TAP_OTHERS" != 0 ]; then
		not_ok "$name: a window with the flow's frames only (4 tries: $TAP_OTHERS others in the last)"
		return
	fi
	is "$D_SW $D_DROP" "0 0" "$name: nothing checksummed by the driver, nothing dropped (tx_csum_sw +$D_SW, tx_dropped +$D_DROP)"
	# the chip can checksum every frame of these flows, segments the core
	# made included: only a reply from a time-wait socket comes summed
	[ "$D_NONE" -le 2 ] && ok "$name: the chip asked for all but $D_NONE frames (tx-csum-none +$D_NONE, at most 2 time-wait replies)" ||
		not_ok "$name: the chip asked for all but $D_NONE frames (tx-csum-none +$D_NONE, want at most 2 time-wait replies)"
	if [ "$TAP_DROPS" = 0 ]; then
		is "$D_NEEDS" "$TAP_PARTIAL" "$name: tx-needs-csum +$D_NEEDS, one per TCP frame handed over with a request ($TAP_FRAMES TCP frames, tx-csum-none +$D_NONE)"
	else
		skip "$name: tx-needs-csum against the tap" "the tap dropped $TAP_DROPS frames"
	fi
	if { [ "$op" = above ] && [ "$TAP_MAX" -gt "$lim" ]; } ||
		{ [ "$op" = atmost ] && [ "$TAP_MAX" -gt 0 ] && [ "$TAP_MAX" -le "$lim" ]; }; then
		ok "$name: largest frame handed to the driver $TAP_MAX bytes ($op $lim)"
	else
		not_ok "$name: largest frame handed to the driver $TAP_MAX bytes, want $op $lim"
	fi
}

# flow_check_core NAME COUNT: a sendfile(2) flow through tx.ad, whose
# 802.1ad tag the chip cannot insert: in-band, it hides the IPv4 header from
# the chip, which can checksum none of these frames. The core segments the
# GSO packets and checksums the segments as it makes them; the driver
# checksums only the frames that left the stack whole with a request (the
# handshake, the end). Asserted: the bytes, the receiver's checksum errors,
# nothing asked of the chip or dropped, tx-csum-none one per frame,
# tx_csum_sw one per frame handed over with a request, and more frames
# handed over summed than the 2 time-wait replies that may come so (a
# driver that gets every segment with a request fails it).
flow_check_core() {
	local name=$1 count=$2 try e0 XFLOW_PORT
	e0=$(rx_stat TcpInCsumErrors)
	for try in 1 2 3 4; do
		XFLOW_PORT=$((6000 + RANDOM % 1000))
		tap_start $XFLOW_PORT
		XFLOW_SENDER=sendfile XFLOW_ADDR=198.18.201.2 xflow "$count" env
		tap_stop
		[ "$TAP_OTHERS" = 0 ] && break
		diag "$name: try $try: $TAP_OTHERS frame(s) not the flow's in the window, again"
	done
	[ "$FLOW_OK" = 1 ] && ok "$name: every byte arrives" || not_ok "$name: every byte arrives"
	is "$(($(rx_stat TcpInCsumErrors) - e0))" 0 "$name: the receiver counts no TCP checksum error"
	if [ "$TAP_OTHERS" != 0 ]; then
		not_ok "$name: a window with the flow's frames only (4 tries: $TAP_OTHERS others in the last)"
		return
	fi
	is "$D_NEEDS $D_DROP" "0 0" "$name: nothing asked of the chip, nothing dropped (tx-needs-csum +$D_NEEDS, tx_dropped +$D_DROP)"
	if [ "$TAP_DROPS" != 0 ]; then
		skip "$name: the counters against the tap" "the tap dropped $TAP_DROPS frames"
		return
	fi
	is "$D_NONE" "$TAP_FRAMES" "$name: tx-csum-none +$D_NONE, one per TCP frame handed over"
	is "$D_SW" "$TAP_REQUESTS" "$name: tx_csum_sw +$D_SW, one per frame handed over with a request"
	[ "$TAP_REQUESTS" -ge 0 ] && [ $((TAP_FRAMES - TAP_REQUESTS)) -gt 2 ] &&
		ok "$name: the core checksummed the segments ($((TAP_FRAMES - TAP_REQUESTS)) of $TAP_FRAMES frames handed over summed)" ||
		not_ok "$name: the core checksummed the segments ($((TAP_FRAMES - TAP_REQUESTS)) of $TAP_FRAMES frames handed over summed)"
}

setup_topology
trap cleanup EXIT
ip netns exec rx ethtool -K "$RX" rxvlan off >/dev/null 2>&1
# no IPv6 chatter (MLD, ND) from the port to spoil the counter deltas
sysctl -qw "net.ipv6.conf.$TX.disable_ipv6=1"
# GSO segments beyond the port's MTU and the MTU 4096 frames must arrive
ip -n rx link set "$RX" mtu 9000
wait_link
D0=$(dmesg | wc -l)

# --- packet sockets
tap_include "$A" raw "$TX" "$RX"
tap_include "$A" bypass "$TX" "$RX"
tap_include "$A" dgram "$TX" "$RX"
tap_include "$A" ring "$TX" "$RX" 2
tap_include "$A" ring "$TX" "$RX" 3
tap_include "$A" threads "$TX" "$RX" 4 150

# --- tc egress actions on the port, changing the frame after the request
tc_case() {
	local c=$1
	shift
	if tc filter add dev "$TX" egress "$@" 2>/tmp/atc.err; then
		tap_include "$A" tc "$TX" "$RX" "$c"
	else
		not_ok "tc filter add dev $TX egress $*"
		sed 's/^/# /' /tmp/atc.err
	fi
	tc filter del dev "$TX" egress 2>/dev/null
}
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
if tc qdisc add dev "$TX" clsact; then
	tc_case vlan-q matchall action vlan push id 100
	ethtool -K "$TX" txvlan off >/dev/null
	tc_case vlan-q-inband matchall action vlan push id 100
	ethtool -K "$TX" txvlan on >/dev/null
	tc_case vlan-ad matchall action vlan push protocol 802.1ad id 200
	tc_case mpls matchall action mpls push protocol mpls_uc label 17 ttl 64
	tc_case ethtype matchall action pedit ex munge eth type set 0x88b5
	tc_case ttl matchall action pedit ex munge ip ttl set 7
	tc_case ttl-csum matchall action pedit ex munge ip ttl set 7 pipe action csum iph
	tc_case shrink8 bpf da obj "$OBJ" sec shrink8
	tc_case shrink40 bpf da obj "$OBJ" sec shrink40
	tc qdisc del dev "$TX" clsact
else
	not_ok "tc qdisc add dev $TX clsact"
fi

# --- another namespace behind a veth: raw frames through tc mirred, then
# TCP through IPv4 forwarding
ip netns add snd
ip link add vh type veth peer name vs netns snd
ip netns exec snd sysctl -qw net.ipv6.conf.vs.disable_ipv6=1
sysctl -qw net.ipv6.conf.vh.disable_ipv6=1
ip -n snd link set lo up
ip -n snd link set vs up
ip link set vh up
tc qdisc add dev vh clsact
if tc filter add dev vh ingress matchall action mirred egress redirect dev "$TX"; then
	tap_include "$A" veth "$TX" "$RX" snd vs
else
	not_ok "tc mirred from vh to $TX"
fi
tc qdisc del dev vh clsact

ip -n snd addr add 198.18.90.2/24 dev vs
ip -n snd route add default via 198.18.90.1
ip addr add 198.18.90.1/24 dev vh
ip -n rx route add 198.18.90.0/24 via 198.18.81.1
sysctl -qw net.ipv4.ip_forward=1
flow_check "TCP forwarded from netns snd (LargeSend)" 300 above 1514 ip netns exec snd
sysctl -qw net.ipv4.ip_forward=0

# --- pktgen: ndo_start_xmit() straight, no validate_xmit_skb()
PGT=/proc/net/pktgen/kpktgend_0
lsmod | grep -q '^pktgen' || { modprobe pktgen && PG_LOADED=1; }
# pg_case NAME KIND PATH(O|S) PKTGEN_COMMAND...
pg_case() {
	local name=$1 kind=$2 path=$3 dev=/proc/net/pktgen/$TX cmd pid
	shift 3
	echo rem_device_all >$PGT
	for _ in $(seq 50); do [ -e "$dev" ] || break; sleep 0.1; done
	if ! echo "add_device $TX" >$PGT; then
		not_ok "pktgen $name: add_device $TX refused"
		return
	fi
	for cmd in "count 30" "clone_skb 0" "delay 0" "pkt_size 200" "dst_mac $RX_MAC" \
		"src_mac $(printf '02:5e:00:01:00:%02x' "$kind")" "udp_src_min 9" "udp_src_max 9" \
		"udp_dst_min 9" "udp_dst_max 9" "flag UDPCSUM" "$@"; do
		if ! echo "$cmd" >"$dev"; then
			not_ok "pktgen $name: '$cmd' refused ($(sed -n 's/^Result: //p' "$dev"))"
			return
		fi
	done
	# a window in which frames of others left the port is measured again
	local try quiet=
	for try in 1 2 3 4; do
		rm -f /tmp/apg.ready
		env ${quiet:+STRAY_QUIET=1} "$A" pktgen "$TX" "$RX" "$kind" 30 "$path" "$name" \
			/tmp/apg.ready >/tmp/apg.out &
		pid=$!
		for _ in $(seq 100); do [ -e /tmp/apg.ready ] && break; sleep 0.05; done
		echo start >/proc/net/pktgen/pgctrl
		wait $pid
		grep -q '^# pktgen .*: not quiet$' /tmp/apg.out && [ "$try" -lt 4 ] || break
		grep '^# pktgen' /tmp/apg.out
		quiet=1
	done
	tap_include cat /tmp/apg.out
	grep -q '^Result: OK' "$dev" || diag "pktgen $name: $(grep '^Result' "$dev")"
}
if [ -w "$PGT" ]; then
	# to addresses rx does not have: it drops them without a word (an
	# ICMP error would make it ARP for the port, whose reply is counted)
	V4="dst 198.18.81.99|src_min 198.18.81.98|src_max 198.18.81.98"
	V6="dst6 2001:db8:81::99|src6 2001:db8:81::98"
	IFS='|' read -ra v4 <<<"$V4"
	IFS='|' read -ra v6 <<<"$V6"
	pg_case "UDP/IPv4" 1 O "${v4[@]}"
	pg_case "UDP/IPv4, 58-byte frames" 2 O "${v4[@]}" "pkt_size 42"
	pg_case "UDP/IPv4 behind an in-band 802.1Q tag" 3 S "${v4[@]}" "vlan_id 100"
	pg_case "UDP/IPv4 behind QinQ" 4 S "${v4[@]}" "vlan_id 100" "svlan_id 200"
	pg_case "UDP/IPv4 behind an MPLS label" 5 S "${v4[@]}" "mpls 00011040"
	pg_case "UDP/IPv6" 6 S "${v6[@]}"
	pg_case "UDP/IPv4 in 2 page frags" 7 O "${v4[@]}" "pkt_size 1000" "frags 2"
	pg_case "UDP/IPv6 in 2 page frags" 8 S "${v6[@]}" "pkt_size 1000" "frags 2"
	pg_case "UDP/IPv4 behind 802.1Q in 2 page frags" 9 S "${v4[@]}" "pkt_size 1000" \
		"frags 2" "vlan_id 100"
	echo rem_device_all >$PGT
else
	not_ok "pktgen: no $PGT"
fi

# --- MTU 4096 (the chip's most): paged frames from packet_snd(), and TCP
# at the edge of LargeSend's 11-bit MSS (no timestamps: gso_size = MTU - 40)
sysctl -qw net.ipv4.tcp_timestamps=0
ip link set "$TX" mtu 2087 && wait_link
flow_check "TCP at gso_size 2047 (MTU 2087): LargeSend" 300 above 2101 env
ip link set "$TX" mtu 2088 && wait_link
flow_check "TCP at gso_size 2048 (MTU 2088): the core segments" 300 atmost 2102 env
ip link set "$TX" mtu 4096 && wait_link
flow_check "TCP at gso_size 4056 (MTU 4096): the core segments" 300 atmost 4110 env
tap_include "$A" big "$TX" "$RX"
sysctl -qw net.ipv4.tcp_timestamps="$TS0"
ip link set "$TX" mtu 1500 && wait_link

# --- sendfile(2) of a file behind a tag the chip cannot insert, LargeSend
# on and off: the decision is made before segmentation
add_8021ad 201 198.18.201
flow_check_core "sendfile over 802.1ad, TSO on" 300
ethtool -K "$TX" tso off >/dev/null
grep -q '^tcp-segmentation-offload: off' < <(ethtool -k "$TX") &&
	ok "TSO off on the port" || not_ok "TSO off on the port"
flow_check_core "sendfile over 802.1ad, TSO off" 300
ethtool -K "$TX" tso on >/dev/null
ip link del tx.ad

# --- no kernel warning on the way
warn=$(dmesg | tail -n +$((D0 + 1)) | grep -E 'WARNING:|BUG:|Oops|Net bug|skb_headlen|bad offload|GSO size' | head -5)
is "$warn" "" "no kernel warning, BUG or 'Net bug' in the log during the test"
done_testing
