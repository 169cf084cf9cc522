#!/bin/bash
# make series, tested both ways (run by make lint-patches; prints PASS/FAIL
# lines and exits non-zero on a failure):
# - with a real-looking identity, from the environment and from git config:
#   every From: and Signed-off-by: of every mail is exactly that identity,
#   each patch signed off once, as its last trailer; no placeholder
#   anywhere; each series' subject prefix is its topic's; each mail keeps
#   its patch's Date: and the notes below its ---; checkpatch --strict
#   passes on every mail as sent;
# - with an identity padded with whitespace (environment, git config):
#   the mails carry it trimmed, one space before the <;
# - with no identity, a blank name, and with placeholders (environment,
#   git config; the placeholder name, IP literals, local and reserved
#   domains): it fails, writes nothing, and says in one line what to set;
#   near misses of those placeholders are taken, as they are or trimmed
#   (sender_identity, which make series runs first).
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

placeholder = re.compile(r'(?i)(\.example|\.invalid|\.test|\.local|\.localdomain|localhost)\b|@\[|@[0-9.]+>'
                         r'|(^|[^a-z0-9])seed([^a-z0-9]|$)|\bunattributed\b|  |\s<\s|\s>')
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
# and prints one error line giving WHY and the fix (WHY names the variable
# or git config key to set where there is one).
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

# from_env LABEL NAME EMAIL [WANT]: make series with GIT_AUTHOR_NAME and
# GIT_AUTHOR_EMAIL, and the mails it writes, whose identity must be WANT
# (default "NAME <EMAIL>"); LABEL environment checks the subjects, dates,
# notes and checkpatch too
from_env() {
	local label=$1 out=$tmp/$1 rc=0 want=${4:-"$2 <$3>"}
	series "$out" GIT_AUTHOR_NAME="$2" GIT_AUTHOR_EMAIL="$3" >"$out.log" 2>&1 || rc=$?
	if [ $rc = 0 ]; then
		verdict 0 "make series with GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL '$2' '$3'"
		check_mails "$out" "$want" "$label"
	else
		verdict 1 "make series with GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL '$2' '$3': rc $rc"
		tail -5 "$out.log" | sed 's/^/    /'
	fi
}
ID_NAME='Jane Doe' ID_EMAIL=jane@kernel-dev.org
from_env environment "$ID_NAME" "$ID_EMAIL"
# whitespace around the name and the address is dropped: Signed-off-by:
# and From: alike read "Jane Doe <jane@kernel-dev.org>"
from_env "padded environment" "$ID_NAME " " $ID_EMAIL	" "$ID_NAME <$ID_EMAIL>"
# from_config LABEL NAME EMAIL [WANT]: make series with git config
# user.name and user.email, as a config file would set them, and the mails
# it writes
from_config() {
	local label=$1 out=$tmp/$1 rc=0 want=${4:-"$2 <$3>"}
	series "$out" GIT_CONFIG_VALUE_0="$2" GIT_CONFIG_VALUE_1="$3" >"$out.log" 2>&1 || rc=$?
	if [ $rc = 0 ]; then
		verdict 0 "make series with git config user.name/user.email '$2' '$3'"
		check_mails "$out" "$want" "$label"
	else
		verdict 1 "make series with git config user.name/user.email '$2' '$3': rc $rc"
		tail -5 "$out.log" | sed 's/^/    /'
	fi
}
# (padded: a quoted value in a config file keeps its spaces)
from_config "git config" '  Joe Bloggs ' ' joe.bloggs@kernel-dev.org ' 'Joe Bloggs <joe.bloggs@kernel-dev.org>'
# a name outside ASCII: From: is RFC 2047 encoded by git format-patch,
# Signed-off-by: is UTF-8
from_config "non-ASCII name" 'Zoë Ångström-Łukasiewicz' zoe@kernel-dev.org

# expect_identity LABEL WANT VAR=value...: sender_identity, which make
# series runs before anything else, takes the identity the arguments give
# (as series() sets it) and prints it as WANT, trimmed
expect_identity() {
	local label=$1 want=$2 got rc=0
	shift 2
	# shellcheck disable=SC2016 # $1 is the inner shell's
	got=$(env -u GIT_AUTHOR_NAME -u GIT_AUTHOR_EMAIL -u GIT_COMMITTER_NAME -u GIT_COMMITTER_EMAIL \
		GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0= \
		GIT_CONFIG_KEY_1=user.email GIT_CONFIG_VALUE_1= \
		"$@" bash -c '. "$1/bench/lib.sh"; sender_identity' _ "$REPO" 2>&1) || rc=$?
	[ $rc = 0 ] && [ "$got" = "$want" ] && verdict 0 "series takes $label: $got" ||
		verdict 1 "series with $label: wanted '$want', got rc $rc: $got"
}

expect_refusal "no identity" 'no identity is set: set git config user.name and git config user.email'
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
# a name that is only whitespace, and none beside an address
expect_refusal "a blank GIT_AUTHOR_NAME" 'the name (GIT_AUTHOR_NAME) is blank: set GIT_AUTHOR_NAME' \
	GIT_AUTHOR_NAME=$' \t ' GIT_AUTHOR_EMAIL=jane@kernel-dev.org
expect_refusal "a blank user.name from git config" 'the name (git config user.name) is blank: set git config user.name' \
	GIT_CONFIG_VALUE_0='   ' GIT_CONFIG_VALUE_1=jane@kernel-dev.org
expect_refusal "an address without a name, from git config" 'no name is set (git config user.name): set git config user.name' \
	GIT_CONFIG_VALUE_1=jane@kernel-dev.org
expect_refusal "a name without an address, from git config" 'no address is set (git config user.email): set git config user.email' \
	GIT_CONFIG_VALUE_0='Jane Doe'
# the patches' placeholder name, whatever its case and address
expect_refusal "the placeholder name with a real address" "placeholder author: set GIT_AUTHOR_NAME" \
	GIT_AUTHOR_NAME=unattributed GIT_AUTHOR_EMAIL=jane@kernel-dev.org
expect_refusal "the placeholder name, padded, from git config" "placeholder author: set git config user.name" \
	GIT_CONFIG_VALUE_0=' UNATTRIBUTED ' GIT_CONFIG_VALUE_1=jane@kernel-dev.org
# an IP literal instead of a domain
for a in jane@127.0.0.1 'jane@[127.0.0.1]' 'jane@[::1]'; do
	expect_refusal "the IP literal $a" 'is an IP address, not a mail domain: set GIT_AUTHOR_EMAIL' \
		GIT_AUTHOR_NAME='Jane Doe' GIT_AUTHOR_EMAIL="$a"
done
expect_refusal "the IP literal jane@10.1.2.3 from git config" 'is an IP address, not a mail domain: set git config user.email' \
	GIT_CONFIG_VALUE_0='Jane Doe' GIT_CONFIG_VALUE_1=jane@10.1.2.3
# hosts of one's own and reserved domains (RFC 2606, RFC 6761, mDNS)
for d in localhost6.localdomain6 localhost.localdomain laptop.local mail.example mail.invalid mail.test \
	mail.localhost mail.example.com mail.example.org mail.example.net; do
	expect_refusal "the address jane@$d" "is a placeholder (domain $d): set GIT_AUTHOR_EMAIL" \
		GIT_AUTHOR_NAME='Jane Doe' GIT_AUTHOR_EMAIL="jane@$d"
done
# what the placeholder rules must leave alone, and the trimmed identity
expect_identity "a name and address padded with whitespace, from the environment" 'Jane Doe <jane@kernel-dev.org>' \
	GIT_AUTHOR_NAME='Jane Doe ' GIT_AUTHOR_EMAIL=$'\tjane@kernel-dev.org '
expect_identity "a name and address padded with whitespace, from git config" 'Jane Doe <jane@kernel-dev.org>' \
	GIT_CONFIG_VALUE_0='  Jane Doe' GIT_CONFIG_VALUE_1='jane@kernel-dev.org  '
expect_identity "a name that holds the placeholder's as a word" 'Unattributed Smith <u.smith@kernel-dev.org>' \
	GIT_AUTHOR_NAME='Unattributed Smith' GIT_AUTHOR_EMAIL=u.smith@kernel-dev.org
for a in jane@local-isp.net jane@mail.localhosting.net jane@10x.org jane@testing.org \
	jane@example-corp.com jane@invalidation.org jane@mail.localdomain-shop.net; do
	expect_identity "the address $a" "Jane Doe <$a>" GIT_AUTHOR_NAME='Jane Doe' GIT_AUTHOR_EMAIL="$a"
done

# (not "N passed, N failed": lint-patches ends with the one tally line)
if [ $fail = 0 ]; then
	echo "series self-test: all $pass checks passed"
else
	echo "series self-test: $fail of $((pass + fail)) checks failed"
fi
[ $fail = 0 ]
