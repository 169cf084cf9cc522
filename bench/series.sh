#!/bin/bash
# make series: each topic series of patches/series as it would be mailed.
# From a tree with that series alone applied to the pristine source (on
# top of the topics its depends-on file names, if any): git format-patch
# --notes, with --cover-letter for a series of more than one patch, the
# cover letter filled from patches/<topic>/cover-letter (first line the
# subject, then the body), the subject prefix from
# patches/<topic>/subject-prefix, and To/Cc from the tree's own
# scripts/get_maintainer.pl (maintainers and supporters To, reviewers and
# lists Cc). Every mail is From: the sender and carries the sender's
# Signed-off-by: GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL, else git config
# user.name/user.email of this checkout; a placeholder or no identity
# stops it (sender_identity in lib.sh). Written to outgoing/<topic>/
# (SERIES_OUT moves it), which git ignores.
. "$(dirname "$0")/lib.sh"

OUT=${SERIES_OUT:-$REPO/outgoing}
WT=$BENCH_CACHE/series-tree

# Before anything else: who signs.
ident=$(sender_identity)
sname=${ident% <*}
semail=${ident##*<}
semail=${semail%>}
# git am in the series tree commits as the sender too
export GIT_COMMITTER_NAME=$sname GIT_COMMITTER_EMAIL=$semail

[ -f "$PATCHES/series" ] || die "no patches/series: nothing to format"
"$REPO/bench/tree.sh" prepare >/dev/null
if [ ! -e "$WT/.git" ]; then
	git -C "$TREE" worktree prune
	git -C "$TREE" worktree add -q --detach "$WT" pristine
fi

# sign BASE: rewrite the commits BASE..HEAD of the series tree with the
# sender as author and committer and the sender's Signed-off-by as the
# last trailer, keeping each author date and note.
sign() {
	local base=$1 c new parent=$1 date msg
	for c in $(git -C "$WT" rev-list --reverse "$base..HEAD"); do
		date=$(git -C "$WT" log -1 --format=%ad --date=raw "$c")
		msg=$(git -C "$WT" log -1 --format=%B "$c" |
			git -C "$WT" interpret-trailers --if-exists addIfDifferent \
				--trailer "Signed-off-by: $ident")
		new=$(printf '%s\n' "$msg" |
			GIT_AUTHOR_NAME=$sname GIT_AUTHOR_EMAIL=$semail GIT_AUTHOR_DATE=$date \
			git -C "$WT" commit-tree "$c^{tree}" -p "$parent" -F -)
		# its note (what goes below the ---), if it has one, or stop
		if git -C "$WT" notes list "$c" >/dev/null 2>&1; then
			git -C "$WT" notes copy -f "$c" "$new" >/dev/null ||
				die "cannot copy the note of $(git -C "$WT" log -1 --format='%h %s' "$c") to the signed commit"
		fi
		parent=$new
	done
	git -C "$WT" reset -q --hard "$parent"
}

for t in $(topics); do
	mapfile -t ps < <(topic_patches "$t")
	[ ${#ps[@]} -gt 0 ] || continue
	cover=$PATCHES/$t/cover-letter
	[ ${#ps[@]} = 1 ] || [ -s "$cover" ] ||
		die "no cover letter for the $t series: write $cover"
	git -C "$WT" am --abort >/dev/null 2>&1 || true
	git -C "$WT" checkout -q --detach pristine
	git -C "$WT" reset -q --hard pristine
	for d in $(topic_deps "$t"); do
		for p in $(topic_patches "$d"); do
			git -C "$WT" am -q "$p" >/dev/null 2>&1 ||
				die "$d/${p##*/}, which the $t series depends on, does not apply"
		done
	done
	base=$(git -C "$WT" rev-parse HEAD)
	deps=$(topic_deps "$t" | tr '\n' ' ')
	for p in "${ps[@]}"; do
		am_patch "$WT" "$p" >/dev/null 2>&1 ||
			die "$t/${p##*/} does not apply onto the pristine tree${deps:+ with ${deps% }}"
	done
	sign "$base"
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
	# the tree it is for (net, net-next), from patches/<topic>/subject-prefix
	prefix=PATCH
	[ -s "$PATCHES/$t/subject-prefix" ] && prefix=$(head -1 "$PATCHES/$t/subject-prefix")
	coverarg=()
	[ ${#ps[@]} = 1 ] && [ ! -s "$cover" ] || coverarg=(--cover-letter)
	git -C "$WT" format-patch -q "${coverarg[@]}" --notes --from="$ident" \
		--no-signature --zero-commit --thread=shallow --subject-prefix="$prefix" \
		"${to[@]}" "${cc[@]}" -o "$OUT/$t" "$base..HEAD"
	if [ ${#coverarg[@]} -gt 0 ]; then
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
	fi
	n=$(find "$OUT/$t" -name '*.patch' | wc -l)
	printf '%-9s %2d mails in %s, [%s], from and signed off by %s\n' "$t" "$n" \
		"${OUT#"$REPO"/}/$t/" "$prefix" "$ident"
	printf '          To: %s\n' "${to[@]#--to=}"
	[ ${#cc[@]} = 0 ] || printf '          Cc: %s\n' "${cc[@]#--cc=}"
done
