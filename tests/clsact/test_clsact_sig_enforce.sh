#!/bin/bash
# The sch-clsact-dkms drop-in on Debian's kernel booted with module
# signatures enforced (make stock-check's second boot: module.sig_enforce=1,
# as under Secure Boot), where the key DKMS signed sch_clsact with (or no
# key) is not one the kernel trusts: the kernel refuses ours with
# EKEYREJECTED, and the package's install rule must then serve "ingress"
# and "clsact" with the kernel's sch_ingress, by alias and by name, instead
# of failing every such qdisc on the machine. Skipped elsewhere.
. "$(dirname "$0")/../lib/tap.sh"
PKG=/bench/pkg
[ -d $PKG ] || { skip "signature enforcement" "no sch-clsact-dkms package staged (only on make stock-check)"; done_testing; }
[ "$(cat /sys/module/module/parameters/sig_enforce 2>/dev/null)" = Y ] ||
	{ skip "signature enforcement" "module signatures not enforced in this boot"; done_testing; }

cleanup() {
	ip link del dd0 2>/dev/null
	modprobe -r sch_clsact sch_ingress 2>/dev/null
}
trap cleanup EXIT
loaded() { grep -q "^$1 " /proc/modules; }

modprobe dummy
grep -q '^install sch_ingress ' /run/modprobe.d/sch-clsact-dkms.conf &&
	ok "the package's install rule is in force" || not_ok "the package's install rule is in force"
out=$(LC_ALL=C modprobe --ignore-install sch_clsact 2>&1)
rc=$?
is "$rc $(grep -o 'Key was rejected by service' <<<"$out")" "1 Key was rejected by service" \
	"the kernel refuses our module's signature"

ip link add dd0 type dummy && ip link set dd0 up
check "tc qdisc add dev dd0 clsact" tc qdisc add dev dd0 clsact
loaded sch_ingress && ! loaded sch_clsact && ok "served by the kernel's sch_ingress" ||
	not_ok "served by the kernel's sch_ingress ($(grep -E '^sch_(clsact|ingress) ' /proc/modules))"
check "an egress filter on it" tc filter add dev dd0 egress matchall action pass
check "delete it" tc qdisc del dev dd0 clsact

check "modprobe -r sch_ingress" modprobe -r sch_ingress
out=$(modprobe sch_ingress 2>&1)
is "$? $(grep -c 'Key was rejected by service' <<<"$out")" "0 1" \
	"modprobe sch_ingress succeeds, and shows why ours was not loaded"
loaded sch_ingress && ! loaded sch_clsact && ok "the kernel's sch_ingress is loaded" ||
	not_ok "the kernel's sch_ingress is loaded"
check "tc qdisc add dev dd0 ingress" tc qdisc add dev dd0 ingress
done_testing
