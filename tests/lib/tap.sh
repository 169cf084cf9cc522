# shellcheck shell=bash
# Minimal TAP for guest shell tests. Source, then call ok/not_ok/skip/is.
_tap_n=0
_tap_failed=0

ok() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $*"; }
not_ok() { _tap_n=$((_tap_n + 1)); _tap_failed=1; echo "not ok $_tap_n - $*"; }
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $1 # SKIP $2"; }
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
	if "$@" >/tmp/tap.out 2>&1; then ok "$desc"; else not_ok "$desc"; sed 's/^/# /' /tmp/tap.out; fi
}

done_testing() { echo "1..$_tap_n"; exit $_tap_failed; }
