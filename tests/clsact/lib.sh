# shellcheck shell=bash
# Topology and helpers for the clsact tests and demo: a veth pair, v0 in
# this namespace and v1 in netns "peer", static neighbours and no IPv6, so
# that the only packets are the ones a test sends. A test that counts
# packets runs in a namespace of its own (own_netns, tests/lib/netns.sh),
# where no other process can send through v0.
CLSACT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$CLSACT_DIR/../lib/netns.sh"
OBJ=$CLSACT_DIR/clsact_state.bpf.o
PIN=/sys/fs/bpf/tc/globals/lk45_state
# Hook directions with filters (each wants its static key), the key
# references actually held (given back release_delay_ms after the last
# want), and the number of references taken or given back.
PARAM=/sys/module/sch_clsact/parameters/keys_wanted
HELD=/sys/module/sch_clsact/parameters/keys_held
CHANGES=/sys/module/sch_clsact/parameters/key_changes
A=198.18.70.1
B=198.18.70.2

# Map slots (clsact_state.bpf.c)
ST_IN_PKTS=0 ST_EG_PKTS=1 ST_EG_PRIO=2 ST_IN_VERDICT=3 ST_EG_VERDICT=4 ST_REDIRECT_IFINDEX=5

topology_up() {
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	modprobe veth
	ip netns del peer 2>/dev/null	# a run killed before topology_down
	ip netns add peer
	ip link add v0 numtxqueues 4 numrxqueues 4 type veth peer name v1 \
		numtxqueues 4 numrxqueues 4 netns peer
	sysctl -qw net.ipv6.conf.v0.disable_ipv6=1
	ip netns exec peer sysctl -qw net.ipv6.conf.v1.disable_ipv6=1
	ip addr add $A/24 dev v0
	ip -n peer addr add $B/24 dev v1
	ip link set v0 up
	ip -n peer link set v1 up
	ip -n peer link set lo up
	ip neigh replace $B lladdr "$(ip -n peer -br link show v1 | awk '{print $3}')" dev v0 nud permanent
	ip -n peer neigh replace $A lladdr "$(ip -br link show v0 | awk '{print $3}')" dev v1 nud permanent
}

topology_down() {
	ip link del v0 2>/dev/null
	ip netns del peer 2>/dev/null
	rm -f $PIN
}

# keys_held_settled: keys_held once a release due now has run: after the
# delay (wall-clock jiffies, even under TCG), the work that gives back what
# is no longer wanted may still wait for a CPU: up to 10 s for held to come
# down to wanted.
keys_held_settled() {
	local ms end
	ms=$(cat /sys/module/sch_clsact/parameters/release_delay_ms)
	sleep $(((ms + 999) / 1000))
	end=$((SECONDS + 10))
	while [ "$(cat $HELD)" != "$(cat $PARAM)" ] && [ $SECONDS -lt $end ]; do
		sleep 0.2
	done
	cat $HELD
}

# map_set SLOT VALUE / map_get SLOT: the shared map, through bpftool's
# plain output (python would cost seconds per call under TCG).
map_set() {
	# shellcheck disable=SC2046 # one word per byte
	bpftool map update pinned $PIN key $(le_bytes "$1" 4) value $(le_bytes "$2" 8)
}
map_get() {
	local out hex b le=
	# shellcheck disable=SC2046
	out=$(bpftool map lookup pinned $PIN key $(le_bytes "$1" 4) 2>&1 | tr '\n' ' ')
	# With BTF bpftool prints {"key": K, "value": V}; without, hex bytes.
	if [[ $out =~ \"value\":\ *([0-9]+) ]]; then
		echo "${BASH_REMATCH[1]}"
		return
	fi
	hex=$(echo "$out" | sed -n 's/.*value:\(\( [0-9a-f][0-9a-f]\)*\).*/\1/p')
	for b in $hex; do le=$b$le; done
	echo $((16#${le:-0}))
}
# le_bytes N WIDTH: N as WIDTH little-endian bytes, for bpftool.
le_bytes() {
	local n=$1 i
	for ((i = 0; i < $2; i++)); do printf '%d ' $((n & 255)); n=$((n >> 8)); done
}

# sent_stat FIELD: packets, bytes or drops from the first "Sent" line after
# the first line of tc -s output that starts with $PAT.
sent_stat() {
	awk -v pat="$PAT" -v f="$1" '
		!found && index($0, pat) == 1 {found = 1; next}
		found && /Sent/ {
			gsub(/[,()]/, " ")
			for (i = 1; i < NF; i++) {
				if ($(i + 1) == "bytes") b = $i
				if ($(i + 1) == "pkt") p = $i
				if ($i == "dropped") d = $(i + 1)
			}
			print (f == "bytes" ? b : f == "packets" ? p : d)
			done = 1
			exit
		}
		END {if (!done) print "none"}'
}
# class_stat DEV CLASSID FIELD / qdisc_stat DEV KIND FIELD
class_stat() { tc -s class show dev "$1" | PAT="class" sent_stat_of "$2" "$3"; }
qdisc_stat() { tc -s qdisc show dev "$1" | PAT="qdisc $2 " sent_stat "$3"; }
# sent_stat_of HANDLE FIELD: a class line names its kind first, then HANDLE.
sent_stat_of() { awk -v h="$1" '$1 == "class" && $3 == h {p = 1} p' | PAT=class sent_stat "$2"; }

# pings N: N echo requests v0 -> peer, 0.05 s apart; prints the replies.
pings() {
	ping -q -c "$1" -i 0.05 -W 1 $B 2>/dev/null | awk '/received/ {print $4}'
}

# udp_from_peer PAYLOAD: one datagram peer -> v0 port 7777, taken by a
# socket there: on a port without one the stack would answer with an ICMP
# error out of v0's egress hook, at a time of the softirq's choosing.
udp_from_peer() {
	local pid
	# (in the foreground group: the per-test timeout reaches it)
	timeout --foreground 20 socat -u UDP4-RECVFROM:7777,bind=$A - >/dev/null &
	pid=$!
	for _ in $(seq 200); do ss -Hlun 'sport = :7777' | grep -q . && break; sleep 0.05; done
	printf "$1" | ip netns exec peer socat -u - UDP4-SENDTO:$A:7777
	wait $pid
}

# hold_start CMD...: CMD, a request that makes the kernel load cls_basic
# while it holds a qdisc (a filter request without RTNL), in the
# background, kept inside that module load by modprobe's install rule
# until hold_end. The caller sets HOLD, HOLD_RULE (in a modprobe.d
# directory) and T (a scratch directory); hold_rc is CMD's status.
# shellcheck disable=SC2153 # HOLD is the caller's
hold_start() {
	modprobe -r cls_basic 2>/dev/null
	grep -q '^cls_basic ' /proc/modules && { diag "cls_basic still loaded (in use)"; return 1; }
	echo "install cls_basic touch $HOLD.in; while [ -e $HOLD ]; do sleep 0.05; done; modprobe --ignore-install cls_basic" >"$HOLD_RULE"
	rm -f "$HOLD.in" && touch "$HOLD"
	"$@" >"$T/hold.out" 2>&1 &
	hold_pid=$!
	for _ in $(seq 300); do [ -e "$HOLD.in" ] && return 0; sleep 0.05; done
	return 1
}
hold_end() {
	rm -f "$HOLD"
	hold_rc=-
	[ -z "$hold_pid" ] || { wait "$hold_pid"; hold_rc=$?; }
	hold_pid=
	rm -f "$HOLD_RULE" "$HOLD.in"
}
# dummy NAME [NETNS]: a dummy device, up, without IPv6 (no stray packets)
dummy() {
	local ns=()
	[ -z "${2:-}" ] || ns=(ip netns exec "$2")
	"${ns[@]}" ip link add "$1" type dummy &&
		"${ns[@]}" sysctl -qw net.ipv6.conf."$1".disable_ipv6=1 &&
		"${ns[@]}" ip link set "$1" up
}
# qd DEV [NS]: "KIND IBLOCK EBLOCK" of DEV's ingress or clsact qdisc ("-"
# for a block of its own), "none" without one
qd() {
	tc ${2:+-n "$2"} qdisc show dev "$1" | awk '/ ffff: / {
		ib = eb = "-"
		for (i = 1; i < NF; i++) {
			if ($i == "ingress_block") ib = $(i + 1)
			if ($i == "egress_block") eb = $(i + 1)
		}
		print $2, ib, eb; n++ }
		END {if (!n) print "none"}'
}
