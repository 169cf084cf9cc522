#!/bin/bash
# Install what the bench needs from Debian's packages (idempotent).
# Host packages double as the guest's userspace: the guest mounts /usr.
. "$(dirname "$0")/lib.sh"

PKGS=(
	linux-source-6.12 build-essential flex bison bc libelf-dev libssl-dev
	cpio kmod rsync xz-utils python3 qemu-system-x86
	iproute2 ethtool tcpdump iputils-ping netcat-openbsd socat
	clang llvm libbpf-dev bpftool acpica-tools procps util-linux
	python3-scapy	# tc-testing sends packets with it
	python3-yaml	# the kernel's YNL library reads its specs (net selftests)
	liburing-dev	# configfs tests write through io_uring
	linux-perf	# clsact-bench profiles the hooks per function
	jq netsniff-ng ncat	# upstream's forwarding kselftests (stock-check)
	dkms debhelper dh-dkms dpkg-dev	# make deb, and dkms build for the stock kernel
	dwarves		# pahole: Debian's linux-kbuild needs it for modules' BTF
)

# deps.sh packaging: only the packages named in BENCH_PKGS.
if [ "${1:-}" = packaging ]; then
	read -r -a PKGS <<<"${BENCH_PKGS:?}"
fi

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	log "installing: ${missing[*]}"
	[ "$(id -u)" -eq 0 ] || die "need root to apt-get install: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get update -qq >"$BENCH_CACHE.apt.log" 2>&1 ||
		! apt-get install -y -qq --no-install-recommends "${missing[@]}" \
			>>"$BENCH_CACHE.apt.log" 2>&1; then
		die "apt-get could not install ${missing[*]} (see $BENCH_CACHE.apt.log)"
	fi
fi
[ "${1:-}" = packaging ] || [ -r "$SRC_TARBALL" ] || die "no kernel source tarball at $SRC_TARBALL (package $SRC_PACKAGE)"
