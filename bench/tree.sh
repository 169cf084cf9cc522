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
	g add -A -f
	g -c user.name=bench -c user.email=bench@localhost \
		commit -q -m "Debian $SRC_PACKAGE $ver (pristine)"
	g tag pristine
	echo "$ver" >"$TREE/.bench-source-version"
}

# The series is applied in a worktree of its own, then the tree is moved to
# the result: files the series does not change keep their mtimes, so only
# what a patch touches is rebuilt.
apply_series() {
	local aw=$BENCH_CACHE/apply-tree p n=0
	if [ ! -e "$aw/.git" ]; then
		g worktree prune
		g worktree add -q --detach "$aw" pristine >/dev/null
	fi
	git -C "$aw" am --abort >/dev/null 2>&1 || true
	git -C "$aw" checkout -q --detach pristine
	git -C "$aw" reset -q --hard pristine
	while read -r p; do
		[ -n "$p" ] || continue
		if ! git -C "$aw" am -q --keep-cr "$p" >/dev/null 2>"$BENCH_CACHE/am.err"; then
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

# Each commit goes to the topic whose paths hold all it touches; the
# topics must follow each other in the order patches/series gives, so that
# each series is numbered, applied and linted on its own.
export_patches() {
	[ -e "$TREE/.git" ] || die "no tree at $TREE: run 'make build' first"
	[ -z "$(g status --porcelain --untracked-files=no)" ] ||
		die "commit your edits in $TREE before exporting"
	local c t last= idx=-1 i order files
	mapfile -t order < <(topics)
	if [ ${#order[@]} = 0 ]; then
		find "$PATCHES" -maxdepth 1 -name '*.patch' -delete
		g format-patch -q --no-signature --zero-commit -o "$PATCHES" pristine..HEAD
	else
		declare -A from to
		for c in $(g rev-list --reverse pristine..HEAD); do
			mapfile -t files < <(g diff-tree --no-commit-id --name-only -r "$c")
			t=$(topic_of "${files[@]}")
			[ -n "$t" ] || die "commit $(g log -1 --format='%h %s' "$c") touches files of no single topic in patches/series: ${files[*]}"
			for i in "${!order[@]}"; do [ "${order[$i]}" = "$t" ] && break; done
			if [ "$t" != "$last" ]; then
				[ "$i" -gt "$idx" ] ||
					die "commit $(g log -1 --format='%h %s' "$c") of topic $t comes after a later topic: keep each topic's commits together, in the order of patches/series"
				idx=$i
				from[$t]=$c
			fi
			to[$t]=$c
			last=$t
		done
		for t in "${order[@]}"; do
			mkdir -p "$PATCHES/$t"
			find "$PATCHES/$t" -maxdepth 1 -name '*.patch' -delete
			[ -n "${from[$t]:-}" ] || continue
			g format-patch -q --no-signature --zero-commit -o "$PATCHES/$t" \
				"${from[$t]}~1..${to[$t]}"
		done
	fi
	if [ "$TREE" = "$BENCH_CACHE/linux" ]; then
		printf '%s %s\n' "$(series_hash)" "$(g rev-parse HEAD)" >"$STAMP"
	else
		rm -f "$STAMP"	# exported from another worktree: re-apply
	fi
	log "exported $(series | wc -l) patch(es) to patches/"
}

case "${1:-}" in
prepare) prepare ;;
reapply) rm -f "$STAMP"; prepare ;;
export) export_patches ;;
*) die "usage: tree.sh prepare|reapply|export" ;;
esac
