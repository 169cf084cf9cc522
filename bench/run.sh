#!/bin/bash
# Entry point behind the Makefile targets.
# Benchmarks measure the kernel without the debug fragment (see lib.sh).
case "${1:-}" in
*-bench) export BENCH_KERNEL=perf ;;
clsact-tdc) export BENCH_KERNEL=${BENCH_KERNEL:-perf} ;;	# 8x faster than debug, which works too
stock-check) export BENCH_KERNEL=stock ;;	# Debian's own linux-image
esac
# Benchmarks of path length count instructions (-icount; BENCH_ICOUNT=0 for
# the wall clock), so that their ratios repeat from run to run. In
# csum-bench both sides of each ratio run the same assembly csum_partial()
# over the same bytes, so what differs is instructions of overhead, which
# is what the count weighs.
case "${1:-}" in
clsact-bench | configfs-bench | csum-bench) export BENCH_ICOUNT=${BENCH_ICOUNT:-1} ;;
esac
. "$(dirname "$0")/lib.sh"

B=$REPO/bench

# One target at a time per cache: two would rebuild the tree and restage
# under each other's running guest. Nested runs (selftest's make check,
# lint-patches' make series) inherit the lock.
# make series checks the sender before it waits for anyone.
[ "${1:-}" != series ] || sender_identity >/dev/null
if [ -z "${BENCH_CACHE_LOCKED:-}" ]; then
	mkdir -p "$BENCH_CACHE" 2>/dev/null ||
		die "cannot create cache directory $BENCH_CACHE (set BENCH_CACHE)"
	exec 9>>"$BENCH_CACHE/.lock"
	if ! flock -n 9; then
		log "another bench target uses $BENCH_CACHE (fuser $BENCH_CACHE/.lock); waiting for it"
		flock 9
	fi
	export BENCH_CACHE_LOCKED=1
fi

prepare() {
	ensure_cache_dir
	"$B/deps.sh"
	"$B/tree.sh" prepare
	"$B/build.sh"
}

# Boot once in MODE and judge the run; extra args go to the kernel cmdline.
# T_START (the target's start, in $SECONDS) and T_BUILD (seconds it took to
# build and stage) go into the report's timing lines.
boot_and_report() {
	local mode=$1 run=$BENCH_CACHE/run-$1${RUN_SUFFIX:-}
	shift
	local rc=0 t1=$SECONDS
	"$B/qemu.sh" "$mode" "$run" "$@" || rc=$?
	python3 "$B/report.py" "$run" --boot-rc "$rc" --expect-tests \
		--timing "${T_BUILD:-0}" "$((SECONDS - t1))" "$((SECONDS - ${T_START:-$t1}))"
}

check() {
	local extra=()
	T_START=$SECONDS
	prepare
	T_BUILD=$((SECONDS - T_START))
	[ -z "${BREAK:-}" ] || extra+=("bench.break=$BREAK")
	[ -z "${ONLY:-}" ] || extra+=("bench.only=$ONLY")
	[ -z "${TEST_TIMEOUT:-}" ] || extra+=("bench.timeout=$TEST_TIMEOUT")
	[ -z "${TESTS:-}" ] || extra+=("bench.tests=$TESTS")
	case ${LANES:-2} in
	1 | 2) extra+=("bench.lanes=${LANES:-2}") ;;
	*) die "LANES=$LANES: 1 (one test at a time) or 2 (the clsact tests beside the others)" ;;
	esac
	if [ -n "${REPEAT:-}" ]; then
		[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || die "REPEAT=$REPEAT: a count of runs, 1 or more"
		extra+=("bench.repeat=$REPEAT")
		export BENCH_HARD_TIMEOUT=${BENCH_HARD_TIMEOUT:-$((3600 * REPEAT))}
	fi
	local rc=0
	boot_and_report check "${extra[@]}" || rc=$?
	return $rc
}

# show MODE TITLE [kernel args]: boot in MODE, print what the guest's scripts
# wrote to results/MODE.txt, and fail if the console holds a kernel report.
# Demos and benchmarks print; they never pass or fail on time.
show() {
	local mode=$1 title=$2 run=$BENCH_CACHE/run-$1 rc=0
	shift 2
	prepare
	"$B/qemu.sh" "$mode" "$run" "$@" || rc=$?
	echo
	echo "=== $title (guest output; full console in $run/console.log)"
	cat "$run/results/$mode.txt" 2>/dev/null || echo "(the guest printed nothing)"
	python3 "$B/report.py" "$run" --boot-rc "$rc" >"$run/verdict.txt" || {
		sed -n '/^----/,$p' "$run/verdict.txt"
		die "the $mode boot failed (see $run/verdict.txt)"
	}
	echo "=== $mode boot clean: no kernel report in the console"
}

case "${1:-}" in
demo) show demo demo ;;
check) check ;;
build) prepare ;;
shell) prepare; exec "$B/qemu.sh" shell "$BENCH_CACHE/run-shell" ;;
export-patches) "$B/tree.sh" export ;;
reapply) ensure_cache_dir; "$B/tree.sh" reapply; "$B/build.sh" ;;
selftest) exec "$B/selftest.sh" ;;
lint-patches) exec "$B/lint-patches.sh" ;;
series) ensure_cache_dir; "$B/deps.sh"; exec "$B/series.sh" ;;
deb) mkdir -p "$BENCH_CACHE"; exec "$B/deb.sh" ;;
csum-bench) show bench "benchmark csum: one boot of the non-debug kernel under an instruction-counting clock (BENCH_ICOUNT=0: wall clock); compare ratios" bench.only=csum ;;
configfs-bench) show bench "benchmark configfs: one boot of the non-debug kernel, ours then 6.12's configfs, under an instruction-counting clock (BENCH_ICOUNT=0: wall clock); compare ratios" bench.only=configfs ;;
clsact-bench) show bench "benchmark clsact: pktgen in one boot of the non-debug kernel under an instruction-counting clock (BENCH_ICOUNT=0: wall clock); compare ratios" bench.only=clsact ;;
clsact-tdc)
	# tdc against ours, then the tree's sch_ingress, in one boot of the
	# non-debug kernel unless BENCH_KERNEL=debug.
	export TESTS='tdc_*' ONLY=clsact/ TEST_TIMEOUT=${TEST_TIMEOUT:-7200}
	export BENCH_HARD_TIMEOUT=${BENCH_HARD_TIMEOUT:-9000}
	check
	;;
stock-check)
	# Debian's kernel with the sch-clsact-dkms package's module: the clsact
	# tests, tdc and upstream's kselftests, ours against Debian's
	# sch_ingress, in one boot (bench/stock.sh says how it is staged).
	T_START=$SECONDS
	"$B/stock.sh"
	T_BUILD=$((SECONDS - T_START))
	export BENCH_HARD_TIMEOUT=${BENCH_HARD_TIMEOUT:-9000} RUN_SUFFIX=-stock
	extra=(bench.only=clsact/ "bench.tests=${TESTS:-test_*,tdc_*,kselftest_*}")
	[ -z "${TEST_TIMEOUT:-}" ] || extra+=("bench.timeout=$TEST_TIMEOUT")
	rc=0
	boot_and_report check "${extra[@]}" || rc=$?
	# and booted with module signatures enforced, as under Secure Boot
	# (the key DKMS signed ours with is not enrolled)
	T_START=$SECONDS T_BUILD=0 RUN_SUFFIX=-stock-sig boot_and_report check \
		bench.only=clsact/ "bench.tests=test_clsact_sig_enforce*" module.sig_enforce=1 || rc=$?
	exit $rc
	;;
csum-fuzz)
	# The helpers' randomized KUnit run at 1M packets, nothing else.
	export KERNEL_ARGS="skb_csum_offload_test.fuzz_iterations=${FUZZ_ITERATIONS:-1000000} kunit.filter_glob=skb_csum_offload.csum_offload_fuzz bench.sctp_only=1"
	export ONLY=none/ BENCH_HARD_TIMEOUT=${BENCH_HARD_TIMEOUT:-5400}
	check
	;;
*) die "unknown target '${1:-}': try: make help" ;;
esac
