#!/bin/bash
# bench-timeout: 5400
# Upstream's kselftests that set up ingress or clsact qdiscs, run with our
# sch_clsact and then with the kernel's own sch_ingress, in this boot:
# net/test_ingress_egress_chaining.sh and every net/forwarding/tc_*.sh that
# uses either qdisc, on veth pairs. For each script and module: the exit
# status and each "TEST: ... [ OK ]"-style case line. A script must end the
# same way with both modules, case by case, and pass with ours, unless
# kselftest_expected.txt says why it cannot here.
. "$(dirname "$0")/../lib/tap.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
K=/bench/selftests/net
OUT=/results/kselftests
mkdir -p $OUT
[ -d $K ] || { skip "kselftests" "not staged"; done_testing; }

scripts=(test_ingress_egress_chaining.sh)
for f in $K/forwarding/tc_*.sh; do
	[ "${f##*/}" = tc_common.sh ] && continue
	grep -qE 'ingress|clsact' "$f" && scripts+=("forwarding/${f##*/}")
done

# forwarding/lib.sh reads forwarding.config; veth pairs, no sleeps between
# its steps beyond what it needs.
cat >/tmp/forwarding.config <<'CFG'
NETIFS[p1]=veth0
NETIFS[p2]=veth1
NETIFS[p3]=veth2
NETIFS[p4]=veth3
NETIFS[p5]=veth4
NETIFS[p6]=veth5
NETIFS[p7]=veth6
NETIFS[p8]=veth7
NETIF_TYPE=veth
NETIF_CREATE=yes
PING=ping
PING6=ping6
MZ=mausezahn
MZ_DELAY=0
WAIT_TIME=5
PAUSE_ON_FAIL=no
PAUSE_ON_CLEANUP=no
INTERFACE_TIMEOUT=600
LOW_AGEING_TIME=1000
REQUIRE_JQ=yes
REQUIRE_MZ=yes
STABLE_MAC_ADDRS=yes
TC_FLAG=skip_hw
CFG
rm -rf /tmp/kst && cp -a $K /tmp/kst && cp /tmp/forwarding.config /tmp/kst/forwarding/

for m in veth act_mirred act_gact act_vlan act_police act_pedit act_tunnel_key \
	cls_flower cls_matchall cls_u32 cls_bpf vxlan bridge 8021q mpls_router mpls_iptunnel; do
	modprobe -q $m 2>/dev/null || diag "module $m not available"
done

# run MODULE SCRIPT: its outcome, "pass", "skip" or "fail rc=N", then its
# case lines ("name: OK|FAIL|SKIP|XFAIL"), into $OUT/MODULE/SCRIPT.res.
# Its own session, so that a timeout takes its helpers (mausezahn, ping)
# too.
run() {
	local mod=$1 s=$2 out=$OUT/$1/${2//\//_} rc=0
	mkdir -p "$OUT/$mod"
	(cd "/tmp/kst/$(dirname "$s")" && timeout -k 5 600 setsid -w bash "./$(basename "$s")") \
		>"$out.log" 2>&1 </dev/null || rc=$?
	case $rc in
	0) echo pass ;;
	4) echo skip ;;
	*) echo "fail rc=$rc" ;;
	esac >"$out.res"
	sed -nE 's/^TEST: (.*[^ ]) +\[ *(OK|FAIL|SKIP|XFAIL|WARN) *\]$/\1: \2/p; s/^(PASS|FAIL|SKIP): (.*)$/\2: \1/p' \
		"$out.log" >>"$out.res"
}

# load MODULE: it alone provides ingress and clsact ("--ignore-install":
# on Debian's kernel the package's install rule would load ours for
# sch_ingress).
load() {
	modprobe -r sch_clsact sch_ingress 2>/dev/null
	modprobe --ignore-install "$1"
}

# Each script with ours, then with the kernel's, judged at once, so that a
# run cut short keeps what it judged.
for s in "${scripts[@]}"; do
	f=${s//\//_}.res
	for mod in sch_clsact sch_ingress; do
		load $mod || { not_ok "$s: load $mod"; continue 2; }
		run $mod "$s"
		ip -all netns delete 2>/dev/null
	done
	ours=$OUT/sch_clsact/$f tree=$OUT/sch_ingress/$f
	if cmp -s "$ours" "$tree"; then
		ok "$s: the same outcome and cases with sch_clsact and sch_ingress ($(head -1 "$ours"), $(($(wc -l <"$ours") - 1)) cases)"
	else
		not_ok "$s: outcomes differ between sch_clsact and sch_ingress"
		diff "$ours" "$tree" | sed 's/^/# /'
	fi
	# A script listed in kselftest_expected.txt fails or skips for the
	# reason the list gives (a tool too old, say), with both modules alike;
	# any other skip or failure fails.
	why=$(awk -v s="$s" '!/^#/ && $1 == s { $1 = ""; sub(/^ +/, ""); print }' "$HERE/kselftest_expected.txt")
	outcome=$(head -1 "$ours")
	if [ "$outcome" = pass ]; then
		[ -z "$why" ] && ok "$s passes with sch_clsact" ||
			not_ok "$s passes with sch_clsact, but kselftest_expected.txt says it does not: $why"
	elif [ -n "$why" ] && cmp -s "$ours" "$tree"; then
		skip "$s: $outcome alike with both modules" "$why"
	else
		not_ok "$s with sch_clsact: $outcome"
		grep -m1 -E 'SKIP' "$OUT/sch_clsact/${s//\//_}.log" | sed 's/^/# /'
	fi
	grep -E ': (FAIL|WARN)$' "$ours" | sed 's/^/# /'
done
modprobe -r sch_ingress sch_clsact 2>/dev/null
done_testing
