#!/bin/bash
# Runs inside the guest as PID 1's only child. The mode comes from the kernel
# command line (bench.mode=check|demo|shell|probe).
#   check: every guest test and KUnit suite, results into /results
#   demo:  every demo script, output to the console
set -u

mode=check
timeout_s=300
only=
tests='test_*'
repeat=1
lanes=2
sctp_only=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	bench.mode=*) mode=${arg#*=} ;;
	bench.timeout=*) timeout_s=${arg#*=} ;;
	bench.only=*) only=${arg#*=} ;;
	bench.tests=*) tests=${arg#*=} ;;	# e.g. tdc_* for make clsact-tdc
	bench.repeat=*) repeat=${arg#*=} ;;	# REPEAT=N: each test N times
	bench.lanes=1) lanes=1 ;;	# LANES=1: one test at a time
	bench.break=*) export BENCH_BREAK=${arg#*=} ;;
	bench.sctp_only=1) sctp_only=1 ;;	# make csum-fuzz: the run with SCTP only
	esac
done

export BENCH_RESULTS=/results BENCH_STAGE=/bench
export PYTHONDONTWRITEBYTECODE=1
hostname bench-guest 2>/dev/null
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd	# bash process substitution
ip link set lo up
# Our sch_clsact stands in for the tree's sch_ingress: both answer the
# net-sch-ingress/clsact aliases, so the tree's is kept out of alias loads
# (an explicit "modprobe sch_ingress" still loads it).
# On Debian's kernel the sch-clsact-dkms package's own file does it (copied
# to /run: /usr here is the host's, read-only).
mkdir -p /run/modprobe.d
if compgen -G '/bench/pkg/usr/lib/modprobe.d/*.conf' >/dev/null; then
	cp /bench/pkg/usr/lib/modprobe.d/*.conf /run/modprobe.d/
else
	echo "blacklist sch_ingress" >/run/modprobe.d/lk45-clsact.conf
fi

console() { echo "$*" >/dev/console; }

# KUnit suites: built-in ones ran at boot; module ones run on insmod and
# their results vanish on rmmod, so copy them in between.
collect_kunit() {
	local d
	mkdir -p /results/kunit
	for d in /sys/kernel/debug/kunit/*/; do
		[ -r "$d/results" ] || continue
		cp "$d/results" "/results/kunit/$(basename "$d").ktap"
	done
}

run_kunit_modules() {
	local ko name
	for ko in "/lib/modules/$(uname -r)"/extra/*_kunit.ko; do
		[ -e "$ko" ] || continue
		name=$(basename "$ko" .ko)
		console "bench: kunit module $name"
		if modprobe "$name"; then
			collect_kunit
			modprobe -r "$name" || console "bench: cannot unload $name"
		else
			echo "not ok 1 insmod $name failed" >"/results/kunit/$name.load-error"
		fi
	done
}

# The checksum helpers' KUnit suite, a module as under Debian's config
# (IP_SCTP=m): first without SCTP loaded, where the cases that resolve its
# CRC32c in software are skipped (results as skb_csum_offload.no-sctp),
# then with it, where every case runs.
run_csum_kunit() {
	local m=skb_csum_offload_test k=/results/kunit/skb_csum_offload
	modinfo "$m" >/dev/null 2>&1 || return 0
	if [ -z "$sctp_only" ]; then
		console "bench: kunit module $m without SCTP"
		if lsmod | grep -q '^sctp '; then
			echo "not ok 1 sctp was loaded before the run without it" >"$k.no-sctp.load-error"
		elif modprobe "$m"; then
			collect_kunit
			mv "$k.ktap" "$k.no-sctp.ktap" 2>/dev/null
			modprobe -r "$m" || console "bench: cannot unload $m"
		else
			echo "not ok 1 modprobe $m failed" >"$k.no-sctp.load-error"
		fi
	fi
	console "bench: kunit module $m with SCTP"
	if modprobe sctp && modprobe "$m"; then
		collect_kunit
		modprobe -r "$m" || console "bench: cannot unload $m"
	else
		echo "not ok 1 modprobe sctp $m failed" >"$k.load-error"
	fi
}

# locks_of GROUP/NAME: the locks /bench/tests/locks gives the test
locks_of() {
	local glob rest
	[ -r /bench/tests/locks ] || { console "bench: no tests/locks: no test holds a lock"; return 0; }
	# shellcheck disable=SC2254 # the first word is a glob
	while read -r glob rest; do
		case $glob in '#'* | '') continue ;; esac
		case $1 in $glob) echo "${rest%%#*}" ;; esac
	done </bench/tests/locks
}

# run_one GROUP NAME CMD...: one test under the per-test timeout, holding
# its locks; TAP on stdout into /results/tests/GROUP/NAME.tap, exit status
# beside it. The time counts from when it holds its locks.
run_one() {
	local group=$1 name=$2 rc start lock cmd=()
	shift 2
	mkdir -p "/results/tests/$group" /run/bench-locks
	# -o: the test does not keep the lock; -w: a lock the other lane
	# never gives back fails this test, not the whole run
	for lock in $(locks_of "$group/${name%@*}" | tr ' ' '\n' | sort -u); do
		cmd+=(flock -o -w "$((timeout_s * 2))" "/run/bench-locks/$lock")
	done
	cmd+=(bash -c 'echo "bench: running $0" >/dev/console; date +%s >"$1.start"
		cd /tmp && exec timeout -k 5 "$2" "${@:3}"' "$group/$name" "/results/tests/$group/$name" "$timeout_s")
	rm -f "/results/tests/$group/$name.times" "/results/tests/$group/$name.start"
	TAP_TIMES=/results/tests/$group/$name.times "${cmd[@]}" "$@" \
		>"/results/tests/$group/$name.tap" 2>"/results/tests/$group/$name.err"
	rc=$?
	start=$(cat "/results/tests/$group/$name.start" 2>/dev/null || date +%s)
	rm -f "/results/tests/$group/$name.start"
	echo "$rc $(($(date +%s) - start)) $timeout_s" >"/results/tests/$group/$name.rc"
}

# run_lane LANE: the tests of LANE (clsact, or any other group), in order
run_lane() {
	local t group name t_to default_timeout=$timeout_s
	# bench.tests: globs, comma-separated
	for t in $(for g in ${tests//,/ }; do printf '%s\n' /bench/tests/*/$g; done | sort -u); do
		[ -f "$t" ] && [ -x "$t" ] || continue
		group=$(basename "$(dirname "$t")")
		name=$(basename "$t")
		name=${name%.sh}
		[ -z "$only" ] || [[ "$group/$name" == $only* ]] || continue
		if [ "$lanes" = 2 ]; then
			[ "$1" = clsact ] && [ "$group" != clsact ] && continue
			[ "$1" != clsact ] && [ "$group" = clsact ] && continue
		fi
		# A script may ask for more time: a "# bench-timeout: SECONDS" line.
		t_to=
		case $t in *.sh) t_to=$(sed -n 's/^# bench-timeout: \([0-9]*\).*/\1/p' "$t" | head -1) ;; esac
		for r in $(seq "$repeat"); do
			[ "$r" = 1 ] || name=${name%@*}@$r
			timeout_s=${t_to:-$default_timeout} run_one "$group" "$name" "$t"
		done
	done
}

# The guest has two vCPUs: the clsact tests run beside the others, each
# holding the locks tests/locks gives it (bench.lanes=1: one at a time).
run_tests() {
	if [ "$lanes" = 1 ]; then
		run_lane all
		return
	fi
	# a lane that died leaves its marker missing: the run fails
	echo clsact other >/results/lanes
	(run_lane clsact && echo done >/results/lane.clsact) &
	run_lane other && echo done >/results/lane.other
	wait
}

# Test-only switch (make check BREAK=...): provoke a failure the bench must
# catch. Never set in a normal run.
run_break() {
	local cmd
	case "$BENCH_BREAK" in
	bug | kasan | lockdep | warn) cmd="modprobe lk45_bench_fault mode=$BENCH_BREAK" ;;
	hang) cmd="sleep 1000000" ;;
	poweroff) cmd="sync; python3 -c 'import ctypes; ctypes.CDLL(None).reboot(0x4321fedc)'" ;;
	*) cmd="echo 'not ok 1 - unknown BREAK=$BENCH_BREAK'; exit 1" ;;
	esac
	run_one bench "break_$BENCH_BREAK" bash -c "$cmd; echo 'ok 1 - provoked $BENCH_BREAK'"
}

# Leak reports must reach the host: scan now, after every test ran.
scan_kmemleak() {
	local f=/sys/kernel/debug/kmemleak
	[ -w $f ] || return 0
	echo scan >$f
	sleep 6
	echo scan >$f
	cat $f >/results/kmemleak.txt
	[ -s /results/kmemleak.txt ] && cat /results/kmemleak.txt >/dev/console
	return 0
}

case "$mode" in
probe)
	exit 0
	;;
check)
	mkdir -p /results/kunit /results/tests
	rm -f /results/lanes /results/lane.*
	collect_kunit
	run_kunit_modules
	run_csum_kunit
	[ -z "${BENCH_BREAK:-}" ] || run_break
	run_tests
	scan_kmemleak
	dmesg >/results/dmesg.txt
	exit 0
	;;
demo | bench)
	# every script of /bench/demo or /bench/benchmarks, output kept
	dir=/bench/demo
	[ "$mode" = bench ] && dir=/bench/benchmarks
	# A script that fails fails the boot (and the make target).
	rc=0
	for d in "$dir"/*.sh; do
		[ -x "$d" ] || continue
		[ -z "$only" ] || [[ "$(basename "$d")" == $only* ]] || continue
		"$d" 2>&1 | tee -a "/results/$mode.txt"
		[ "${PIPESTATUS[0]}" = 0 ] || { rc=1; echo "bench: $d failed" | tee -a "/results/$mode.txt" >/dev/console; }
	done
	exit $rc
	;;
shell)
	console "bench: interactive shell; 'exit' powers the guest off"
	setsid -c bash -i </dev/ttyS0 >/dev/ttyS0 2>&1
	exit 0
	;;
*)
	console "bench: unknown bench.mode=$mode"
	exit 2
	;;
esac
