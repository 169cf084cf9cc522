#!/bin/bash
# What each patch says, where (bench/patch-rules.py: no identity stored,
# how-tested text below the ---, Cc: stable only with Fixes:, no lab words,
# dates, subject prefixes, cover letters). Then each topic series of
# patches/series on its own: from the pristine tree (with the topics its
# depends-on names first, which it must need), its patches applied one at a
# time, each checked alone: it applies, it touches only its topic's paths,
# checkpatch --strict, kernel-doc on the files it touches, and a W=1 build
# of every object it touches (with the bench's config) that must add no
# warning. Then apply and export give patches/ back byte for byte (notes
# and dates included), the export stops where topics are ambiguous, make
# series signs with the sender's identity and refuses placeholders
# (bench/series-selftest.sh), and all series build under Debian's config.
# Uses its own worktree and objects under $BENCH_CACHE/lint. Ends with
# "N passed, N failed".
. "$(dirname "$0")/lib.sh"

[ -f "$KOUT/.config" ] || die "no bench kernel config yet: run 'make build' first"
LINT=$BENCH_CACHE/lint
WT=$LINT/tree
OBJ=$LINT/build
pass=0
fail=0

verdict() {
	if [ "$1" = 0 ]; then echo "PASS $2"; pass=$((pass + 1)); else echo "FAIL $2"; fail=$((fail + 1)); fi
}
# tally LABEL CMD...: run a checker that prints PASS/FAIL lines; print and count
# them. Its exit status counts too: one that exits non-zero (a crash, a
# traceback, a failure it printed no FAIL line for) is one more FAIL.
tally() {
	local label=$1 line rc=0 out
	shift
	out=$(mktemp)
	"$@" >"$out" 2>&1 || rc=$?
	while IFS= read -r line; do
		echo "$line"
		case "$line" in
		"PASS "*) pass=$((pass + 1)) ;;
		"FAIL "*) fail=$((fail + 1)) ;;
		esac
	done <"$out"
	rm -f "$out"
	[ $rc = 0 ] || verdict 1 "$label exited with status $rc"
}

mkdir -p "$LINT" "$OBJ"
if [ ! -e "$WT/.git" ]; then
	git -C "$TREE" worktree prune
	git -C "$TREE" worktree add -q --detach "$WT" pristine
fi
# back to the pristine tree, before each series
reset_tree() {
	git -C "$WT" am --abort >/dev/null 2>&1 || true
	git -C "$WT" checkout -q --detach pristine
	git -C "$WT" reset -q --hard pristine
}
reset_tree

# The exception for checkpatch's CamelCase checks (known_camelcase, lib.sh)
# drops a name the patched file declares as an enum member, and keeps a
# new one and one the file has only in a comment.
cc_patch=$(find "$PATCHES/net" -name '*8139cp-advertise*.patch' | head -n 1)
cc_what="checkpatch's CamelCase checks: a new name (CpNewName) and one only in a comment (TimerInt) still fail, 8139cp's enum members (DescOwn) do not"
if [ -z "$cc_patch" ]; then
	verdict 1 "$cc_what (no 8139cp patch to try it on)"
else
	kept=$(printf '%s\n' 'p:1: CHECK: Avoid CamelCase: <DescOwn>' 'p:2: CHECK: Avoid CamelCase: <CpNewName>' \
		'p:3: CHECK: Avoid CamelCase: <TimerInt>' | known_camelcase "$WT" "$cc_patch")
	[ "$kept" = $'p:2: CHECK: Avoid CamelCase: <CpNewName>\np:3: CHECK: Avoid CamelCase: <TimerInt>' ] &&
		verdict 0 "$cc_what" || { verdict 1 "$cc_what"; echo "    kept: $kept"; }
fi
# ACPICA's style is accepted only in a patch that touches nothing else.
ac_what="checkpatch ignores ACPICA's style only in patches that touch drivers/acpi/acpica/ alone"
ac_one=$(grep -l '^+++ b/drivers/acpi/acpica/' "$PATCHES"/acpi/*.patch | head -n 1)
ac_mixed=$(grep -l '^+++ b/drivers/acpi/acpi_configfs.c' "$PATCHES"/acpi/*.patch | head -n 1)
if [ -n "$ac_one" ] && [ -n "$ac_mixed" ] && [ -n "$(acpica_style "$ac_one")" ] &&
	[ -z "$(acpica_style "$ac_mixed")" ] && [ -z "$(acpica_style "$cc_patch")" ]; then
	verdict 0 "$ac_what"
else
	verdict 1 "$ac_what"
fi
[ -f "$TREE/.bench-source-version" ] || die "no kernel tree at $TREE: run 'make build' first"
echo "== what each patch and cover letter says, and where"
tally patch-rules.py python3 "$REPO/bench/patch-rules.py" "$PATCHES" "$PATCH_AUTHOR_PLACEHOLDER" \
	"$(cat "$TREE/.bench-source-version")"
# and those rules fail on copies of a patch made to break them
tally "patch-rules.py --selftest" python3 "$REPO/bench/patch-rules.py" --selftest "$PATCHES" "$PATCH_AUTHOR_PLACEHOLDER" \
	"$(cat "$TREE/.bench-source-version")"
cp "$KOUT/.config" "$OBJ/.config"
make -s -C "$WT" O="$OBJ" ARCH=x86_64 LOCALVERSION= olddefconfig prepare -j"$JOBS" >/dev/null 2>&1 ||
	die "cannot prepare the lint build"

# kdoc_warnings REV FILE...: kernel-doc -Wall warnings of the files as
# they are at REV, without line numbers, sorted.
kdoc_warnings() {
	local rev=$1 f tmp
	shift
	tmp=$(mktemp -d)
	for f in "$@"; do
		mkdir -p "$tmp/$(dirname "$f")"
		git -C "$WT" show "$rev:$f" >"$tmp/$f" 2>/dev/null || rm -f "$tmp/$f"
	done
	(cd "$tmp" && for f in "$@"; do [ -f "$f" ] && "$WT/scripts/kernel-doc" -none -Wall "$f"; done) 2>&1 |
		sed -E 's/:[0-9]+:/:/; s/ line [0-9]+//' | sort -u
	rm -rf "$tmp"
}

lint_patch() {
	local p=$1 topic=$2 name out rc warn t f o
	name=${topic:+$topic/}${p##*/}
	if ! git -C "$WT" am -q "$p" >/dev/null 2>&1; then
		verdict 1 "$name: applies alone onto the pristine tree${topic:+ with the $topic series before it}"
		return 1
	fi
	mapfile -t files < <(git -C "$WT" diff --name-only HEAD~1 HEAD)
	if [ -n "$topic" ]; then
		t=$(topics_holding "${files[@]}")
		[[ $'\n'$t$'\n' == *$'\n'$topic$'\n'* ]] && verdict 0 "$name: touches only the $topic paths" ||
			{ verdict 1 "$name: touches only the $topic paths"; printf '    %s\n' "${files[@]}"; }
	fi
	# Not findings: the MAINTAINERS reminder for new files, Fixes: IDs
	# checkpatch cannot look up because Debian's tarball carries no
	# upstream history (the IDs are upstream's), and the missing sign-off:
	# patches/ store none, make series adds the sender's (the series
	# self-test runs checkpatch on the mails as sent, signed).
	# (from the tree's top: checkpatch learns the kernel's own CamelCase
	# names, Qdisc say, from the include/ of the git tree it runs in)
	# shellcheck disable=SC2046 # acpica_style's options are words
	out=$(cd "$WT" && ./scripts/checkpatch.pl --strict --terse --no-summary $(acpica_style "$p") "$p" 2>/dev/null |
		grep -v -e 'does MAINTAINERS need updating' -e "Unknown commit id '[0-9a-f]*', maybe rebased" \
			-e 'ERROR: Missing Signed-off-by: line(s)' | known_camelcase "$WT" "$p" || true)
	[ -z "$out" ] && verdict 0 "$name: checkpatch --strict" ||
		{ verdict 1 "$name: checkpatch --strict"; echo "$out" | sed 's/^/    /'; }

	mapfile -t files < <(git -C "$WT" diff --name-only --diff-filter=AM HEAD~1 HEAD)
	docs=()
	objs=()
	ksts=()
	for f in "${files[@]}"; do
		case "$f" in
		tools/testing/selftests/*.c) ksts+=("$f") ;;
		*.c) objs+=("${f%.c}.o"); docs+=("$f") ;;
		*.h) docs+=("$f") ;;
		esac
	done
	# a kselftest builds with its own Makefile's flags (-Wall), not kbuild's
	for f in "${ksts[@]}"; do
		out=$(gcc -Wall -O2 -I"$WT/tools/testing/selftests" -c -o /dev/null "$WT/$f" 2>&1)
		[ $? = 0 ] && [ -z "$out" ] && verdict 0 "$name: kselftest $f builds with -Wall, no warning" ||
			{ verdict 1 "$name: kselftest $f builds with -Wall, no warning"; echo "$out" | head -20 | sed 's/^/    /'; }
	done
	if [ ${#docs[@]} -gt 0 ]; then
		# kernel-doc warnings the patch adds: after minus before.
		out=$(comm -13 <(kdoc_warnings HEAD~1 "${docs[@]}") <(kdoc_warnings HEAD "${docs[@]}"))
		[ -z "$out" ] && verdict 0 "$name: kernel-doc of what it adds" ||
			{ verdict 1 "$name: kernel-doc"; echo "$out" | sed 's/^/    /'; }
	fi
	# objects the bench config builds (kbuild has no rule for one in a
	# directory the config leaves out); a touched header rebuilds its users
	built=("${objs[@]}")
	while [ ${#built[@]} -gt 0 ]; do
		rc=0
		out=$(make -s -C "$WT" O="$OBJ" ARCH=x86_64 LOCALVERSION= W=1 -j"$JOBS" "${built[@]}" 2>&1) || rc=$?
		o=$(echo "$out" | sed -n "s/.*No rule to make target '\([^']*\.o\)'.*/\1/p" | head -1)
		[ $rc != 0 ] && [ -n "$o" ] || break
		mapfile -t built < <(printf '%s\n' "${built[@]}" | grep -vxF "$o")
	done
	if [ ${#built[@]} -gt 0 ]; then
		warn=$(echo "$out" | grep -E 'warning:|error:' || true)
		[ $rc = 0 ] && [ -z "$warn" ] && verdict 0 "$name: W=1 build of ${built[*]}" ||
			{ verdict 1 "$name: W=1 build of ${built[*]}"; echo "$warn" | head -20 | sed 's/^/    /'; }
	fi
}

mapfile -t order < <(topics)
if [ ${#order[@]} = 0 ]; then
	for p in $(all_patches); do lint_patch "$p" "" || break; done
else
	for t in "${order[@]}"; do
		reset_tree
		mapfile -t deps < <(topic_deps "$t")
		if [ ${#deps[@]} = 0 ]; then
			echo "== series $t, alone on the pristine tree"
		else
			# a declared dependency must be real: the series alone fails
			echo "== series $t, on the pristine tree with ${deps[*]} (its depends-on)"
			alone=0
			for p in $(topic_patches "$t"); do
				git -C "$WT" am -q "$p" >/dev/null 2>&1 || { alone=1; break; }
			done
			[ $alone = 1 ] && verdict 0 "$t: does not apply without ${deps[*]}, so it depends on it" ||
				verdict 1 "$t: applies alone: drop patches/$t/depends-on and say so in its cover letter"
			reset_tree
			for d in "${deps[@]}"; do
				ok=0
				for p in $(topic_patches "$d"); do
					git -C "$WT" am -q "$p" >/dev/null 2>&1 || { ok=1; break; }
				done
				verdict $ok "$t: $d, which it depends on, applies first"
			done
		fi
		for p in $(topic_patches "$t"); do lint_patch "$p" "$t" || break; done
	done

	# apply and export give patches/ back byte for byte: dates, notes
	# below the ---, the placeholder author, each commit in its topic
	echo "== apply and export round trip, export sorting"
	reset_tree
	ok=0
	for p in $(all_patches); do
		am_patch "$WT" "$p" >/dev/null 2>&1 || { ok=1; echo "    ${p#"$PATCHES"/} does not apply"; break; }
	done
	rt=$LINT/roundtrip
	if [ $ok = 0 ]; then
		rm -rf "$rt"
		cp -r "$PATCHES" "$rt"
		# the export writes each topic's patches; a topic's mainline/
		# (its patches rebased for mainline) is kept as it is
		find "$rt" -maxdepth 2 -name '*.patch' -delete
		TREE=$WT PATCHES=$rt "$REPO/bench/tree.sh" export >"$LINT/export.log" 2>&1 || ok=1
	fi
	out=$(diff -r "$PATCHES" "$rt" 2>&1 | head -20 || true)
	[ $ok = 0 ] && [ -z "$out" ] && verdict 0 "all $(all_patches | wc -l) patches applied (git am, notes attached) and exported (format-patch --notes) come back byte for byte" ||
		{ verdict 1 "apply and export round trip"; { cat "$LINT/export.log"; echo "$out"; } | sed 's/^/    /'; }
	# a topic that takes only fixes is what makes two topics with shared
	# paths unambiguous: without its mark the export must stop
	for t in "${order[@]}"; do
		topic_fixes_only "$t" || continue
		rm -rf "$rt"
		cp -r "$PATCHES" "$rt"
		rm "$rt/$t/fixes-only"
		rc=0
		TREE=$WT PATCHES=$rt "$REPO/bench/tree.sh" export >"$LINT/export.log" 2>&1 || rc=$?
		[ $rc != 0 ] && grep -q 'could go to topic' "$LINT/export.log" &&
			verdict 0 "export stops on ambiguity: without $t/fixes-only, $(grep -o 'commit .*could go to topic [^:]*' "$LINT/export.log")" ||
			{ verdict 1 "export without $t/fixes-only should stop on an ambiguous commit (rc $rc)"; sed 's/^/    /' "$LINT/export.log"; }
	done
	rm -rf "$rt"
	reset_tree

	echo "== make series: the sender's identity, and refusals"
	tally series-selftest.sh "$REPO/bench/series-selftest.sh"
fi
# All three series under Debian's own config (olddefconfig of the
# config-6.12.118+deb12-amd64 its linux-image ships): every object the
# series touches, compiled with W=1 before and after; no warning or error
# may be new.
if [ ${#order[@]} -gt 0 ]; then
	echo "== all series under Debian's config"
	DOBJ=$LINT/build-debian
	dcfg=$("$REPO/bench/stock.sh" fetch | tail -1)
	reset_tree
	mkdir -p "$DOBJ"
	cp "$dcfg" "$DOBJ/.config"
	# Debian's signing certificates are not in the source package.
	"$WT/scripts/config" --file "$DOBJ/.config" --set-str SYSTEM_TRUSTED_KEYS "" \
		--set-str SYSTEM_REVOCATION_KEYS "" --set-str MODULE_SIG_KEY "certs/signing_key.pem"
	make -s -C "$WT" O="$DOBJ" ARCH=x86_64 LOCALVERSION= olddefconfig prepare -j"$JOBS" \
		>"$LINT/debian-prepare.log" 2>&1 || die "cannot prepare the Debian-config build (see $LINT/debian-prepare.log)"
	mapfile -t touched < <(for p in $(all_patches); do
		sed -n 's|^+++ b/\(.*\.c\)$|\1|p' "$p"; done | sort -u)
	dobjs=()
	for f in "${touched[@]}"; do
		o=${f%.c}.o
		# built by this config: its Makefile line's symbol is y or m
		if make -s -C "$WT" O="$DOBJ" ARCH=x86_64 LOCALVERSION= W=1 "$o" >/dev/null 2>&1; then
			dobjs+=("$o")
		fi
	done
	debian_warnings() {
		local o
		for o in "${dobjs[@]}"; do
			rm -f "$DOBJ/$o"
			{ make -s -C "$WT" O="$DOBJ" ARCH=x86_64 LOCALVERSION= W=1 "$o" 2>&1 ||
				echo "$o: error: make failed"; } |
				{ grep -E 'warning:|error:' || true; } | sed -E 's/:[0-9]+:[0-9]+:/:/'
		done | sort -u
	}
	before=$(debian_warnings)
	for t in "${order[@]}"; do
		for p in $(topic_patches "$t"); do git -C "$WT" am -q "$p" >/dev/null 2>&1 ||
			die "$t/${p##*/} does not apply for the Debian-config build"; done
	done
	# what built before must build after; new files join
	for f in "${touched[@]}"; do
		o=${f%.c}.o
		[[ " ${dobjs[*]} " == *" $o "* ]] && continue
		grep -q "$(basename "$o")" "$WT/$(dirname "$f")/Makefile" 2>/dev/null || continue
		make -s -C "$WT" O="$DOBJ" ARCH=x86_64 LOCALVERSION= W=1 "$o" >/dev/null 2>&1 && dobjs+=("$o")
	done
	after=$(debian_warnings)
	new=$(comm -13 <(echo "$before") <(echo "$after") | sed '/^$/d')
	if [ ${#dobjs[@]} = 0 ]; then
		verdict 1 "Debian config: not one object the series touches was built"
	elif [ -z "$new" ]; then
		verdict 0 "Debian config, W=1, no new warning or error: ${dobjs[*]}"
	else
		verdict 1 "Debian config, W=1: new warnings or errors"
		echo "$new" | sed 's/^/    /'
	fi
	# The helpers' KUnit suite under Debian's config, whose SCTP is a
	# module: KUnit is off there, so it is enabled (as a module) for this
	# one object, after the comparison above
	if grep -q '^config SKB_CSUM_OFFLOAD_KUNIT_TEST' "$WT/net/Kconfig"; then
		"$WT/scripts/config" --file "$DOBJ/.config" --module KUNIT \
			--module SKB_CSUM_OFFLOAD_KUNIT_TEST
		make -s -C "$WT" O="$DOBJ" ARCH=x86_64 LOCALVERSION= olddefconfig >/dev/null 2>&1
		sctp=$(sed -n 's/^CONFIG_IP_SCTP=//p' "$DOBJ/.config")
		kt=$(sed -n 's/^CONFIG_SKB_CSUM_OFFLOAD_KUNIT_TEST=//p' "$DOBJ/.config")
		o=net/core/skb_csum_offload_test.o
		if out=$(make -s -C "$WT" O="$DOBJ" ARCH=x86_64 LOCALVERSION= W=1 "$o" 2>&1) &&
			[ "$kt" = m ] && [ -f "$DOBJ/$o" ] && ! grep -qE 'warning:|error:' <<<"$out"; then
			verdict 0 "Debian config (IP_SCTP=${sctp:-n}) with KUNIT=m: the helpers' KUnit suite builds as a module, W=1 without warning ($o)"
		else
			verdict 1 "Debian config (IP_SCTP=${sctp:-n}) with KUNIT=m: the helpers' KUnit suite (CONFIG_SKB_CSUM_OFFLOAD_KUNIT_TEST=${kt:-unset}) does not build cleanly"
			echo "$out" | grep -E 'warning:|error:' | head -20 | sed 's/^/    /'
		fi
	fi
	reset_tree
fi
echo "$pass passed, $fail failed"
[ $fail = 0 ]
