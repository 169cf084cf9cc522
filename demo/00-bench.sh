#!/bin/bash
# What this boot proves about the bench itself.
echo "bench: booted $(uname -r) in QEMU; host /usr and /etc over 9p, $(nproc) vCPUs"
echo "bench: tools in the guest: $(tc -V 2>&1 | head -1); $(ethtool --version); $(python3 --version)"
if modprobe lk45_skeleton && [ "$(cat /sys/module/lk45_skeleton/parameters/loads)" = 1 ] &&
	modprobe -r lk45_skeleton; then
	echo "bench: out-of-tree module lk45_skeleton built, loaded and unloaded"
else
	echo "bench: FAILED to load/unload the out-of-tree skeleton module"
	exit 1
fi
