#!/bin/bash
# make stock-check: Debian's own kernel, not ours. Downloads (never
# installs) linux-image and linux-headers 6.12.118+deb12-amd64 and unpacks
# them into $BENCH_CACHE/stock; builds the sch-clsact-dkms package
# (make deb) and its module for that kernel with "dkms build -k" in a DKMS
# tree of its own; stages the stock vmlinuz, its modules plus ours in
# updates/dkms, the package's files and the guest tests; boots it and runs
# the clsact tests, tdc and upstream's ingress/clsact kselftests, each with
# ours and with Debian's sch_ingress.
export BENCH_KERNEL=stock
. "$(dirname "$0")/lib.sh"

KVER=6.12.118+deb12-amd64
DEBVER=6.12.118-1~deb12u1
S=$BENCH_CACHE/stock
ROOT=$S/root
HDRS=$ROOT/usr/src/linux-headers-$KVER

fetch() {
	local want="$KVER $DEBVER $ROOT" p
	[ "$(cat "$S/fetched" 2>/dev/null)" = "$want" ] && return
	log "downloading linux-image and linux-headers $KVER ($DEBVER), not installing them"
	rm -rf "$S"
	mkdir -p "$S/debs" "$ROOT"
	# apt's sandbox user cannot write the cache; the download is just files.
	local pkgs=("linux-image-$KVER=$DEBVER" "linux-headers-$KVER=$DEBVER"
		"linux-headers-6.12.118+deb12-common=$DEBVER" "linux-kbuild-6.12.118+deb12=$DEBVER")
	(cd "$S/debs" && { apt-get download -q -o APT::Sandbox::User=root "${pkgs[@]}" ||
		{ apt-get update -qq && apt-get download -q -o APT::Sandbox::User=root "${pkgs[@]}"; }; }) \
		>"$S/download.log" 2>&1 ||
		die "apt-get download of ${pkgs[*]} failed (see $S/download.log); if the archive moved on, bump KVER/DEBVER in bench/stock.sh"
	for p in "$S"/debs/*.deb; do
		dpkg-deb -x "$p" "$ROOT" || die "cannot unpack $p"
	done
	# The headers' Makefile includes the common half by absolute path.
	sed -i "s|^include /usr/src/|include $ROOT/usr/src/|" "$HDRS/Makefile"
	grep -q "^include $ROOT/usr/src/" "$HDRS/Makefile" ||
		die "cannot point $HDRS/Makefile at the unpacked headers"
	echo "$want" >"$S/fetched"
}

# The package, and its module built for the stock kernel by DKMS.
build_module() {
	local deb d=$S/dkms ver
	rm -rf "$d"
	mkdir -p "$d/tree" "$d/pkg" "$d/out"
	DEB_OUT=$d/out "$REPO/bench/deb.sh" >"$S/deb.log" 2>&1 ||
		{ cat "$S/deb.log" >&2; die "make deb failed"; }
	deb=$(find "$d/out" -name 'sch-clsact-dkms_*_all.deb')
	dpkg-deb -x "$deb" "$d/pkg"
	ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$d"/pkg/usr/src/sch-clsact-*/dkms.conf)
	[ -n "$ver" ] || die "no PACKAGE_VERSION in the package's dkms.conf"
	dkms add --dkmstree "$d/tree" --sourcetree "$d/pkg/usr/src" \
		-m sch-clsact -v "$ver" >"$d/dkms.log" 2>&1 &&
	dkms build --dkmstree "$d/tree" --sourcetree "$d/pkg/usr/src" \
		-m sch-clsact -v "$ver" -k "$KVER" --kernelsourcedir "$HDRS" \
		>>"$d/dkms.log" 2>&1 || { cat "$d/dkms.log" >&2; die "dkms build -k $KVER failed"; }
	KO=$(find "$d/tree/sch-clsact/$ver/$KVER" -name 'sch_clsact.ko*' 2>/dev/null || true)
	[ -n "$KO" ] || die "dkms built no sch_clsact.ko (see $d/dkms.log)"
	log "dkms built sch-clsact $ver for $KVER"
}

stage() {
	local mods=$ROOT/lib/modules/$KVER m boot=()
	rm -rf "$STAGE/lib" "$STAGE/pkg"
	mkdir -p "$STAGE/lib/modules"
	cp -al "$mods" "$STAGE/lib/modules/$KVER"
	rm -f "$STAGE/lib/modules/$KVER/build" "$STAGE/lib/modules/$KVER/source"
	# what "dkms install" would put there
	mkdir -p "$STAGE/lib/modules/$KVER/updates/dkms"
	cp "$KO" "$STAGE/lib/modules/$KVER/updates/dkms/"
	depmod -b "$STAGE" "$KVER" || die "depmod failed"
	cp -r "$S/dkms/pkg" "$STAGE/pkg"
	cp "$ROOT/boot/vmlinuz-$KVER" "$STAGE/bzImage"
	echo "$KVER" >"$STAGE/kernel.release"
	for m in fs/netfs/netfs net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p; do
		boot+=("$mods/kernel/$m.ko.xz")
	done
	BOOT_MODULES="${boot[*]}" "$REPO/bench/build.sh" initramfs
	"$REPO/bench/build.sh" tests
}

ensure_cache_dir
mkdir -p "$S" "$STAGE"
if [ "${1:-}" = fetch ]; then	# only the packages (lint-patches wants the config)
	fetch
	echo "$ROOT/boot/config-$KVER"
	exit 0
fi
"$REPO/bench/deps.sh"
"$REPO/bench/tree.sh" prepare	# tc-testing and the kselftests come from the tree
fetch
build_module
stage
