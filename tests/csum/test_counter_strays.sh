#!/bin/bash
# bench-timeout: 600
# Attacks the counter windows' immunity to frames of others (lib.sh flow(),
# raw_frames watch, port_counters.h): a frame of another (ping, UDP over
# IPv4 and IPv6, ARP) leaves the port inside the first window of each
# measured flow. Every measurement must still come out exact (the hit
# window is measured again) and no hit window may pass as quiet. A
# negative control shows the raw deltas do count such frames.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"

N=48	# a UDP/IPv4 flow: exactly N frames, all offloaded
# shellcheck disable=SC2034 # flow()'s chunk count
FLOW_COUNT=$N
trap teardown_topology EXIT
setup_topology
rm -f /tmp/strays.*

# lib.sh's window ends, wrapped: each window as "strays injected" in
# /tmp/strays.win. A flow's first window (flow() passes "quiet" to the
# later ones) gets one frame of another as it opens, in turn a ping, a UDP
# datagram over IPv4 (offloaded) and over IPv6 (checksummed by the
# driver), and an ARP request; later tries get none, so each hit flow is
# measured again and must come out exact.
eval "lib_$(declare -f watch_start)"
eval "lib_$(declare -f watch_stop)"
eval "lib_$(declare -f tx_counter)"
KIND=0 INJECTED=0
inject() {
	case $((KIND++ % 4)) in
	0) ping -c1 -W1 -q 198.18.81.2 ;;
	1) echo stray >/dev/udp/198.18.81.2/9 ;;
	2) echo stray >/dev/udp/2001:db8:81::2/9 ;;
	3) python3 -c 'import socket,sys
m = bytes.fromhex(sys.argv[2].replace(":", "")); s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
s.send(b"\xff" * 6 + m + bytes.fromhex("08060001080006040001") + m + bytes([198, 18, 81, 1, 0, 0, 0, 0, 0, 0, 198, 18, 81, 9]))' "$TX" "$TX_MAC" ;;
	esac >/dev/null 2>&1
}
watch_start() {
	lib_watch_start "$@"
	INJECTED=0
	if [ -n "${INJECT:-}" ] && [ "${2:-}" != quiet ]; then
		inject
		INJECTED=1
	fi
}
watch_stop() {
	lib_watch_stop
	echo "$STRAYS $INJECTED" >>/tmp/strays.win
}
# tx-csum-none as well (check_flow does not look at it; a ping moves only it)
tx_counter() {
	if [ "$1" = tx_csum_offload ]; then
		"$RAW_FRAMES" counters "$TX" | tee -a /tmp/strays.ctr | awk '{ print $1 }'
	else
		lib_tx_counter "$@"
	fi
}
# tx-csum-none over the last window (its first and last counters line)
none_delta() { tail -2 /tmp/strays.ctr | awk 'NR == 1 { a = $2 } END { print $2 - a }'; }

# one round: the three paths, each exact beyond check_flow's signs
round() {
	check_flow "$1: TCP/IPv4" offload 4 tcp 198.18.81.2
	check_flow "$1: UDP/IPv4" offload 4 udp 198.18.81.2
	local none; none=$(none_delta)
	[ "$STRAYS" = 0 ] && [ "$OFFLOAD_DELTA" = "$N" ] && [ "$none" = 0 ] &&
		ok "$1: UDP/IPv4 exact: tx-needs-csum +$N, tx-csum-none +0" ||
		not_ok "$1: UDP/IPv4 exact: tx-needs-csum +$OFFLOAD_DELTA (want $N), tx-csum-none +$none (want 0)"
	# datagrams, never GSO: each one checksummed by the driver
	check_flow "$1: UDP/IPv6" sw 6 udp 2001:db8:81::2
	none=$(none_delta)
	[ "$STRAYS" = 0 ] && [ "$SW_DELTA" = "$N" ] && [ "$none" = "$N" ] &&
		ok "$1: UDP/IPv6 exact: tx_csum_sw +$N, tx-csum-none +$N" ||
		not_ok "$1: UDP/IPv6 exact: tx_csum_sw +$SW_DELTA, tx-csum-none +$none (want $N each)"
}

# Negative control: one window by hand, no second try, with 2 UDP/IPv4 and
# 2 UDP/IPv6 datagrams of another sent inside it
rm -f /tmp/neg /tmp/neg.ready
ip netns exec rx "$FLOW" recv 4 udp 4999 "$N" /tmp/neg &
pid=$!
for _ in $(seq 100); do [ -e /tmp/neg.ready ] && break; sleep 0.05; done
watch_start 4999
o0=$(tx_counter tx_csum_offload) s0=$(tx_counter tx_csum_sw)
for a in 198.18.81.2 198.18.81.2 2001:db8:81::2 2001:db8:81::2; do echo stray >"/dev/udp/$a/9"; done
"$FLOW" send 4 udp 198.18.81.2 4999 "$N"
wait $pid
sleep 0.5
od=$(($(tx_counter tx_csum_offload) - o0)) sd=$(($(tx_counter tx_csum_sw) - s0))
watch_stop
[ "$od" -ge $((N + 2)) ] && [ "$sd" -ge 2 ] &&
	ok "negative control: raw deltas count the injected datagrams (tx-needs-csum +$od > $N, tx_csum_sw +$sd > 0: UDP/IPv4 would read as not offloaded)" ||
	not_ok "negative control: raw deltas count the injected datagrams (tx-needs-csum +$od, want >= $((N + 2)); tx_csum_sw +$sd, want >= 2)"
[ "$STRAYS" -ge 4 ] 2>/dev/null && ok "negative control: the watch saw them ($STRAYS frames of others)" ||
	not_ok "negative control: the watch saw them ($STRAYS frames of others, want >= 4)"

# (test_8139cp_paths measures the same flows without injection)
rm -f /tmp/strays.win
INJECT=1 round "injected"
read -r hit missed < <(awk '$2 == 1 { if ($1 > 0) h++; else m++ } END { print h + 0, m + 0 }' /tmp/strays.win)
is "$hit $missed" "3 0" "each flow's first window saw its injected frame and was measured again (hit, passed as quiet)"

# Traffic of other processes. They live in the initial namespace; the
# test runs in its own, which the port moved to. A sender there, with a
# dummy device that routes rx's addresses, sends the kinds of frame the
# negative control above showed moving the raw deltas (UDP to rx over IPv4
# and IPv6, and mDNS and a raw frame to rx's MAC on each of its devices)
# all through a round, and the round must come out exact.
[ "$(readlink /proc/self/ns/net)" != "$(host readlink /proc/self/ns/net)" ] &&
	[ -z "$(host_iface_by_driver 8139cp)" ] &&
	ok "the test and its port are in a namespace other than the initial one" ||
	not_ok "the test and its port are in a namespace other than the initial one"
host ip link del strays0 2>/dev/null	# a killed run's
host ip link add strays0 type dummy
host ip addr add 198.18.81.9/24 dev strays0
host ip -6 addr add 2001:db8:81::9/64 dev strays0 nodad
host ip link set strays0 up
host ip route add 224.0.0.0/4 dev strays0
rm -f /tmp/strays.host /tmp/strays.host.ready
# (nsenter itself in the background, so that kill reaches the sender)
nsenter -t 1 -n -m -- python3 -c '
import os, signal, socket, sys, time
mac = bytes.fromhex(sys.argv[1].replace(":", ""))
sent = 0
def done(*_):
	open("/tmp/strays.host", "w").write("%d\n" % sent)
	os._exit(0)
signal.signal(signal.SIGTERM, done)
def send(f, *a):
	global sent
	try:
		sent += f(*a) > 0
	except OSError:
		pass	# a device that is down, a neighbour queue that is full
raw = []
for d in os.listdir("/sys/class/net"):
	s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
	s.bind((d, 0))
	raw.append(s)
u4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
open("/tmp/strays.host.ready", "w").close()
while True:
	for s in raw:
		send(s.send, mac + b"\x02\0\0\0\0\x09\x08\x00" + bytes(46))
	for a in ("198.18.81.2", "224.0.0.251"):
		send(u4.sendto, b"stray", (a, 5353))
	send(u6.sendto, b"stray", ("2001:db8:81::2", 5353))
	time.sleep(0.2)
' "$RX_MAC" &
gen=$!
for _ in $(seq 600); do [ -e /tmp/strays.host.ready ] && break; sleep 0.05; done
rm -f /tmp/strays.win
round "other processes sending"
kill $gen
wait $gen
host ip link del strays0
sent=$(cat /tmp/strays.host 2>/dev/null)
[ "${sent:-0}" -gt 0 ] &&
	ok "the initial namespace's sender sent all through the round ($sent frames)" ||
	not_ok "the initial namespace's sender sent all through the round (${sent:-no} frames)"
done_testing
