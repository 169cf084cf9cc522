# shellcheck shell=bash
# Common settings for the bench scripts. Sourced, never run.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Everything large lives outside the repository; one variable moves it.
BENCH_CACHE=${BENCH_CACHE:-/var/tmp/lk45-bench}
SRC_TARBALL=${SRC_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
SRC_PACKAGE=linux-source-6.12
TREE=${TREE:-$BENCH_CACHE/linux} # git tree: pristine commit + our series
PATCHES=${PATCHES:-$REPO/patches}
# Tests boot the debug kernel. Benchmarks boot one built from the same tree
# without config/debug.config: KASAN and lockdep tax every C load but not
# the assembly (csum_partial), which would swamp the ratios measured.
BENCH_KERNEL=${BENCH_KERNEL:-debug}
case $BENCH_KERNEL in
debug) flavour= ;;
perf) flavour=-perf ;;
stock) flavour=-stock ;;	# Debian's own linux-image, see stock.sh
*) printf 'bench: error: BENCH_KERNEL must be debug, perf or stock\n' >&2; exit 1 ;;
esac
KOUT=$BENCH_CACHE/build$flavour      # kernel objects (O=)
MODOUT=$BENCH_CACHE/modules$flavour  # copy of modules/ built with M=
STAGE=$BENCH_CACHE/stage$flavour     # what the guest sees under /bench
JOBS=${JOBS:-$(nproc)}

log() { printf '[bench] %s\n' "$*" >&2; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

# Hash of files' names and contents, for cache keys.
hash_files() {
	local f
	for f in "$@"; do
		[ -e "$f" ] || continue
		printf '%s\n' "${f#"$REPO"/}"
		cat "$f"
	done | sha256sum | cut -c1-16
}

# The series. patches/series names the topic series in the order they are
# applied, each with the paths its patches may touch; a topic's patches are
# in patches/<topic>/. Without that file (the bench's self-test), the
# series is patches/*.patch in name order.
topics() {
	[ -f "$PATCHES/series" ] || return 0
	sed -e 's/#.*//' "$PATCHES/series" | awk 'NF { print $1 }'
}
topic_paths() {
	sed -e 's/#.*//' "$PATCHES/series" | awk -v t="$1" '$1 == t { $1 = ""; print }'
}
topic_patches() { find "$PATCHES/$1" -maxdepth 1 -name '*.patch' | LC_ALL=C sort; }
all_patches() {
	local t
	if [ -f "$PATCHES/series" ]; then
		for t in $(topics); do topic_patches "$t"; done
	else
		find "$PATCHES" -maxdepth 1 -name '*.patch' | LC_ALL=C sort
	fi
}
# topic_of FILE...: the one topic whose paths hold every file, or nothing.
topic_of() {
	local t f p hit found=
	for t in $(topics); do
		hit=1
		for f in "$@"; do
			local ok=0
			for p in $(topic_paths "$t"); do
				case "$f" in "$p"*) ok=1 ;; esac
			done
			[ $ok = 1 ] || { hit=0; break; }
		done
		[ $hit = 1 ] && { [ -z "$found" ] || return 0; found=$t; }
	done
	echo "$found"
}

ensure_cache_dir() {
	mkdir -p "$BENCH_CACHE" 2>/dev/null ||
		die "cannot create cache directory $BENCH_CACHE (set BENCH_CACHE)"
	local avail
	avail=$(df -Pk "$BENCH_CACHE" | awk 'NR==2 {print $4}')
	# A debug kernel build with objects needs about 6 GiB.
	if [ "${avail:-0}" -lt $((6 * 1024 * 1024)) ]; then
		die "less than 6 GiB free in $BENCH_CACHE ($((avail / 1024)) MiB); free space or set BENCH_CACHE"
	fi
}
