#!/bin/bash
# The kernels the sch-clsact-dkms package builds for (BUILD_EXCLUSIVE_KERNEL
# of its DKMS file): 6.12.13 and every later 6.12 release, the first that
# export every symbol the module needs (tcf_sw_enabled_key came with
# 6.12.13; the rest is in 6.12.0). DKMS skips any other kernel, whose own
# sch_ingress then serves (test_clsact_debian_dropin). Version strings on
# both sides of the boundary, Debian's among them, and this boot's kernel.
. "$(dirname "$0")/../lib/tap.sh"
CONF=/bench/packaging/sch-clsact-dkms.dkms
re=$(. $CONF && echo "$BUILD_EXCLUSIVE_KERNEL")
[ -n "$re" ] || { not_ok "BUILD_EXCLUSIVE_KERNEL is set in $CONF"; done_testing; }

builds() { [[ $1 =~ $re ]]; }
for v in 6.12.13 6.12.13+deb12-amd64 6.12.19-cloud-amd64 6.12.99 6.12.100-rt-amd64 \
	6.12.118+deb12-amd64 6.12.1000; do
	builds "$v" && ok "builds for $v" || not_ok "builds for $v"
done
for v in 6.12 6.12.0 6.12.1 6.12.9-amd64 6.12.12 6.12.12+deb12-amd64 6.1.0-31-amd64 \
	6.13.1 6.120.13 16.12.13 5.6.12.13; do
	builds "$v" && not_ok "skips $v" || ok "skips $v"
done

# This kernel is 6.12.13 or later, so it must export what the module needs.
k=$(uname -r)
builds "$k" && ok "builds for this boot's kernel, $k" || not_ok "builds for this boot's kernel, $k"
grep -qw tcf_sw_enabled_key /proc/kallsyms && ok "which has tcf_sw_enabled_key" ||
	not_ok "which has tcf_sw_enabled_key"
done_testing
