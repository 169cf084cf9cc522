#!/bin/bash
# Each topic series of patches/series on its own: from the pristine tree,
# its patches applied one at a time, each checked alone: it applies, it
# touches only its topic's paths, checkpatch --strict, kernel-doc on the
# files it touches, and a W=1 build of every object it touches (with the
# bench's config) that must add no warning. Uses its own worktree and
# objects under $BENCH_CACHE/lint.
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
		t=$(topic_of "${files[@]}")
		[ "$t" = "$topic" ] && verdict 0 "$name: touches only the $topic paths" ||
			{ verdict 1 "$name: touches only the $topic paths"; printf '    %s\n' "${files[@]}"; }
	fi
	# Not findings: the MAINTAINERS reminder for new files, and Fixes:
	# IDs checkpatch cannot look up because Debian's tarball carries no
	# upstream history (the IDs are upstream's).
	out=$("$WT/scripts/checkpatch.pl" --strict --terse --no-summary "$p" 2>/dev/null |
		grep -v -e 'does MAINTAINERS need updating' -e "Unknown commit id '[0-9a-f]*', maybe rebased" || true)
	[ -z "$out" ] && verdict 0 "$name: checkpatch --strict" ||
		{ verdict 1 "$name: checkpatch --strict"; echo "$out" | sed 's/^/    /'; }

	mapfile -t files < <(git -C "$WT" diff --name-only --diff-filter=AM HEAD~1 HEAD)
	docs=()
	objs=()
	for f in "${files[@]}"; do
		case "$f" in
		*.c) objs+=("${f%.c}.o"); docs+=("$f") ;;
		*.h) docs+=("$f") ;;
		esac
	done
	if [ ${#docs[@]} -gt 0 ]; then
		# kernel-doc warnings the patch adds: after minus before.
		out=$(comm -13 <(kdoc_warnings HEAD~1 "${docs[@]}") <(kdoc_warnings HEAD "${docs[@]}"))
		[ -z "$out" ] && verdict 0 "$name: kernel-doc of what it adds" ||
			{ verdict 1 "$name: kernel-doc"; echo "$out" | sed 's/^/    /'; }
	fi
	# objects the bench config builds; a touched header rebuilds its users
	built=()
	for o in "${objs[@]}"; do
		[ -f "$KOUT/$o" ] && built+=("$o")
	done
	if [ ${#built[@]} -gt 0 ]; then
		rc=0
		out=$(make -s -C "$WT" O="$OBJ" ARCH=x86_64 LOCALVERSION= W=1 -j"$JOBS" "${built[@]}" 2>&1) || rc=$?
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
		echo "== series $t, alone on the pristine tree"
		for p in $(topic_patches "$t"); do lint_patch "$p" "$t" || break; done
	done
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
	reset_tree
fi
echo "$pass passed, $fail failed"
[ $fail = 0 ]
