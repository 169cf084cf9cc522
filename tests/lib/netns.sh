# shellcheck shell=bash
# own_netns NAME [ARGS...]: run the calling script again inside a network
# namespace of its own, NAME, and exit with its status; in that run
# (OWN_NETNS=NAME) it returns at once. No other process has the test's
# devices in its namespace (a DHCP client, an mDNS responder, another
# test's ping), so what they count is what the test and the kernel send
# there; the counter windows then only have the kernel's own frames to
# tell apart. Call it before the first result.
own_netns() {
	local name=$1 rc
	shift
	[ "${OWN_NETNS:-}" = "$name" ] && return 0
	# a run killed at its timeout left its namespace behind
	ip netns del "$name" 2>/dev/null
	ip netns add "$name" || { echo "Bail out! ip netns add $name failed"; exit 1; }
	ip -n "$name" link set lo up
	# wait for the run even when the per-test timeout signals the group
	trap : TERM INT
	OWN_NETNS=$name TAP_TIMES=${_tap_times:-} ip netns exec "$name" "$BASH" "$0" "$@"
	rc=$?
	ip netns del "$name"
	exit $rc
}

# host CMD...: CMD in the initial network and mount namespaces (PID 1's),
# where a new physical device appears and where a deleted namespace hands
# its physical devices back.
host() { nsenter -t 1 -n -m -- "$@"; }
