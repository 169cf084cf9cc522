#!/bin/bash
# The sch-clsact-dkms package as a drop-in on Debian's kernel (make
# stock-check): its module is where DKMS installs it and built for this
# kernel; with its modprobe.d install rule, "tc qdisc add ... clsact" and
# "modprobe sch_ingress" load ours, "--ignore-install" still reaches the
# kernel's module; where ours is missing (a kernel DKMS did not build for)
# the same tc command gets the kernel's module; and once the package is
# gone (its file removed) the kernel's module answers again. Skipped on the
# bench's own kernel, where no package is staged.
. "$(dirname "$0")/../lib/tap.sh"
PKG=/bench/pkg
CONF=$PKG/usr/lib/modprobe.d/sch-clsact-dkms.conf
[ -d $PKG ] || { skip "drop-in" "no sch-clsact-dkms package staged (only on make stock-check)"; done_testing; }
[ -f $CONF ] && ok "the package ships /usr/lib/modprobe.d/sch-clsact-dkms.conf" ||
	{ not_ok "the package ships /usr/lib/modprobe.d/sch-clsact-dkms.conf"; done_testing; }
[ -z "$(find $PKG/etc 2>/dev/null)" ] && ok "and nothing under /etc" || not_ok "and nothing under /etc"

KVER=$(uname -r)
DKMS_DIR=/lib/modules/$KVER/updates/dkms
restore() {
	umount $DKMS_DIR 2>/dev/null
	rm -f /run/modprobe.d/zz-*.conf
	cp $CONF /run/modprobe.d/
	ip link del dd0 2>/dev/null
	modprobe -r sch_clsact sch_ingress 2>/dev/null
}
trap restore EXIT
loaded() { grep -q "^$1 " /proc/modules; }
fresh() {
	ip link del dd0 2>/dev/null
	modprobe -r sch_clsact sch_ingress 2>/dev/null
	ip link add dd0 type dummy && ip link set dd0 up
}
# only_loaded MOD DESCRIPTION: MOD is loaded, its rival is not
only_loaded() {
	local other=sch_ingress
	[ "$1" = sch_ingress ] && other=sch_clsact
	loaded "$1" && ! loaded $other && ok "$2" ||
		{ not_ok "$2"; diag "$(grep -E '^sch_(clsact|ingress) ' /proc/modules)"; }
}

path=$(modinfo -n sch_clsact)
case ${path#/lib/modules/"$KVER"/} in
updates/dkms/sch_clsact.ko | updates/dkms/sch_clsact.ko.xz) ok "sch_clsact is in updates/dkms, where DKMS installs it" ;;
*) not_ok "sch_clsact is in updates/dkms, where DKMS installs it: $path" ;;
esac
is "$(modinfo -F vermagic sch_clsact | cut -d' ' -f1)" "$KVER" "built for this kernel"
grep -q '^install sch_ingress ' /run/modprobe.d/sch-clsact-dkms.conf &&
	ok "the package's install rule is in force" || not_ok "the package's install rule is in force"
modprobe dummy

fresh
check "tc qdisc add dev dd0 clsact" tc qdisc add dev dd0 clsact
only_loaded sch_clsact "the alias load took sch_clsact, not the kernel's sch_ingress"
tc qdisc show dev dd0 | grep -q '^qdisc clsact ffff:' && ok "dd0 has a clsact qdisc" ||
	not_ok "dd0 has a clsact qdisc"

fresh
check "modprobe sch_ingress" modprobe sch_ingress
only_loaded sch_clsact "a load of sch_ingress by name loads sch_clsact"

fresh
check "modprobe --ignore-install sch_ingress" modprobe --ignore-install sch_ingress
only_loaded sch_ingress "--ignore-install reaches the kernel's sch_ingress"
check "tc qdisc add dev dd0 ingress, served by it" tc qdisc add dev dd0 ingress
# (its init fails with EEXIST, which modprobe itself takes for "loaded")
modprobe --ignore-install sch_clsact 2>/dev/null
loaded sch_clsact && not_ok "sch_clsact cannot load beside it" ||
	ok "sch_clsact cannot load beside it: the qdisc names are taken"

# Our module missing, as on a kernel DKMS did not build it for: the rule
# falls back to the kernel's module, and tc still works.
fresh
mount -t tmpfs none $DKMS_DIR
[ ! -e "$path" ] && ok "sch_clsact.ko made unreachable" || not_ok "sch_clsact.ko made unreachable"
check "without our module, tc qdisc add dev dd0 clsact" tc qdisc add dev dd0 clsact
only_loaded sch_ingress "without our module the kernel's sch_ingress answers"
umount $DKMS_DIR

# Removal: "apt remove" deletes the modprobe.d file, and DKMS the module
# (made unreachable here again).
fresh
rm /run/modprobe.d/sch-clsact-dkms.conf
mount -t tmpfs none $DKMS_DIR
check "after removal, tc qdisc add dev dd0 clsact" tc qdisc add dev dd0 clsact
only_loaded sch_ingress "after removal the kernel's sch_ingress answers"
check "and modprobe sch_ingress by name loads it" bash -c 'modprobe -r sch_ingress 2>/dev/null; ip link del dd0; modprobe sch_ingress && grep -q "^sch_ingress " /proc/modules'
restore
trap - EXIT
done_testing
