# shellcheck shell=bash
# Common settings for the bench scripts. Sourced, never run.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Everything large lives outside the repository; one variable moves it.
BENCH_CACHE=${BENCH_CACHE:-/var/tmp/lk45-bench}
SRC_TARBALL=${SRC_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
SRC_PACKAGE=linux-source-6.12
TREE=${TREE:-$BENCH_CACHE/linux} # git tree: pristine commit + our series
PATCHES=${PATCHES:-$REPO/patches}
# Tests boot the debug kernel. Benchmarks boot one built from the same tree
# with config/perf.config instead of config/debug.config: KASAN and lockdep
# tax every C load but not the assembly (csum_partial), which would swamp
# the ratios measured.
BENCH_KERNEL=${BENCH_KERNEL:-debug}
case $BENCH_KERNEL in
debug) flavour= ;;
perf) flavour=-perf ;;
plain) flavour=-plain ;;	# perf without CONFIG_JUMP_LABEL, see build.sh
stock) flavour=-stock ;;	# Debian's own linux-image, see stock.sh
*) printf 'bench: error: BENCH_KERNEL must be debug, perf, plain or stock\n' >&2; exit 1 ;;
esac
KOUT=$BENCH_CACHE/build$flavour      # kernel objects (O=)
MODOUT=$BENCH_CACHE/modules$flavour  # copy of modules/ built with M=
STAGE=$BENCH_CACHE/stage$flavour     # what the guest sees under /bench
JOBS=${JOBS:-$(nproc)}

log() { printf '[bench] %s\n' "$*" >&2; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

# Hash of files' names and contents, for cache keys.
hash_files() {
	local f
	for f in "$@"; do
		[ -e "$f" ] || continue
		printf '%s\n' "${f#"$REPO"/}"
		cat "$f"
	done | sha256sum | cut -c1-16
}

# The series. patches/series names the topic series in the order they are
# applied, each with the paths its patches may touch; a topic's patches are
# in patches/<topic>/. Without that file (the bench's self-test), the
# series is patches/*.patch in name order.
topics() {
	[ -f "$PATCHES/series" ] || return 0
	sed -e 's/#.*//' "$PATCHES/series" | awk 'NF { print $1 }'
}
topic_paths() {
	sed -e 's/#.*//' "$PATCHES/series" | awk -v t="$1" '$1 == t { $1 = ""; print }'
}
topic_patches() { find "$PATCHES/$1" -maxdepth 1 -name '*.patch' | LC_ALL=C sort; }
all_patches() {
	local t
	if [ -f "$PATCHES/series" ]; then
		for t in $(topics); do topic_patches "$t"; done
	else
		find "$PATCHES" -maxdepth 1 -name '*.patch' | LC_ALL=C sort
	fi
}
# topic_of FILE...: the one topic whose paths hold every file, or nothing.
topic_of() {
	local t f p hit found=
	for t in $(topics); do
		hit=1
		for f in "$@"; do
			local ok=0
			for p in $(topic_paths "$t"); do
				case "$f" in "$p"*) ok=1 ;; esac
			done
			[ $ok = 1 ] || { hit=0; break; }
		done
		[ $hit = 1 ] && { [ -z "$found" ] || return 0; found=$t; }
	done
	echo "$found"
}

ensure_cache_dir() {
	mkdir -p "$BENCH_CACHE" 2>/dev/null ||
		die "cannot create cache directory $BENCH_CACHE (set BENCH_CACHE)"
	local avail
	avail=$(df -Pk "$BENCH_CACHE" | awk 'NR==2 {print $4}')
	# A debug kernel build with objects needs about 6 GiB.
	if [ "${avail:-0}" -lt $((6 * 1024 * 1024)) ]; then
		die "less than 6 GiB free in $BENCH_CACHE ($((avail / 1024)) MiB); free space or set BENCH_CACHE"
	fi
}

# ---- Patch mail: identity, notes, topics that share paths ----
#
# patches/ store no one's identity and no Signed-off-by: a Signed-off-by
# is its sender's certification (the Developer's Certificate of Origin),
# so make series writes the sender's own, taken from sender_identity, into
# From: and a Signed-off-by: of every mail. The patch files carry this
# placeholder as their author, only so that git am can apply them; tree.sh
# export writes it whatever the tree's commits say.
PATCH_AUTHOR_PLACEHOLDER='Unattributed <unattributed@patches.invalid>'

# trim_space VAR...: strip leading and trailing whitespace (spaces, tabs,
# newlines) from each named variable, in place.
trim_space() {
	local _trim_n _trim_s
	for _trim_n in "$@"; do
		_trim_s=${!_trim_n}
		_trim_s=${_trim_s#"${_trim_s%%[![:space:]]*}"}
		_trim_s=${_trim_s%"${_trim_s##*[![:space:]]}"}
		printf -v "$_trim_n" '%s' "$_trim_s"
	done
}

# identity_problem "NAME" "EMAIL" [NAME_KEY EMAIL_KEY]: why NAME <EMAIL>
# cannot sign a patch (unset, blank, malformed, a placeholder, the example
# the error message gives, an IP literal or an address no reply reaches),
# or nothing when it can. NAME and EMAIL are taken without their leading
# and trailing whitespace, as sender_identity uses them. NAME_KEY and
# EMAIL_KEY say where they came from (default git config user.name and
# user.email), so that each reason names what to set. The message is one
# line whatever NAME and EMAIL hold.
identity_problem() {
	local name=$1 email=$2 nkey=${3:-git config user.name} ekey=${4:-git config user.email}
	local domain local_part lc shown
	local fix_name="set $nkey to your own name" fix_email="set $ekey to your own address"
	trim_space name email
	[ -n "$1$2" ] || { echo "no identity is set: set $nkey and $ekey"; return; }
	if [ -z "$name" ]; then
		if [ -n "$1" ]; then echo "the name ($nkey) is blank: $fix_name"; else echo "no name is set ($nkey): $fix_name"; fi
		return
	fi
	[ -n "$email" ] || { echo "no address is set ($ekey): $fix_email"; return; }
	# nothing that would end or split the From: header
	if [[ $name == *[\<\>\"]* || $name =~ [[:cntrl:]] ]]; then
		echo "the name '${name//[[:cntrl:]]/?}' holds <, >, \" or a control character (a newline, say): $fix_name"; return
	fi
	shown="$name <${email//[[:cntrl:]]/?}>"
	# the patches' placeholder author's name, whatever the address
	if [ "${name,,}" = "$(printf '%s' "${PATCH_AUTHOR_PLACEHOLDER% <*}" | tr '[:upper:]' '[:lower:]')" ]; then
		echo "'$shown' is a placeholder: '$name' is the patches' placeholder author: $fix_name"; return
	fi
	domain=${email##*@}
	domain=${domain,,}
	domain=${domain//[[:cntrl:]]/?}
	local_part=${email%@*}
	local_part=${local_part,,}
	# an IP literal (jane@127.0.0.1, jane@[127.0.0.1], jane@[::1]) names a
	# host, not a domain that receives mail
	if [[ $domain == \[*\] || $domain == *:* || $domain =~ ^[0-9]+(\.[0-9]+)*$ ]]; then
		echo "'$shown' is a placeholder: $domain is an IP address, not a mail domain: $fix_email"; return
	fi
	case "$domain" in
	*.example | *.invalid | *.test | *.localhost | localhost* | \
		*.localdomain | localdomain | *.local | *.lan | *.internal | \
		example.com | example.org | example.net | *.example.com | *.example.org | *.example.net | \
		your.domain | *.your.domain | domain.com | email.com)
		echo "'$shown' is a placeholder (domain $domain): $fix_email"; return ;;
	noreply.* | *.noreply.* | no-reply.* | *.no-reply.*)
		echo "'$shown' is a placeholder: a no-reply address (domain $domain), which no reviewer can answer: $fix_email"; return ;;
	esac
	case "$local_part" in
	noreply | no-reply | donotreply | do-not-reply | you | your.name | yourname | user | username | nobody | root)
		echo "'$shown' is a placeholder (address $local_part@): $fix_email"; return ;;
	esac
	[[ $email =~ ^[^@[:space:][:cntrl:]\<\>\"]+@[^@[:space:][:cntrl:]\<\>\".]+(\.[^@[:space:][:cntrl:]\<\>\".]+)+$ ]] ||
		{ echo "'${email//[[:cntrl:]]/?}' is not an e-mail address with a domain: $fix_email"; return; }
	lc=$(printf '%s %s' "$name" "$email" | tr '[:upper:]' '[:lower:]')
	if [[ " $lc " =~ [^a-z0-9]seed[^a-z0-9] ]]; then
		echo "'$shown' is a placeholder (it says \"seed\"): set $nkey and $ekey to your own"; return
	fi
	if [[ " $lc " =~ [^a-z]your[[:space:]_.-]*name[^a-z] ]]; then
		echo "'$shown' is a placeholder (the example \"Your Name\"): set $nkey and $ekey to your own"; return
	fi
	[ "$shown" != "$PATCH_AUTHOR_PLACEHOLDER" ] ||
		echo "'$shown' is the patches' placeholder author: set $nkey and $ekey to your own"
}

# sender_identity: "Name <email>" of whoever mails the series:
# GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL when both are set, else git config
# user.name and user.email as git resolves them in this checkout; one of
# the two variables alone is refused (a sign-off is one person's, not a
# name from here and an address from there). Leading and trailing
# whitespace of each is dropped (From: and Signed-off-by: alike). Dies
# with one line naming the fix when it is unset, blank or a placeholder.
sender_identity() {
	local name=${GIT_AUTHOR_NAME:-} email=${GIT_AUTHOR_EMAIL:-} why='' nkey=GIT_AUTHOR_NAME ekey=GIT_AUTHOR_EMAIL
	if [ -n "$name" ] && [ -z "$email" ]; then
		why="GIT_AUTHOR_NAME is set without the other (GIT_AUTHOR_EMAIL): export GIT_AUTHOR_EMAIL too, or unset GIT_AUTHOR_NAME"
	elif [ -z "$name" ] && [ -n "$email" ]; then
		why="GIT_AUTHOR_EMAIL is set without the other (GIT_AUTHOR_NAME): export GIT_AUTHOR_NAME too, or unset GIT_AUTHOR_EMAIL"
	elif [ -z "$name" ]; then
		name=$(git -C "$REPO" config user.name 2>/dev/null || true)
		email=$(git -C "$REPO" config user.email 2>/dev/null || true)
		nkey="git config user.name" ekey="git config user.email"
	fi
	[ -n "$why" ] || why=$(identity_problem "$name" "$email" "$nkey" "$ekey")
	[ -z "$why" ] || die "From: and Signed-off-by: of the mails must be your own identity, but $why (in general: git config user.name \"Your Name\" and git config user.email you@your.domain in $REPO, or export GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL)"
	trim_space name email
	printf '%s <%s>\n' "$name" "$email"
}

# patch_notes PATCH: the text of a patch file between its "---" line and
# its diffstat (for reviewers: how it was tested, what it depends on, where
# it should go), which git am drops and git format-patch --notes writes
# back from a git note, indented under "Notes:".
patch_notes() {
	awk '
	!sep { if ($0 == "---") sep = 1; next }
	/^diff --git / || /^ [^ ].* \| / || /^ [0-9]+ files? changed/ { exit }
	{ l[++n] = $0 }
	END {
		s = 1; while (s <= n && l[s] ~ /^[ \t]*$/) s++
		e = n; while (e >= s && l[e] ~ /^[ \t]*$/) e--
		indented = s <= e && l[s] == "Notes:"
		if (indented) s++
		for (i = s; i <= e; i++) { x = l[i]; if (indented) sub(/^    /, "", x); print x }
	}' "$1"
}

# am_patch DIR PATCH [git am options]: git am PATCH in the work tree DIR,
# and keep its notes (patch_notes) as a git note of the new commit, byte for
# byte: the note is the blob of that text (git notes add -C), since -F and
# -m clean it up (trailing spaces, runs of blank lines) and git before 2.42
# has no --no-stripspace.
am_patch() {
	local dir=$1 p=$2 note blob
	shift 2
	git -C "$dir" am -q "$@" "$p" || return
	note=$(patch_notes "$p")
	[ -n "$note" ] || return 0
	blob=$(printf '%s\n' "$note" | git -C "$dir" hash-object -w --stdin) &&
		git -C "$dir" notes add -f -C "$blob" HEAD
}

# Topics may share paths (fixes for one tree, features for another): a
# topic whose directory holds a file "fixes-only" takes only commits with a
# Fixes: tag, and one with a file "depends-on" (topic names) applies on
# top of those topics, not alone (tree.sh export, lint-patches, series).
# known_camelcase TREE PATCH: checkpatch's output on stdin, without its
# "Avoid CamelCase" checks for names that a file PATCH touches already
# declares as an enum member in the pristine tree (TREE's root commit),
# such as 8139cp's register bits. checkpatch means to flag new CamelCase
# names, but learns old ones only from #defines, typedefs and
# declarations, never from enum members. A name found only in comments
# or strings is still flagged.
known_camelcase() {
	local tree=$1 patch=$2 root line f
	local -a files
	root=$(git -C "$tree" rev-list --max-parents=0 HEAD | tail -n 1)
	mapfile -t files < <(sed -n 's@^+++ b/@@p' "$patch" | sort -u)
	while IFS= read -r line; do
		if [[ $line =~ Avoid\ CamelCase:\ \<([A-Za-z0-9_]+)\> ]]; then
			for f in "${files[@]}"; do
				git -C "$tree" grep -qP "^\\s*\\Q${BASH_REMATCH[1]}\\E\\s*(=|,)" "$root" -- "$f" 2>/dev/null &&
					continue 2
			done
		fi
		printf '%s\n' "$line"
	done
}

# acpica_style PATCH: the checkpatch options for PATCH: for a patch that
# touches only drivers/acpi/acpica/, whose code Linux generates from
# ACPICA's own sources (acpisrc) and keeps in ACPICA's style, checkpatch's
# objections to that style (return (x); braces on every if) are ignored.
acpica_style() {
	local f others
	others=$(sed -n 's@^+++ b/@@p' "$1" | grep -v '^drivers/acpi/acpica/' || true)
	f=$(sed -n 's@^+++ b/@@p' "$1" | head -n 1)
	[ -n "$f" ] && [ -z "$others" ] && echo "--ignore RETURN_PARENTHESES,BRACES"
	return 0
}

topic_fixes_only() { [ -e "$PATCHES/$1/fixes-only" ]; }
topic_deps() {
	[ -f "$PATCHES/$1/depends-on" ] || return 0
	sed -e 's/#.*//' "$PATCHES/$1/depends-on" | tr -s ' \t' '\n\n' | sed '/^$/d'
}
# topics_holding FILE...: every topic whose paths hold all the files, in
# the order of patches/series.
topics_holding() {
	local t f p ok hit
	for t in $(topics); do
		hit=1
		for f in "$@"; do
			ok=0
			for p in $(topic_paths "$t"); do
				case "$f" in "$p"*) ok=1 ;; esac
			done
			[ $ok = 1 ] || { hit=0; break; }
		done
		[ $hit = 0 ] || echo "$t"
	done
}
