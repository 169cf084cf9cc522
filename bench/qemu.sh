#!/bin/bash
# Boot the staged bench kernel in QEMU.
#   qemu.sh MODE RUNDIR [extra kernel args...]
# MODE is check, demo, shell or probe. The serial console goes to
# RUNDIR/console.log (to the terminal for shell), the guest writes its
# results and its exit status into RUNDIR/results. Exit status: 0 when the
# guest reported status 0, 1 when it reported failure, 2 when it powered off
# without reporting, 3 when it hung and was killed at the hard timeout.
. "$(dirname "$0")/lib.sh"

mode=${1:?mode}
run=${2:?run directory}
shift 2
HARD_TIMEOUT=${BENCH_HARD_TIMEOUT:-3600}
MEM=${BENCH_MEM:-3G}

[ -f "$STAGE/bzImage" ] || die "no kernel staged in $STAGE: run 'make build'"
mkdir -p "$run/results"
rm -rf "${run:?}/results/"*

# Instruction counting (BENCH_ICOUNT=1) gets one vCPU: with two, two
# benchmark boots hung with vCPU 0 spinning in d_alloc_parallel() for over
# 20 guest seconds (an RCU stall); one vCPU cannot wait on a sibling.
SMP=2
[ "${BENCH_ICOUNT:-0}" = 1 ] && SMP=1

common=(
	-machine q35 -m "$MEM" -smp $SMP -no-reboot -display none
	-kernel "$STAGE/bzImage" -initrd "$STAGE/initramfs.cpio"
	-device isa-debug-exit,iobase=0xf4,iosize=0x04
	-virtfs local,path=/usr,mount_tag=usr,security_model=none,readonly=on
	-virtfs local,path=/etc,mount_tag=etc,security_model=none,readonly=on
	-virtfs "local,path=$STAGE,mount_tag=stage,security_model=none,readonly=on"
	# One hub joins the rtl8139 port (8139cp, the checksum driver under test)
	# and an e1000 receiver; nothing leaves the machine.
	-netdev hubport,id=hp0,hubid=0 -device rtl8139,netdev=hp0,mac=52:54:00:12:81:39
	-netdev hubport,id=hp1,hubid=0 -device e1000,netdev=hp1,mac=52:54:00:10:00:01
)
# A 4 MiB log: tests count lines in dmesg across a whole boot (REPEAT too).
cmdline="console=ttyS0 panic=-1 kasan.fault=report kasan_multi_shot loglevel=7 log_buf_len=4M"
cmdline+=" net.ifnames=0 bench.mode=$mode"
# Built-in KUnit suites run at every boot; only check runs want them.
[ "$mode" = check ] || cmdline+=" kunit.enable=0"
cmdline+=" ${KERNEL_ARGS:-} $*"

# /dev/kvm exists on these machines but KVM may not work: trust it only
# after a short probe boot succeeds.
pick_accel() {
	if [ -n "${BENCH_ACCEL:-}" ]; then
		echo "$BENCH_ACCEL"
		return
	fi
	# The verdict holds until the host reboots (/run is a tmpfs).
	local memo=/run/lk45-bench-accel
	if [ -f $memo ]; then
		cat $memo
		return
	fi
	if [ -w /dev/kvm ]; then
		local p=$BENCH_CACHE/probe
		mkdir -p "$p/results"
		rm -f "$p/results/status"
		timeout -k 2 20 qemu-system-x86_64 -accel kvm -cpu qemu64 "${common[@]}" \
			-virtfs "local,path=$p/results,mount_tag=results,security_model=none" \
			-serial "file:$p/console.log" -append "console=ttyS0 panic=-1 bench.mode=probe" \
			>/dev/null 2>&1 || true
		if grep -qx 'exit 0' "$p/results/status" 2>/dev/null; then
			echo kvm | tee $memo
			return
		fi
	fi
	echo tcg | tee $memo
}

accel=$(pick_accel)
accel_args=(-accel tcg,thread=multi -cpu qemu64)
[ "$accel" = kvm ] && accel_args=(-accel kvm -cpu qemu64)
# BENCH_ICOUNT=1: the guest clock counts instructions (1 ns each), so a
# timed run measures the path's instruction count, not the host's noise.
if [ "${BENCH_ICOUNT:-0}" = 1 ] && [ "$accel" = tcg ]; then
	accel_args=(-accel tcg,thread=single -icount shift=0,sleep=off,align=off -cpu qemu64)
	log "instruction-counting clock (-icount shift=0): guest ns = instructions"
fi
log "booting $(cat "$STAGE/kernel.release") under $accel (mode $mode)"
common+=(-virtfs "local,path=$run/results,mount_tag=results,security_model=none")

if [ "$mode" = shell ]; then
	exec qemu-system-x86_64 "${accel_args[@]}" "${common[@]}" -serial mon:stdio \
		-append "$cmdline"
fi

rc=0
# --foreground: an interrupt of make reaches QEMU too, and no guest is left
# holding the cache lock
timeout --foreground -k 5 "$HARD_TIMEOUT" qemu-system-x86_64 "${accel_args[@]}" "${common[@]}" \
	-serial "file:$run/console.log" -monitor none -append "$cmdline" \
	</dev/null >"$run/qemu.log" 2>&1 || rc=$?
echo "$rc" >"$run/qemu.rc"

if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	echo "bench: guest hung: killed after ${HARD_TIMEOUT}s" >&2
	exit 3
fi
if [ ! -f "$run/results/status" ]; then
	echo "bench: guest powered off without reporting a status (qemu exit $rc)" >&2
	exit 2
fi
read -r _ status <"$run/results/status"
[ "$status" = 0 ] && exit 0
exit 1
