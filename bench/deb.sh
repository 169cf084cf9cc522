#!/bin/bash
# make deb: the sch-clsact-dkms Debian package (debhelper with dh-dkms), from
# packaging/sch-clsact-dkms/debian and the sources in modules/sch_clsact,
# built in $BENCH_CACHE/deb and written to outgoing/deb/. Nothing is
# installed on the host but the packaging tools.
. "$(dirname "$0")/lib.sh"

OUT=${DEB_OUT:-$REPO/outgoing/deb}
WORK=$BENCH_CACHE/deb
PKG=$WORK/sch-clsact-dkms

BENCH_PKGS="build-essential debhelper dh-dkms dpkg-dev" "$REPO/bench/deps.sh" packaging
rm -rf "$WORK"
mkdir -p "$PKG/src" "$OUT"
cp -r "$REPO/packaging/sch-clsact-dkms/debian" "$PKG/"
cp "$REPO/modules/sch_clsact/Kbuild" "$REPO/modules/sch_clsact/sch_clsact.c" "$PKG/src/"
(cd "$PKG" && dpkg-buildpackage -b -us -uc) >"$WORK/build.log" 2>&1 ||
	{ tail -30 "$WORK/build.log" >&2; die "dpkg-buildpackage failed (see $WORK/build.log)"; }
deb=$(find "$WORK" -maxdepth 1 -name 'sch-clsact-dkms_*_all.deb')
[ -n "$deb" ] || die "dpkg-buildpackage made no sch-clsact-dkms_*_all.deb"
# Everything under /usr: an /etc conffile would outlive "apt remove".
if dpkg-deb -c "$deb" | awk '{ print $6 }' | grep -q '^\./etc/' ||
	dpkg-deb --ctrl-tarfile "$deb" | tar -t | grep -q conffiles; then
	die "the package ships files in /etc (conffiles): they would survive its removal"
fi
rm -f "$OUT"/sch-clsact-dkms_*_all.deb
cp "$deb" "$OUT/"
echo "built ${OUT#"$REPO"/}/${deb##*/}:"
dpkg-deb -c "$deb" | awk '{ print "  " $6 }' | grep -v '/$'
