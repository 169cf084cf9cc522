#!/bin/bash
# The configfs series' own kselftest, filesystems/configfs/bin_attr_test,
# on samples/configfs' binary attribute: each of its cases passes on the
# bench kernel (one TAP line per case, with the harness's output on a
# failure), and the sample unloads afterwards, so that the tests that swap
# in 6.12's configfs can still unload ours.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"

KST=/bench/selftests/filesystems/configfs/bin_attr_test
out=$(mktemp)

configfs_up && modprobe configfs_sample && ok "configfs and configfs_sample load" ||
	not_ok "configfs and configfs_sample load"
"$KST" >"$out" 2>&1
rc=$?
# the harness's own result lines: "ok N blob.NAME" / "not ok N blob.NAME"
while read -r verdict name; do
	if [ "$verdict" = ok ]; then ok "bin_attr_test: $name"; else not_ok "bin_attr_test: $name"; fi
done < <(sed -n 's/^\(not ok\|ok\) [0-9]* \(blob\..*\)$/\1 \2/p' "$out" | sed 's/^not ok/not_ok/')
is "$(grep -cE '^(not )?ok [0-9]+ blob\.' "$out")" 10 "bin_attr_test ran its 10 cases"
is "$rc" 0 "bin_attr_test exits 0"
grep -q '^not ok\|# SKIP' "$out" && sed 's/^/# /' "$out"
check "configfs_sample unloads" modprobe -r configfs_sample
rm -f "$out"
done_testing
