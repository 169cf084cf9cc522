#!/bin/bash
# Configure and build the bench kernel, our out-of-tree modules, the guest
# initramfs and the guest tests. Incremental: unchanged inputs rebuild nothing.
. "$(dirname "$0")/lib.sh"

# The debug kernel runs the tests, the perf kernel the benchmarks.
FRAGMENTS=("$REPO"/config/bench.config "$REPO"/config/debug.config)
if [ "$BENCH_KERNEL" = perf ]; then
	FRAGMENTS=("$REPO"/config/bench.config "$REPO"/config/perf.config)
fi
# The plain kernel: no debugging and no CONFIG_JUMP_LABEL, so static keys
# are counters and nothing rewrites kernel text at run time; for long runs
# of the tests, which the perf kernel's text patching can crash under TCG.
if [ "$BENCH_KERNEL" = plain ]; then
	FRAGMENTS=("$REPO"/config/bench.config "$REPO"/config/plain.config)
fi
# LOCALVERSION= keeps setlocalversion from appending "+" for the git tree.
KMAKE=(make -s -C "$TREE" O="$KOUT" ARCH=x86_64 LOCALVERSION= -j"$JOBS")

configure() {
	local key
	key=$(hash_files "${FRAGMENTS[@]}" "$BENCH_CACHE/series.stamp")
	if [ -f "$KOUT/.config" ] && [ "$(cat "$KOUT/.bench-config-key" 2>/dev/null)" = "$key" ]; then
		return
	fi
	log "configuring: tinyconfig + ${FRAGMENTS[*]##*/}"
	mkdir -p "$KOUT"
	"${KMAKE[@]}" tinyconfig >/dev/null
	(cd "$KOUT" && "$TREE/scripts/kconfig/merge_config.sh" -m -O "$KOUT" \
		"$KOUT/.config" "${FRAGMENTS[@]}" >"$KOUT/merge_config.log" 2>&1) ||
		die "merge_config.sh failed (see $KOUT/merge_config.log)"
	"${KMAKE[@]}" olddefconfig >/dev/null
	verify_config
	echo "$key" >"$KOUT/.bench-config-key"
}

# Every option a fragment asks for must survive olddefconfig.
verify_config() {
	local frag line opt want have bad=0
	for frag in "${FRAGMENTS[@]}"; do
		while IFS= read -r line; do
			case "$line" in
			CONFIG_*=*) opt=${line%%=*}; want=${line#*=} ;;
			"# CONFIG_"*" is not set") opt=${line#\# }; opt=${opt%% *}; want=n ;;
			*) continue ;;
			esac
			have=$(grep -E "^$opt=" "$KOUT/.config" | cut -d= -f2- || true)
			[ -n "$have" ] || have=n
			if [ "$have" != "$want" ]; then
				echo "bench: error: ${frag##*/}: $opt wants $want but olddefconfig gave $have" >&2
				bad=1
			fi
		done <"$frag"
	done
	[ $bad = 0 ] || { rm -f "$KOUT/.bench-config-key"; exit 1; }
}

build_kernel() {
	log "building kernel (make -j$JOBS bzImage modules)"
	"${KMAKE[@]}" bzImage modules >&2 || die "kernel build failed"
	local rel
	rel=$(cat "$KOUT/include/config/kernel.release")
	rm -rf "$STAGE/lib/modules"
	"${KMAKE[@]}" INSTALL_MOD_PATH="$STAGE" modules_install >/dev/null ||
		die "modules_install failed"
	# No links back into the build tree: the guest only sees $STAGE.
	rm -f "$STAGE/lib/modules/$rel/build" "$STAGE/lib/modules/$rel/source"
	cp "$KOUT/arch/x86/boot/bzImage" "$STAGE/bzImage"
	echo "$rel" >"$STAGE/kernel.release"
}

# build_pristine NAME WHERE FILE...: 6.12's own code for a module, taken from
# the pristine commit (or the tree's commit REV) and built as NAME.ko, the
# "before" that tests and benchmarks compare ours with. WHERE is extra
# (installed for modprobe) or stage (copied to /bench/pristine, for insmod
# only: it exports the same symbols as ours, and depmod must not resolve
# anything to it).
build_pristine() {
	local name=$1 where=$2 dir=$MODOUT/pristine/$1 f objs= rev=${REV:-pristine}
	shift 2
	mkdir -p "$dir"
	for f in "$@"; do
		git -C "$TREE" show "$rev:$f" >"$dir/${f##*/}.new"
		cmp -s "$dir/${f##*/}.new" "$dir/${f##*/}" || mv "$dir/${f##*/}.new" "$dir/${f##*/}"
		rm -f "$dir/${f##*/}.new"
		case $f in *.c) f=${f##*/}; objs+=" ${f%.c}.o" ;; esac
	done
	printf 'obj-m += %s.o\n%s-y :=%s\n' "$name" "$name" "$objs" >"$dir/Kbuild"
	log "building pristine $name"
	# Not our code: built as 6.12 builds it, without W=1.
	make -s -C "$KOUT" M="$dir" -j"$JOBS" modules >&2 || die "pristine $name build failed"
	if [ "$where" = extra ]; then
		make -s -C "$KOUT" M="$dir" INSTALL_MOD_PATH="$STAGE" INSTALL_MOD_DIR=extra \
			modules_install >/dev/null || die "pristine $name install failed"
	else
		mkdir -p "$STAGE/pristine"
		cp "$dir/$name.ko" "$STAGE/pristine/"
	fi
}

build_modules() {
	local d rel
	mkdir -p "$MODOUT"
	# A module directory gone from the repository goes from the cache too
	# (rsync keeps it: its build products are excluded, so never empty).
	for d in "$MODOUT"/*/; do
		[ -d "$d" ] || continue
		d=$(basename "$d")
		[ "$d" = pristine ] || [ -d "$REPO/modules/$d" ] || rm -rf "${MODOUT:?}/$d"
	done
	rsync -a --delete --exclude='/pristine' --exclude='*.o' --exclude='*.ko' --exclude='*.mod' \
		--exclude='*.mod.c' --exclude='.*.cmd' --exclude='Module.symvers' \
		--exclude='modules.order' --exclude='.tmp_versions' \
		"$REPO/modules/" "$MODOUT/"
	rel=$(cat "$STAGE/kernel.release")
	for d in "$MODOUT"/*/; do
		[ -f "$d/Kbuild" ] || continue
		log "building module dir modules/$(basename "$d")"
		# Our modules build warning-free, W=1 included.
		make -s -C "$KOUT" M="${d%/}" W=1 KCFLAGS=-Werror -j"$JOBS" modules >&2 ||
			die "module build failed in modules/$(basename "$d")"
		# Installed beside the in-tree modules so that modprobe resolves
		# dependencies and aliases in the guest.
		make -s -C "$KOUT" M="${d%/}" INSTALL_MOD_PATH="$STAGE" \
			INSTALL_MOD_DIR=extra modules_install >/dev/null ||
			die "module install failed in modules/$(basename "$d")"
	done
	# 8139cp advertising NETIF_F_IP_CSUM only, for seed 004's row.
	build_pristine 8139cp_pristine extra drivers/net/ethernet/realtek/8139cp.c
	# 6.12's driver with the net fix alone (the first topic's last commit),
	# so that the fix for stable is tested on its own.
	local netfix
	netfix=$(git -C "$TREE" rev-list --reverse pristine..HEAD |
		sed -n "$(topic_patches net-fixes | wc -l)p")
	[ -n "$netfix" ] || die "no net-fixes commit in $TREE"
	REV=$netfix build_pristine 8139cp_netfix extra drivers/net/ethernet/realtek/8139cp.c
	# configfs with the quadratic binary attribute writes, for the benchmark.
	build_pristine configfs_pristine stage fs/configfs/configfs_internal.h \
		fs/configfs/inode.c fs/configfs/file.c fs/configfs/dir.c \
		fs/configfs/symlink.c fs/configfs/mount.c fs/configfs/item.c
	depmod -b "$STAGE" "$rel" || die "depmod failed"
}

build_initramfs() {
	local init=$STAGE/init.bin
	gcc -static -Os -Wall -Werror -o "$init" "$REPO/bench/guest/init.c" ||
		die "cannot build the guest init"
	local root=$BENCH_CACHE/initramfs$flavour
	rm -rf "$root"
	mkdir -p "$root"/{proc,sys,dev,tmp,run,usr,etc,bench,results,root,var/tmp,mnt}
	ln -s usr/bin "$root/bin"
	ln -s usr/sbin "$root/sbin"
	# /lib is the host's /usr/lib entry by entry, except modules: the
	# guest's come from the stage (the host may have none at all).
	mkdir -p "$root/lib"
	local e
	for e in /usr/lib/*; do
		[ "${e##*/}" = modules ] || ln -s "$e" "$root/lib/${e##*/}"
	done
	ln -s /bench/lib/modules "$root/lib/modules"
	ln -s usr/lib64 "$root/lib64"
	ln -s ../run "$root/var/run"
	cp "$init" "$root/init"
	# Modules the init loads before it can mount 9p (BOOT_MODULES, in
	# order), for a kernel that has 9p as modules.
	local i=10 m
	for m in ${BOOT_MODULES:-}; do
		mkdir -p "$root/boot-modules"
		cp "$m" "$root/boot-modules/$i-${m##*/}"
		i=$((i + 1))
	done
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$STAGE/initramfs.cpio.new"
	mv "$STAGE/initramfs.cpio.new" "$STAGE/initramfs.cpio"
}

# Guest tests: test_*.c are compiled here, shell tests and helpers copied,
# *.bpf.c compiled to BPF objects with clang.
build_tests() {
	local out=$STAGE/tests src dst
	mkdir -p "$out"
	rsync -a --delete --exclude='*.c' --exclude='*.h' "$REPO/tests/" "$out/"
	while IFS= read -r src; do
		dst=$out/${src#"$REPO"/tests/}
		case "$src" in
		*.bpf.c)
			dst=${dst%.c}.o
			# Debian keeps asm/ under the multiarch include dir.
			clang -O2 -g -Wall -Werror -target bpf \
				-I"/usr/include/$(gcc -dumpmachine)" -c "$src" -o "$dst" ||
				die "cannot compile BPF object $src"
			;;
		*)
			dst=${dst%.c}
			# A test names the libraries it links in a "bench-ldlibs:" line.
			# shellcheck disable=SC2046
			gcc -O2 -Wall -Wextra -Werror -I"$REPO/tests/lib" -o "$dst" "$src" \
				$(sed -n 's|^// bench-ldlibs: ||p' "$src") ||
				die "cannot compile guest test $src"
			;;
		esac
	done < <(find "$REPO/tests" -name '*.c' -not -path '*/lib/*')
	# Upstream's tc-testing (tdc), from the same tree, for the clsact runs.
	rsync -a --delete "$TREE/tools/testing/selftests/tc-testing/" "$STAGE/tc-testing/"
	# tdc's bpf.json loads action-ebpf, which the selftests build from action.c.
	clang -O2 -Wall -target bpf -I"/usr/include/$(gcc -dumpmachine)" \
		-c "$STAGE/tc-testing/action.c" -o "$STAGE/tc-testing/action-ebpf" ||
		die "cannot compile tc-testing's action.c"
	# and the tree's pktgen samples, for the clsact benchmark.
	rsync -a --delete "$TREE/samples/pktgen/" "$STAGE/pktgen/"
	# upstream's kselftests that set up ingress or clsact qdiscs, with the
	# libraries they source
	mkdir -p "$STAGE/selftests/net"
	rsync -a --delete "$TREE/tools/testing/selftests/net/forwarding" \
		"$TREE/tools/testing/selftests/net/lib" \
		"$TREE/tools/testing/selftests/net/lib.sh" \
		"$TREE/tools/testing/selftests/net/net_helper.sh" \
		"$TREE/tools/testing/selftests/net/test_ingress_egress_chaining.sh" \
		"$STAGE/selftests/net/"
	rsync -a "$TREE/tools/testing/selftests/kselftest" "$STAGE/selftests/" 2>/dev/null || true
	# net/tc_ingress_replace.py and tc_ingress_filters.py, laid out as an
	# installed kselftest tree (its Python library finds the YNL library
	# and specs there)
	cp "$TREE/tools/testing/selftests/net/tc_ingress_replace.py" \
		"$TREE/tools/testing/selftests/net/tc_ingress_filters.py" "$STAGE/selftests/net/"
	mkdir -p "$STAGE/selftests/net/lib/ynl"
	rsync -a --delete "$TREE/tools/net/ynl/lib/" "$STAGE/selftests/net/lib/ynl/lib/"
	rsync -a --delete "$TREE/Documentation/netlink/specs/" "$STAGE/selftests/net/lib/specs/"
	touch "$STAGE/selftests/kselftest-list.txt"
	# test_ingress_egress_chaining.sh sends with these
	local b
	for b in udpgso_bench_rx udpgso_bench_tx; do
		gcc -O2 -Wall -o "$STAGE/selftests/net/$b" \
			"$TREE/tools/testing/selftests/net/$b.c" ||
			die "cannot compile the kselftest helper $b"
	done
	# the configfs series' kselftest (on samples/configfs)
	mkdir -p "$STAGE/selftests/filesystems/configfs"
	gcc -O2 -Wall -I"$TREE/tools/testing/selftests" \
		-o "$STAGE/selftests/filesystems/configfs/bin_attr_test" \
		"$TREE/tools/testing/selftests/filesystems/configfs/bin_attr_test.c" ||
		die "cannot compile the kselftest filesystems/configfs/bin_attr_test"
	rsync -a --delete "$REPO/bench/guest/" "$STAGE/guest/"
	# the package's DKMS file: which kernels it builds for
	mkdir -p "$STAGE/packaging"
	cp "$REPO/packaging/sch-clsact-dkms/debian/sch-clsact-dkms.dkms" "$STAGE/packaging/"
	rsync -a --delete "$REPO/demo/" "$STAGE/demo/"
	rsync -a --delete "$REPO/benchmarks/" "$STAGE/benchmarks/"
}

main() {
	[ "$flavour" != -stock ] || die "the stock kernel is Debian's, not built here: use make stock-check"
	ensure_cache_dir
	mkdir -p "$STAGE"
	configure
	build_kernel
	build_modules
	build_initramfs
	build_tests
	log "built $(cat "$STAGE/kernel.release")"
}

case "${1:-all}" in
all) main ;;
config) ensure_cache_dir; configure ;;
initramfs) build_initramfs ;;
tests) build_tests ;;
*) die "usage: build.sh [all|config|initramfs|tests]" ;;
esac
