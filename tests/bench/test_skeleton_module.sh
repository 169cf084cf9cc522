#!/bin/bash
# The out-of-tree skeleton module loads, shows its state in sysfs and unloads.
. "$(dirname "$0")/../lib/tap.sh"

param=/sys/module/lk45_skeleton/parameters/loads
[ ! -e /sys/module/lk45_skeleton ] && ok "skeleton not loaded before the test" ||
	not_ok "skeleton not loaded before the test"
check "modprobe lk45_skeleton" modprobe lk45_skeleton
is "$(cat $param 2>/dev/null)" 1 "loads parameter reads 1 while loaded"
is "$(modinfo -F vermagic lk45_skeleton | cut -d' ' -f1)" "$(uname -r)" \
	"vermagic matches the running kernel"
check "modprobe -r lk45_skeleton" modprobe -r lk45_skeleton
[ ! -e /sys/module/lk45_skeleton ] && ok "skeleton gone after unload" ||
	not_ok "skeleton gone after unload"
done_testing
