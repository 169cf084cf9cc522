# shellcheck shell=bash
# own_netns NAME [ARGS...]: run the calling script again inside a network
# namespace of its own, with no name (NAME only says whose it is), and exit
# with its status; in that run (OWN_NETNS=NAME) it returns at once. No
# process outside it has the test's devices (a DHCP client, an mDNS
# responder, another test's ping), so what they count is what the test and
# the kernel send there, and the counter windows only have the kernel's own
# frames to tell apart. A new namespace takes the initial one's IPv4
# settings: it forwards nothing unless the test says so. The namespace, and
# the named ones the test makes in its own /run/netns, go when its last
# process does: a run killed at its timeout hands its ports back by itself.
# Call it before the first result.
own_netns() {
	[ -n "${OWN_NETNS:-}" ] && return 0
	# wait for the run even when the per-test timeout signals the group
	trap : TERM INT
	# /run/netns of its own too: the named namespaces it makes (rx, peer,
	# ...) are no one else's, and a test running beside it cannot delete
	# them (nor this one theirs); a killed run's go with its mounts.
	# shellcheck disable=SC2016 # expanded by the inner shell
	OWN_NETNS=$1 TAP_TIMES=${_tap_times:-} unshare --net --mount --propagation slave -- \
		"$BASH" -c 'umount -l /sys && mount -t sysfs sysfs /sys &&
			mkdir -p /run/netns && mount -t tmpfs -o mode=755 netns /run/netns &&
			ip link set lo up && sysctl -qw net.ipv4.ip_forward=0 &&
			exec "$0" "$@"' "$BASH" "$0" "${@:2}"
	exit $?
}

# host CMD...: CMD in the initial network and mount namespaces (PID 1's),
# where a new physical device appears and where a deleted namespace hands
# its physical devices back.
host() { nsenter -t 1 -n -m -- "$@"; }
