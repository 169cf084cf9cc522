# shellcheck shell=bash
# Minimal TAP for guest shell tests. Source, then call ok/not_ok/skip/is.
_tap_n=0
_tap_failed=0

# TAP_TIMES (set by the bench): a file that gets "SECONDS N" per result,
# the test's own elapsed time, for finding where a slow test spends it.
# Taken from the environment and unset, so that a nested test does not
# write into it.
_tap_times=${TAP_TIMES:-}
unset TAP_TIMES
_tap_time() { [ -z "$_tap_times" ] || echo "$SECONDS $_tap_n" >>"$_tap_times" || :; }
ok() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $*"; _tap_time; }
not_ok() { _tap_n=$((_tap_n + 1)); _tap_failed=1; echo "not ok $_tap_n - $*"; _tap_time; }
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $1 # SKIP $2"; _tap_time; }
diag() { echo "# $*"; }

# is GOT WANT DESCRIPTION: exact comparison, both values shown on failure.
is() {
	if [ "$1" = "$2" ]; then
		ok "$3"
	else
		not_ok "$3"
		diag "got '$1', want '$2'"
	fi
}

# check DESCRIPTION CMD...: pass when CMD exits 0.
check() {
	local desc=$1
	shift
	if "$@" >/tmp/tap.out.$$ 2>&1; then ok "$desc"; else not_ok "$desc"; sed 's/^/# /' /tmp/tap.out.$$; fi
}

# is_within SECONDS WANT DESCRIPTION CMD...: CMD's output becomes WANT
# within SECONDS (asked again every 0.2 s), for what the kernel finishes
# later (a netns teardown, a delayed work) on a guest that may be busy
is_within() {
	local end=$((SECONDS + $1)) want=$2 desc=$3 got
	shift 3
	while got=$("$@" 2>&1); [ "$got" != "$want" ] && [ $SECONDS -lt $end ]; do
		sleep 0.2
	done
	is "$got" "$want" "$desc"
}

# tap_include CMD...: CMD's TAP lines as results of this test, renumbered;
# its plan is dropped, a failure or a missing result fails.
tap_include() {
	local line n=0 rc
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "${line#ok [0-9]* - }"; n=$((n + 1)) ;;
		"not ok "*) not_ok "${line#not ok [0-9]* - }"; n=$((n + 1)) ;;
		"Bail out!"*) not_ok "$1: ${line#Bail out! }"; n=$((n + 1)) ;;
		1..*) ;;
		rc=*) rc=${line#rc=} ;;
		*) echo "$line" ;;
		esac
	done < <("$@"; echo "rc=$?")
	[ "$n" -gt 0 ] || not_ok "$1 reported no result"
	[ "${rc:-0}" -le 1 ] || not_ok "$1 died (exit $rc)"
}

done_testing() { echo "1..$_tap_n"; exit $_tap_failed; }
