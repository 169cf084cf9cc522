#!/bin/bash
# The kernel tree: pristine Debian source as the first commit, patches/ on top.
#   tree.sh prepare   extract if needed, (re)apply patches/ when they changed
#   tree.sh reapply   drop the tree's commits and apply patches/ from scratch
#   tree.sh export    write the tree's commits back into patches/
. "$(dirname "$0")/lib.sh"

STAMP=$BENCH_CACHE/series.stamp

src_version() { dpkg-query -W -f='${Version}' "$SRC_PACKAGE" 2>/dev/null || echo unknown; }
series() { all_patches; }
series_hash() { mapfile -t p < <(series); hash_files "$PATCHES/series" "${p[@]}"; }
g() { git -C "$TREE" "$@"; }

extract() {
	local ver=$1
	log "extracting $SRC_TARBALL ($SRC_PACKAGE $ver) into $TREE"
	rm -rf "$TREE" "$KOUT" "$STAMP"
	mkdir -p "$TREE"
	tar -xf "$SRC_TARBALL" --strip-components=1 -C "$TREE" ||
		die "cannot extract $SRC_TARBALL"
	g init -q -b bench
	# before the first commit, whose auto gc would outlive the target
	# holding its cache lock
	g config gc.auto 0
	g add -A -f
	g -c user.name=bench -c user.email=bench@localhost \
		commit -q -m "Debian $SRC_PACKAGE $ver (pristine)"
	g tag pristine
	echo "$ver" >"$TREE/.bench-source-version"
}

# Each patch's notes (what it says below its "---") live as git notes of
# its commit; amend and rebase in the tree carry them along.
notes_config() {
	# no background gc: it would outlive the target and hold its cache lock
	g config gc.auto 0
	g config notes.rewriteRef refs/notes/commits
	g config notes.rewrite.amend true
	g config notes.rewrite.rebase true
}

# The series is applied in a worktree of its own, then the tree is moved to
# the result: files the series does not change keep their mtimes, so only
# what a patch touches is rebuilt.
apply_series() {
	local aw=$BENCH_CACHE/apply-tree p n=0
	notes_config
	if [ ! -e "$aw/.git" ]; then
		g worktree prune
		g worktree add -q --detach "$aw" pristine >/dev/null
	fi
	git -C "$aw" am --abort >/dev/null 2>&1 || true
	git -C "$aw" checkout -q --detach pristine
	git -C "$aw" reset -q --hard pristine
	while read -r p; do
		[ -n "$p" ] || continue
		if ! am_patch "$aw" "$p" --keep-cr >/dev/null 2>"$BENCH_CACHE/am.err"; then
			echo "bench: error: patch does not apply: ${p#"$REPO"/}" >&2
			(cd "$aw" && git am --abort >/dev/null 2>&1 || true
			 git apply --check -v "$p" 2>&1 | grep -v '^Checking patch' |
				sed 's/^/    /' | head -40) >&2
			exit 1
		fi
		n=$((n + 1))
	done < <(series)
	g checkout -q -B bench "$(git -C "$aw" rev-parse HEAD)" 2>/dev/null ||
		g reset -q --hard "$(git -C "$aw" rev-parse HEAD)"
	g reset -q --hard bench
	log "applied $n patch(es) from patches/"
	printf '%s %s\n' "$(series_hash)" "$(g rev-parse HEAD)" >"$STAMP"
}

prepare() {
	local ver
	ver=$(src_version)
	echo "kernel source: Debian $SRC_PACKAGE $ver"
	if [ ! -d "$TREE/.git" ] || [ "$(cat "$TREE/.bench-source-version" 2>/dev/null)" != "$ver" ]; then
		extract "$ver"
	fi
	local want have_hash have_head
	want=$(series_hash)
	read -r have_hash have_head 2>/dev/null <"$STAMP" || true
	if [ "$want" != "${have_hash:-}" ]; then
		apply_series
		return
	fi
	if [ "$(g rev-parse HEAD)" != "$have_head" ]; then
		die "the tree in $TREE has commits that are not in patches/: run 'make export-patches' to keep them or 'make reapply' to drop them"
	fi
	if [ -n "$(g status --porcelain --untracked-files=no)" ]; then
		if [ "${ALLOW_DIRTY:-0}" = 1 ]; then
			log "warning: building uncommitted edits in $TREE (ALLOW_DIRTY=1)"
		else
			die "the tree in $TREE has uncommitted edits: commit them and run 'make export-patches', or build them once with ALLOW_DIRTY=1"
		fi
	fi
}

# The topic of each commit: the topics whose paths hold all it touches,
# of which those not yet left behind (patches/series order) and willing to
# take it (a fixes-only topic takes only commits with a Fixes: tag). A
# commit with a Fixes: tag that two such topics would take goes to the
# fixes-only one; one that a fixes-only topic already left behind would
# take stops the export (it would land in the later series unnoticed); any
# other choice between two topics is ambiguous and stops the export. Each topic's commits must follow each other, in the
# order of patches/series, so that each series is numbered, applied and
# linted on its own.
commit_topic() {
	local c=$1 cur=$2 t i fixes open=() fx=() cands files what
	what=$(g log -1 --format='%h %s' "$c")
	mapfile -t files < <(g diff-tree --no-commit-id --name-only -r "$c")
	mapfile -t cands < <(topics_holding "${files[@]}")
	[ ${#cands[@]} -gt 0 ] ||
		die "commit $what touches files of no single topic in patches/series: ${files[*]}"
	fixes=$(g log -1 --format='%(trailers:key=Fixes,valueonly)' "$c")
	for t in "${cands[@]}"; do
		i=$(topic_index "$t")
		# a fix that the fixes-only topic would take, made after the
		# commits of a later topic: never slip it into that later series
		if [ "$i" -lt "$cur" ] && [ -n "$fixes" ] && topic_fixes_only "$t"; then
			die "commit $what has a Fixes: tag and the paths of the fixes-only topic $t, but comes after commits of $(topics | sed -n "$((cur + 1))p"): move it before them (git rebase -i) so that it goes to $t, or drop its Fixes: tag if it belongs to the later series"
		fi
		[ "$i" -ge "$cur" ] || continue
		if topic_fixes_only "$t" && [ -z "$fixes" ]; then continue; fi
		open+=("$t")
		! topic_fixes_only "$t" || fx+=("$t")
	done
	if [ ${#open[@]} = 0 ]; then
		die "commit $what fits no topic still open: its paths are those of ${cands[*]}, each before a topic of an earlier commit or taking only commits with a Fixes: tag (keep each topic's commits together, in the order of patches/series)"
	fi
	if [ ${#open[@]} -gt 1 ]; then
		if [ -n "$fixes" ] && [ ${#fx[@]} = 1 ]; then
			open=("${fx[@]}")
		else
			die "commit $what could go to topic ${open[*]}: their paths overlap; mark the fixes topic with a fixes-only file (and give fixes a Fixes: tag), or make the paths in patches/series distinct"
		fi
	fi
	echo "${open[0]}"
}
topic_index() {
	local i=0 t
	for t in $(topics); do
		[ "$t" != "$1" ] || { echo $i; return; }
		i=$((i + 1))
	done
	echo -1
}

# normalize_patches FILE...: no one's identity in patches/: the author is
# PATCH_AUTHOR_PLACEHOLDER and no Signed-off-by is kept (make series adds
# the sender's). Prints how many sign-offs and authors it replaced.
normalize_patches() {
	python3 - "$PATCH_AUTHOR_PLACEHOLDER" "$@" <<'PY'
import re, sys
placeholder, files = sys.argv[1], sys.argv[2:]
sobs = authors = 0
for f in files:
    lines = open(f, encoding='utf-8', errors='surrogateescape').read().split('\n')
    out, i = [], 0
    # the mail header, up to its empty line: one From:, the placeholder
    while i < len(lines) and lines[i] != '':
        if lines[i].startswith('From: '):
            j = i + 1
            while j < len(lines) and lines[j][:1] in (' ', '\t'):
                j += 1
            if ' '.join(l.strip() for l in lines[i:j]) != 'From: ' + placeholder:
                authors += 1
            out.append('From: ' + placeholder)
            i = j
            continue
        out.append(lines[i])
        i += 1
    # the message, up to "---": no Signed-off-by
    body = []
    while i < len(lines) and lines[i] != '---':
        if re.match(r'(?i)signed-off-by:', lines[i]):
            sobs += 1
        else:
            body.append(lines[i])
        i += 1
    while len(body) > 1 and body[-1] == '':
        body.pop()
    out += body + lines[i:]
    open(f, 'w', encoding='utf-8', errors='surrogateescape').write('\n'.join(out))
print(sobs, authors)
PY
}

export_patches() {
	[ -e "$TREE/.git" ] || die "no tree at $TREE: run 'make build' first"
	[ -z "$(g status --porcelain --untracked-files=no)" ] ||
		die "commit your edits in $TREE before exporting"
	local c t last= cur=0 order n sobs authors
	# The blob ids of the index lines have a fixed length: git's default
	# grows with the number of objects, so a tree with more history would
	# write other bytes for the same patches.
	mapfile -t order < <(topics)
	if [ ${#order[@]} = 0 ]; then
		find "$PATCHES" -maxdepth 1 -name '*.patch' -delete
		g -c core.abbrev=12 format-patch -q --notes --no-signature --zero-commit \
			-o "$PATCHES" pristine..HEAD
	else
		declare -A from to
		for c in $(g rev-list --reverse pristine..HEAD); do
			t=$(commit_topic "$c" "$cur") || exit 1
			cur=$(topic_index "$t")
			[ "$t" = "$last" ] || from[$t]=$c
			to[$t]=$c
			last=$t
		done
		for t in "${order[@]}"; do
			mkdir -p "$PATCHES/$t"
			find "$PATCHES/$t" -maxdepth 1 -name '*.patch' -delete
			[ -n "${from[$t]:-}" ] || continue
			g -c core.abbrev=12 format-patch -q --notes --no-signature --zero-commit \
				-o "$PATCHES/$t" \
				"${from[$t]}~1..${to[$t]}"
		done
	fi
	mapfile -t n < <(series)
	read -r sobs authors < <(normalize_patches "${n[@]}")
	[ "$sobs$authors" = 00 ] ||
		log "export: $sobs Signed-off-by line(s) dropped and $authors author(s) set to $PATCH_AUTHOR_PLACEHOLDER: patches/ keep no one's identity; make series signs with the sender's"
	# The stamp says the tree is at patches/: only an export to patches/
	# changes that.
	if [ "$PATCHES" = "$REPO/patches" ]; then
		if [ "$TREE" = "$BENCH_CACHE/linux" ]; then
			printf '%s %s\n' "$(series_hash)" "$(g rev-parse HEAD)" >"$STAMP"
		else
			rm -f "$STAMP"	# exported from another worktree: re-apply
		fi
	fi
	log "exported ${#n[@]} patch(es) to ${PATCHES#"$REPO"/}/"
}

case "${1:-}" in
prepare) prepare ;;
reapply) rm -f "$STAMP"; prepare ;;
export) export_patches ;;
*) die "usage: tree.sh prepare|reapply|export" ;;
esac
