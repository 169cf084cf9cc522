#!/bin/bash
# make series: each topic series of patches/series as it would be mailed.
# From a tree with that series alone applied to the pristine source:
# git format-patch --cover-letter, the cover letter filled from
# patches/<topic>/cover-letter (first line the subject, then the body),
# and To/Cc from the tree's own scripts/get_maintainer.pl (maintainers
# and supporters To, reviewers and lists Cc). Written to outgoing/<topic>/
# (SERIES_OUT moves it), which git ignores.
. "$(dirname "$0")/lib.sh"

OUT=${SERIES_OUT:-$REPO/outgoing}
WT=$BENCH_CACHE/series-tree

[ -f "$PATCHES/series" ] || die "no patches/series: nothing to format"
"$REPO/bench/tree.sh" prepare >/dev/null
if [ ! -e "$WT/.git" ]; then
	git -C "$TREE" worktree prune
	git -C "$TREE" worktree add -q --detach "$WT" pristine
fi

for t in $(topics); do
	cover=$PATCHES/$t/cover-letter
	[ -s "$cover" ] || die "no cover letter for the $t series: write $cover"
	git -C "$WT" am --abort >/dev/null 2>&1 || true
	git -C "$WT" checkout -q --detach pristine
	git -C "$WT" reset -q --hard pristine
	for p in $(topic_patches "$t"); do
		git -C "$WT" am -q "$p" >/dev/null 2>&1 ||
			die "$t/${p##*/} does not apply alone onto the pristine tree"
	done
	mapfile -t ps < <(topic_patches "$t")
	# get_maintainer.pl on the whole series. Debian's tarball has no
	# history, so MAINTAINERS alone decides (and the Fixes: IDs it would
	# look up are unknown here); keywords off: a test named in a message
	# is not a subsystem.
	to=() cc=()
	while IFS= read -r line; do
		addr=${line%% (*}
		case "$line" in
		*"(maintainer:"* | *"(supporter:"*) to+=("--to=$addr") ;;
		*) cc+=("--cc=$addr") ;;
		esac
	done < <(cd "$WT" && ./scripts/get_maintainer.pl --no-git --no-git-fallback \
		--no-keywords "${ps[@]}" 2>/dev/null)
	# and whoever the change concerns beyond MAINTAINERS (patches/<topic>/cc)
	if [ -s "$PATCHES/$t/cc" ]; then
		while IFS= read -r line; do
			[ -n "$line" ] && cc+=("--cc=$line")
		done <"$PATCHES/$t/cc"
	fi
	[ ${#to[@]} -gt 0 ] || die "get_maintainer.pl found no maintainer for the $t series"
	rm -rf "${OUT:?}/$t"
	mkdir -p "$OUT/$t"
	# a tree to aim at (net-next, say), from patches/<topic>/subject-prefix
	prefix=PATCH
	[ -s "$PATCHES/$t/subject-prefix" ] && prefix=$(head -1 "$PATCHES/$t/subject-prefix")
	git -C "$WT" format-patch -q --cover-letter --no-signature --zero-commit \
		--thread=shallow --subject-prefix="$prefix" "${to[@]}" "${cc[@]}" \
		-o "$OUT/$t" pristine..HEAD
	letter=$(find "$OUT/$t" -name '0000-cover-letter.patch')
	python3 - "$letter" "$cover" <<'PY'
import sys
letter, cover = sys.argv[1:]
subject, _, body = open(cover).read().partition('\n')
s = open(letter).read()
for mark in ('*** SUBJECT HERE ***', '*** BLURB HERE ***'):
    if mark not in s:
        sys.exit('bench: error: %s lacks %s' % (letter, mark))
s = s.replace('*** SUBJECT HERE ***', subject.strip())
s = s.replace('*** BLURB HERE ***', body.strip('\n'))
open(letter, 'w').write(s)
PY
	n=$(find "$OUT/$t" -name '*.patch' | wc -l)
	printf '%-9s %2d mails in %s\n' "$t" "$n" "${OUT#"$REPO"/}/$t/"
	printf '          To: %s\n' "${to[@]#--to=}"
	printf '          Cc: %s\n' "${cc[@]#--cc=}"
done
