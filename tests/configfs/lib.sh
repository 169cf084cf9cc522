# shellcheck shell=bash
# configfs mounted with our configfs module loaded; sourced by the tests,
# demo and benchmark.
CONFIGFS=/sys/kernel/config
BLOBPUT=/bench/tests/configfs/blobput

configfs_up() {
	modprobe configfs &&
		{ mountpoint -q $CONFIGFS || mount -t configfs none $CONFIGFS; }
}

# wait_for COND... : poll up to 10 s for a test(1) condition (the ACPI
# device list changes from a workqueue).
wait_for() {
	local i
	for i in $(seq 50); do
		test "$@" && return 0
		sleep 0.2
	done
	return 1
}
