#!/bin/bash
# bench-timeout: 7200
# Upstream's tc-testing (tdc) against our sch_clsact and the tree's
# sch_ingress, one after the other in this boot: ingress.json, the tests of
# upstream's files that set up an ingress or clsact qdisc, and our
# clsact.json. Prints TAP: one line per test for ours, then the comparison.
. "$(dirname "$0")/../lib/tap.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
W=/tmp/tdc
FILES=(qdiscs/ingress.json filters/basic.json filters/fw.json filters/cgroup.json
	filters/flow.json infra/actions.json filters/matchall.json filters/flower.json
	filters/u32.json filters/route.json filters/bpf.json actions/gact.json
	actions/ct.json actions/mirred.json qdiscs/qfq.json qdiscs/clsact.json)

rm -rf $W && cp -a /bench/tc-testing $W && cp "$HERE/tdc/clsact.json" $W/tc-tests/qdiscs/
# Keep only the tests that involve either qdisc; the rest of those files
# would test nothing of ours and double the run.
(cd $W/tc-tests && python3 - "${FILES[@]}" <<'PY'
import json, sys
for f in sys.argv[1:]:
    tests = json.load(open(f))
    keep = [t for t in tests if 'ingress' in json.dumps(t) or 'clsact' in json.dumps(t)]
    json.dump(keep, open(f, 'w'), indent=4)
    print('# %s: %d of %d tests use ingress or clsact' % (f, len(keep), len(tests)))
    with open('../selected.txt', 'a') as out:
        out.writelines(t['id'] + '\n' for t in keep)
PY
)
# Debian 12's pyroute2 (0.7.2) makes tdc's veth creation fail with ERANGE;
# this stub makes tdc's netns plugin fall back to ip(8).
echo 'raise ImportError("tdc_compare: use ip(8), not pyroute2")' >$W/pyroute2.py
cat >$W/tdc_config_local.py <<PY
EXTRA_NAMES = {'TC': '$(command -v tc)', 'IP': '$(command -v ip)', 'TIMEOUT': 60}
PY
# What tdc.sh loads up front: the modules these files use.
for m in act_bpf act_connmark act_csum act_ct act_gact act_mirred act_nat act_pedit \
	act_police act_sample act_simple act_skbedit act_skbmod act_tunnel_key act_vlan \
	cls_basic cls_bpf cls_cgroup cls_flow cls_flower cls_fw cls_matchall cls_route cls_u32 \
	em_cmp em_meta em_nbyte em_text em_u32 sch_prio sch_qfq dummy veth; do
	modprobe -q $m || diag "module $m not available"
done
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf

# run IMPL MODULE: tdc with MODULE providing ingress/clsact; TAP kept.
run() {
	local impl=$1 mod=$2 other
	other=sch_clsact
	[ "$mod" = sch_clsact ] && other=sch_ingress
	modprobe -r $other 2>/dev/null
	modprobe --ignore-install $mod || { not_ok "load $mod"; return; }
	# -J as upstream's tdc.sh: tests in their own netns run in parallel.
	(cd $W && timeout 5400 python3 -u ./tdc.py -J "$(nproc)" -f "${FILES[@]/#/tc-tests/}" >"/results/tdc-$impl.tap" 2>"/results/tdc-$impl.err")
	diag "$impl: $(grep -c '^ok' "/results/tdc-$impl.tap") ok lines, $(grep -c '^not ok' "/results/tdc-$impl.tap") not ok"
}
run ours sch_clsact
run tree sch_ingress
modprobe -r sch_ingress

rc=0
python3 "$HERE/tdc_report.py" /results/tdc-ours.tap /results/tdc-tree.tap "$HERE/tdc/expected.txt" $W/selected.txt "$_tap_n" || rc=1
[ "$_tap_failed" = 0 ] || rc=1
exit $rc
