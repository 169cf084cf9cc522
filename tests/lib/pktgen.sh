# shellcheck shell=bash
# pktgen helpers for the tests that drive it.
PG=/proc/net/pktgen

# pg_clear: rem_device_all on every pktgen thread, then wait until each has
# dropped its devices. The write returns after 125 ms whether or not the
# thread has acted on it; on a loaded guest a thread that acts later drops
# the device added next in the middle of its run. Fails after 10 s.
pg_clear() {
	local t
	for t in "$PG"/kpktgend_*; do echo rem_device_all >"$t"; done
	for _ in $(seq 200); do
		grep -qE '^(Running|Stopped): [^ ]' "$PG"/kpktgend_* || return 0
		sleep 0.05
	done
	echo "# pktgen threads still hold: $(grep -hE '^(Running|Stopped)' "$PG"/kpktgend_* |
		tr '\n' ' ')" >&2
	return 1
}
