#!/bin/bash
# make series, tested both ways (run by make lint-patches; prints PASS/FAIL
# lines and exits non-zero on a failure):
# - with a real-looking identity, from the environment and from git config:
#   every From: and Signed-off-by: of every mail is exactly that identity,
#   each patch signed off once, as its last trailer; no placeholder
#   anywhere; each series' subject prefix is its topic's; each mail keeps
#   its patch's Date: and the notes below its ---; checkpatch --strict
#   passes on every mail as sent;
# - with no identity, and with placeholders (environment, git config): it
#   fails, writes nothing, and says in one line what to set.
# The identities are set for these runs only (environment, and
# GIT_CONFIG_COUNT for git config), never in any git config file.
. "$(dirname "$0")/lib.sh"

pass=0
fail=0
verdict() {
	if [ "$1" = 0 ]; then echo "PASS $2"; pass=$((pass + 1)); else echo "FAIL $2"; fail=$((fail + 1)); fi
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/series-selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# series OUT VAR=value...: make series into OUT with only the identity the
# arguments give: none from the environment or git config otherwise
# (GIT_CONFIG_VALUE_0/1 set user.name/user.email as a config file would).
series() {
	local out=$1
	shift
	env -u GIT_AUTHOR_NAME -u GIT_AUTHOR_EMAIL -u GIT_COMMITTER_NAME -u GIT_COMMITTER_EMAIL \
		GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0= \
		GIT_CONFIG_KEY_1=user.email GIT_CONFIG_VALUE_1= \
		SERIES_OUT="$out" "$@" make -s -C "$REPO" series
}

# below_dashes PATCH: its lines from the "---" to the diffstat, as they are
# (blank lines and trailing spaces included).
below_dashes() {
	awk '!sep { if ($0 == "---") sep = 1; next }
	/^diff --git / || /^ [^ ].* \| / || /^ [0-9]+ files? changed/ { exit }
	{ print }' "$1"
}

# check_mails OUT "NAME <EMAIL>" LABEL: the mails of a successful run.
check_mails() {
	local out=$1 id=$2 label=$3 t m p bad prefix want n stored subject
	for t in $(topics); do
		mapfile -t ps < <(topic_patches "$t")
		[ ${#ps[@]} -gt 0 ] || continue
		mapfile -t mails < <(find "$out/$t" -name '*.patch' 2>/dev/null | LC_ALL=C sort)
		n=${#ps[@]}
		# a cover letter as series.sh writes one: for more than one patch,
		# or for one with a non-empty cover-letter file
		if [ "$n" -gt 1 ] || [ -s "$PATCHES/$t/cover-letter" ]; then n=$((n + 1)); fi
		if [ ${#mails[@]} != "$n" ]; then
			verdict 1 "series/$t ($label): $n mails, found ${#mails[@]} in $out/$t"
			continue
		fi
		# identity: every From: and Signed-off-by: line is the sender's
		bad=$(python3 - "$id" "${mails[@]}" <<'PY'
import email.parser, email.policy, re, sys
ident, mails = sys.argv[1], sys.argv[2:]

placeholder = re.compile(r'(?i)(\.example|\.invalid|\.test|localhost)\b|(^|[^a-z0-9])seed([^a-z0-9]|$)')
for m in mails:
    name = m.rsplit('/', 1)[-1]
    text = open(m, encoding='utf-8').read()
    lines = text.split('\n')
    # the header's From: as a mail reader shows it (unfolded, RFC 2047
    # decoded: a non-ASCII name is encoded), then any in-body From: line
    head = email.parser.Parser(policy=email.policy.default).parsestr(text, headersonly=True)
    body = lines[lines.index('') + 1:] if '' in lines else []
    froms = ['From: ' + str(h) for h in head.get_all('From', [])] + \
        [l for l in body if l.startswith('From: ')]
    if not froms or any(l != 'From: ' + ident for l in froms):
        print('%s: From: %s' % (name, froms))
    msg = lines[:lines.index('---')] if '---' in lines else lines
    sobs = [l for l in lines if re.match(r'(?i)signed-off-by:', l)]
    if any(l != 'Signed-off-by: ' + ident for l in sobs):
        print('%s: %s' % (name, sobs))
    if not name.startswith('0000-cover-letter'):
        if len(sobs) != 1 or not msg or msg[-1] != 'Signed-off-by: ' + ident:
            print('%s: wants one Signed-off-by, the last line above ---: %s' % (name, sobs))
    for l in froms + sobs:
        if placeholder.search(l):
            print('%s: placeholder identity: %s' % (name, l))
PY
)
		[ -z "$bad" ] && verdict 0 "series/$t ($label): ${#mails[@]} mails, every From: and Signed-off-by: exactly $id, one sign-off per patch" ||
			{ verdict 1 "series/$t ($label): identity of the mails"; echo "$bad" | sed 's/^/    /'; }
		[ "$label" = environment ] || continue
		# subject prefix
		prefix=PATCH
		[ -s "$PATCHES/$t/subject-prefix" ] && prefix=$(head -1 "$PATCHES/$t/subject-prefix")
		if [ "$n" = 1 ]; then want="[$prefix]"; else want="[$prefix "; fi
		bad=
		for m in "${mails[@]}"; do
			subject=$(grep -m1 '^Subject: ' "$m" || true)
			[[ $subject == "Subject: $want"* ]] || bad+=" ${m##*/}"
		done
		[ -z "$bad" ] && verdict 0 "series/$t: every subject starts $want" ||
			verdict 1 "series/$t: subjects not starting $want:$bad"
		# dates and notes kept, patch by patch
		bad=
		for p in "${ps[@]}"; do
			m=$(find "$out/$t" -name "${p##*/}")
			[ -n "$m" ] || { bad+=" ${p##*/}(no mail)"; continue; }
			[ "$(grep -m1 '^Date: ' "$p")" = "$(grep -m1 '^Date: ' "$m")" ] || bad+=" ${p##*/}(Date:)"
			[ "$(patch_notes "$p")" = "$(patch_notes "$m")" ] || bad+=" ${p##*/}(notes)"
			# and byte for byte, as the lines between --- and the diffstat
			cmp -s <(below_dashes "$p") <(below_dashes "$m") || bad+=" ${p##*/}(text below ---)"
		done
		[ -z "$bad" ] && verdict 0 "series/$t: each mail keeps its patch's Date: and the notes below its ---" ||
			verdict 1 "series/$t: Date: or notes lost:$bad"
		# checkpatch on the mails as sent (the lint's exceptions only)
		bad=
		for m in "${mails[@]}"; do
			case "$m" in */0000-cover-letter.patch) continue ;; esac
			# (from the tree's top: checkpatch learns the kernel's own
			# CamelCase names from the include/ of the git tree it runs in)
			# shellcheck disable=SC2046 # acpica_style's options are words
			stored=$(cd "$TREE" && ./scripts/checkpatch.pl --strict --terse --no-summary $(acpica_style "$m") "$m" 2>/dev/null |
				grep -v -e 'does MAINTAINERS need updating' -e "Unknown commit id '[0-9a-f]*', maybe rebased" |
				known_camelcase "$TREE" "$m" || true)
			[ -z "$stored" ] || bad+=$'\n'"${m##*/}: $stored"
		done
		[ -z "$bad" ] && verdict 0 "series/$t: checkpatch --strict on the mails as sent" ||
			{ verdict 1 "series/$t: checkpatch --strict on the mails as sent"; echo "$bad" | sed '/^$/d; s/^/    /'; }
	done
}

# expect_refusal LABEL WHY VAR=value...: make series fails, writes no mail,
# and prints one error line giving WHY and the fix.
expect_refusal() {
	local label=$1 why=$2 out=$tmp/$1 rc=0 err
	shift 2
	series "$out" "$@" >"$tmp/$label.out" 2>"$tmp/$label.err" || rc=$?
	err=$(grep 'bench: error:' "$tmp/$label.err" || true)
	if [ $rc != 0 ] && [ "$(echo "$err" | wc -l)" = 1 ] && [[ $err == *"$why"* ]] &&
		[[ $err == *"git config user.name"*"GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL"* ]] &&
		[ -z "$(find "$out" -name '*.patch' 2>/dev/null)" ]; then
		verdict 0 "series refuses $label: $err"
	else
		verdict 1 "series with $label: wanted one error line saying /$why/ and the fix, and no mail; got rc $rc:"
		sed 's/^/    /' "$tmp/$label.err" | head -5
	fi
}

ID_NAME='Jane Doe' ID_EMAIL=jane@kernel-dev.org
rc=0
series "$tmp/env" GIT_AUTHOR_NAME="$ID_NAME" GIT_AUTHOR_EMAIL="$ID_EMAIL" >"$tmp/env.log" 2>&1 || rc=$?
if [ $rc = 0 ]; then
	verdict 0 "make series with GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL $ID_NAME <$ID_EMAIL>"
	check_mails "$tmp/env" "$ID_NAME <$ID_EMAIL>" environment
else
	verdict 1 "make series with GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL $ID_NAME <$ID_EMAIL>: rc $rc"
	tail -5 "$tmp/env.log" | sed 's/^/    /'
fi
# from_config LABEL NAME EMAIL: make series with git config user.name and
# user.email, as a config file would set them, and the mails it writes
from_config() {
	local label=$1 out=$tmp/$1 rc=0
	series "$out" GIT_CONFIG_VALUE_0="$2" GIT_CONFIG_VALUE_1="$3" >"$out.log" 2>&1 || rc=$?
	if [ $rc = 0 ]; then
		verdict 0 "make series with git config user.name/user.email $2 <$3>"
		check_mails "$out" "$2 <$3>" "$label"
	else
		verdict 1 "make series with git config user.name/user.email $2 <$3>: rc $rc"
		tail -5 "$out.log" | sed 's/^/    /'
	fi
}
from_config "git config" 'Joe Bloggs' joe.bloggs@kernel-dev.org
# a name outside ASCII: From: is RFC 2047 encoded by git format-patch,
# Signed-off-by: is UTF-8
from_config "non-ASCII name" 'Zoë Ångström-Łukasiewicz' zoe@kernel-dev.org

expect_refusal "no identity" 'no identity is set'
# half an identity from the environment is not mixed with git config's
expect_refusal "GIT_AUTHOR_NAME without GIT_AUTHOR_EMAIL" 'without the other' \
	GIT_AUTHOR_NAME='Jane Doe' GIT_CONFIG_VALUE_0='Joe Bloggs' GIT_CONFIG_VALUE_1=joe.bloggs@kernel-dev.org
expect_refusal "GIT_AUTHOR_EMAIL without GIT_AUTHOR_NAME" 'without the other' \
	GIT_AUTHOR_EMAIL=jane@kernel-dev.org GIT_CONFIG_VALUE_0='Joe Bloggs' GIT_CONFIG_VALUE_1=joe.bloggs@kernel-dev.org
expect_refusal "the seed placeholder from the environment" 'is a placeholder' \
	GIT_AUTHOR_NAME='Seed bd98ed15 maintainers' \
	GIT_AUTHOR_EMAIL=maintainers@users.noreply.a-seed-bd98ed15.example
expect_refusal "a localhost address from git config" 'is a placeholder' \
	GIT_CONFIG_VALUE_0='Jane Doe' GIT_CONFIG_VALUE_1=jane@localhost
expect_refusal "an .invalid address from the environment" 'is a placeholder' \
	GIT_AUTHOR_NAME='Jane Doe' GIT_AUTHOR_EMAIL=jane@mail.invalid
expect_refusal "the patches' own placeholder author" 'is a placeholder' \
	GIT_AUTHOR_NAME="${PATCH_AUTHOR_PLACEHOLDER% <*}" \
	GIT_AUTHOR_EMAIL="$(echo "${PATCH_AUTHOR_PLACEHOLDER##*<}" | tr -d '>')"
# the example the refusal itself gives, and its parts
expect_refusal "the example identity of the error message, from git config" 'is a placeholder' \
	GIT_CONFIG_VALUE_0='Your Name' GIT_CONFIG_VALUE_1=you@your.domain
expect_refusal "the example name with a real address" 'is a placeholder' \
	GIT_AUTHOR_NAME='Your Name' GIT_AUTHOR_EMAIL=jane@kernel-dev.org
expect_refusal "a .localdomain address" 'is a placeholder' \
	GIT_AUTHOR_NAME='Jane Doe' GIT_AUTHOR_EMAIL=jane@laptop.localdomain
expect_refusal "a GitHub no-reply address" 'no-reply address' \
	GIT_AUTHOR_NAME='Jane Doe' GIT_AUTHOR_EMAIL=12345+jane@users.noreply.github.com
# names that would break the From: and Signed-off-by: lines
expect_refusal "a name holding an address in <>" 'holds <, >' \
	GIT_AUTHOR_NAME='Jane Doe <jane@kernel-dev.org>' GIT_AUTHOR_EMAIL=jane@kernel-dev.org
expect_refusal "a name holding a double quote, from git config" 'holds <, >' \
	GIT_CONFIG_VALUE_0='Jane "JD" Doe' GIT_CONFIG_VALUE_1=jane@kernel-dev.org
expect_refusal "a name holding a newline" 'holds <, >' \
	GIT_AUTHOR_NAME=$'Jane Doe\nBcc: someone@kernel-dev.org' GIT_AUTHOR_EMAIL=jane@kernel-dev.org

# (not "N passed, N failed": lint-patches ends with the one tally line)
if [ $fail = 0 ]; then
	echo "series self-test: all $pass checks passed"
else
	echo "series self-test: $fail of $((pass + fail)) checks failed"
fi
[ $fail = 0 ]
