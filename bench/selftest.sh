#!/bin/bash
# The bench's own acceptance test: every way a run can go wrong must make
# 'make check' fail, and say why. Each case boots the guest once.
. "$(dirname "$0")/lib.sh"

pass=0
fail=0
out=$BENCH_CACHE/selftest
mkdir -p "$out"

verdict() {
	if [ "$1" = 0 ]; then
		echo "PASS selftest/$2"
		pass=$((pass + 1))
	else
		echo "FAIL selftest/$2"
		fail=$((fail + 1))
	fi
}

# expect_failure NAME PATTERN [VAR=value...]: make check must exit non-zero
# and print PATTERN.
expect_failure() {
	local name=$1 pattern=$2 rc=0
	shift 2
	env KERNEL_ARGS=kunit.enable=0 "$@" ONLY=bench/none "$REPO/bench/run.sh" check >"$out/$name.log" 2>&1 || rc=$?
	if [ $rc != 0 ] && grep -Eq "$pattern" "$out/$name.log"; then
		verdict 0 "$name: make check failed (rc $rc) and printed /$pattern/"
		grep -E -m3 "$pattern" "$out/$name.log" | sed 's/^/    /'
	else
		verdict 1 "$name: wanted a failure printing /$pattern/, got rc $rc (see $out/$name.log)"
	fi
}

"$REPO/bench/run.sh" build >/dev/null 2>&1 || die "the bench does not build"

expect_failure bug 'kernel BUG at' BREAK=bug
expect_failure kasan 'BUG: KASAN: slab-out-of-bounds' BREAK=kasan
expect_failure lockdep 'possible circular locking dependency' BREAK=lockdep
expect_failure warn 'kernel report \(WARNING\)' BREAK=warn
expect_failure test-hang 'timed out after 20s' BREAK=hang TEST_TIMEOUT=20
expect_failure guest-hang 'guest hung and was killed' BREAK=hang TEST_TIMEOUT=100000 BENCH_HARD_TIMEOUT=120
expect_failure early-poweroff 'powered off early' BREAK=poweroff

# A patch that does not apply stops the build and names the patch.
tmp=$out/badpatch
rm -rf "$tmp"
mkdir -p "$tmp/patches"
git clone -q --shared "$TREE" "$tmp/linux"
cp "$TREE/.bench-source-version" "$tmp/linux/"
cat >"$tmp/patches/0001-bench-selftest-broken.patch" <<'PATCH'
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Bench <bench@localhost>
Subject: [PATCH] bench selftest: a patch whose context is not in the tree

---
 Makefile | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/Makefile b/Makefile
--- a/Makefile
+++ b/Makefile
@@ -1,3 +1,3 @@
 # SPDX-License-Identifier: GPL-2.0
-VERSION = 99
+VERSION = 100
 PATCHLEVEL = 12
PATCH
rc=0
BENCH_CACHE=$tmp TREE=$tmp/linux PATCHES=$tmp/patches "$REPO/bench/tree.sh" prepare \
	>"$out/badpatch.log" 2>&1 || rc=$?
if [ $rc != 0 ] && grep -q 'patch does not apply: .*0001-bench-selftest-broken.patch' "$out/badpatch.log" &&
	grep -q 'VERSION = 99' "$out/badpatch.log"; then
	verdict 0 "bad-patch: build stopped naming the patch and its failing hunk"
	sed 's/^/    /' "$out/badpatch.log" | grep -v '^\s*\[bench\]' | head -8
else
	verdict 1 "bad-patch: wanted a stop naming the patch (see $out/badpatch.log)"
fi
rm -rf "$tmp"

echo "$pass passed, $fail failed"
[ $fail = 0 ]
