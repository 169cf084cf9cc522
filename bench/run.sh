#!/bin/bash
# Entry point behind the Makefile targets.
. "$(dirname "$0")/lib.sh"

B=$REPO/bench

prepare() {
	ensure_cache_dir
	"$B/deps.sh"
	"$B/tree.sh" prepare
	"$B/build.sh"
}

# Boot once in MODE and judge the run; extra args go to the kernel cmdline.
boot_and_report() {
	local mode=$1 run=$BENCH_CACHE/run-$1
	shift
	local rc=0
	"$B/qemu.sh" "$mode" "$run" "$@" || rc=$?
	python3 "$B/report.py" "$run" --boot-rc "$rc" --expect-tests
}

check() {
	local t0=$SECONDS extra=()
	prepare
	[ -z "${BREAK:-}" ] || extra+=("bench.break=$BREAK")
	[ -z "${ONLY:-}" ] || extra+=("bench.only=$ONLY")
	[ -z "${TEST_TIMEOUT:-}" ] || extra+=("bench.timeout=$TEST_TIMEOUT")
	local rc=0
	boot_and_report check "${extra[@]}" || rc=$?
	log "make check took $((SECONDS - t0))s"
	return $rc
}

demo() {
	prepare
	local run=$BENCH_CACHE/run-demo rc=0
	"$B/qemu.sh" demo "$run" || rc=$?
	echo
	echo "=== demo (guest output; full console in $run/console.log)"
	cat "$run/results/demo.txt" 2>/dev/null || echo "(the guest printed no demo output)"
	python3 "$B/report.py" "$run" --boot-rc "$rc" >"$run/verdict.txt" || {
		sed -n '/^----/,$p' "$run/verdict.txt"
		die "the demo run failed (see $run/verdict.txt)"
	}
	echo "=== demo boot clean: no kernel report in the console"
}

# Benchmarks print ratios measured in one boot; never a pass/fail on time.
bench() {
	prepare
	local run=$BENCH_CACHE/run-bench rc=0
	"$B/qemu.sh" bench "$run" "bench.only=$1" || rc=$?
	echo "=== benchmark $1 (one boot; TCG and the debug kernel distort absolute numbers, compare ratios)"
	cat "$run/results/bench.txt" 2>/dev/null || echo "(no benchmark output)"
	python3 "$B/report.py" "$run" --boot-rc "$rc" >"$run/verdict.txt" || {
		sed -n '/^----/,$p' "$run/verdict.txt"
		die "the benchmark boot failed (see $run/verdict.txt)"
	}
}

case "${1:-}" in
demo) demo ;;
check) check ;;
build) prepare ;;
shell) prepare; exec "$B/qemu.sh" shell "$BENCH_CACHE/run-shell" ;;
export-patches) "$B/tree.sh" export ;;
reapply) ensure_cache_dir; "$B/tree.sh" reapply; "$B/build.sh" ;;
selftest) exec "$B/selftest.sh" ;;
lint-patches) exec "$B/lint-patches.sh" ;;
csum-bench) bench csum ;;
csum-fuzz)
	# The helpers' randomized KUnit run at 1M packets, nothing else.
	export KERNEL_ARGS="skb_csum_offload_test.fuzz_iterations=${FUZZ_ITERATIONS:-1000000} kunit.filter_glob=skb_csum_offload.csum_offload_fuzz"
	export ONLY=none/ BENCH_HARD_TIMEOUT=${BENCH_HARD_TIMEOUT:-5400}
	check
	;;
*) die "unknown target '${1:-}': use make [demo|check|shell|build|export-patches|reapply|bench-selftest|csum-fuzz]" ;;
esac
