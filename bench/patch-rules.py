#!/usr/bin/env python3
"""What goes where in a patch mail, checked on patches/ (run by
bench/lint-patches.sh; prints PASS/FAIL lines, exits 1 on a failure).

    patch-rules.py PATCHES_DIR PLACEHOLDER_AUTHOR SOURCE_VERSION

Per patch:
  identity   From: is the placeholder author, and no Signed-off-by (nor
             Co-developed-by, which needs one) is stored: make series adds
             the sender's. Other trailers (Reported-by, Reviewed-by,
             Acked-by, Tested-by, Suggested-by, Cc) may name people; no
             address appears elsewhere (URLs such as Link: and Closes:,
             whose Message-IDs look like addresses, excepted), in the
             Subject: either, and none is a placeholder (.example,
             .invalid, .test, localhost, .localdomain, no-reply, "seed").
  below ---  test tallies, run logs, how it was tested and machine timings
             are below the --- (the notes), not in the commit message.
  stable     Cc: stable only together with Fixes:; in a fixes-only topic,
             every patch has Fixes:.
  lab words  the message, the notes and the comments and documentation the
             patch adds do not talk about this lab (seeds, lk45, the bench,
             make check, our benchmark, issue numbers).
  date       Date: is set, parses, is not in the future.
  net-next   in a net-next series (subject prefix net-next), no patch
             carries Fixes: (a fix goes to net, not net-next).
  mainline   a "Mainline:" verdict below the --- states that the patch
             applies, does not apply, or was rebased, never that it was
             not checked, not at hand, unchecked or unknown.
  ACPICA     a patch to drivers/acpi/acpica/ says below its --- that it
             goes through ACPICA upstream first.
Per topic:
  dates      not one Date: for the whole series, and no Date: earlier
             than the one of the patch before it (0001, 0002, ...).
  prefix     a networking topic's subject prefix: PATCH net for its fixes
             (fixes-only, or every patch a fix with Fixes: but the
             selftests that go with them), PATCH net-next for the rest.
  letter     the cover letter (or a one-patch topic's notes) names the base
             (Debian linux-source-6.12 SOURCE_VERSION) and says whether the
             patches apply to mainline (a verdict, as per patch under
             "mainline"), with no TODO left; one for an ACPICA
             patch says it goes through ACPICA upstream; no lab words.
  who        the cover letter stores no identity (as per patch) and every
             line of patches/<topic>/cc is one real address, no placeholder.
Run with --selftest, it checks that each rule fails on a copy of a patch
made to break it, and passes on one with text it must not flag.
"""
import email.utils
import os
import re
import sys
import time

selftest = sys.argv[1:2] == ['--selftest']
if selftest:
    sys.argv.pop(1)
patches, placeholder, version = sys.argv[1:4]
results = []


def read(path):
    """A file's text; bytes that are not UTF-8 become U+FFFD, never a crash
    (checkpatch reports invalid UTF-8)."""
    with open(path, encoding='utf-8', errors='replace') as f:
        return f.read()


def verdict(ok, what, detail=()):
    results.append(ok)
    print(('PASS ' if ok else 'FAIL ') + what)
    if not ok:
        for d in detail:
            print('    ' + d)


# ---- patterns ----
I = re.I | re.M
# how it was tested, tallies, logs, timings: below the ---. Counts of
# results and timings that are measurements, not durations in prose (a
# chip that needs 10 ms after a reset is a fact of the code).
DUR = (r'\d+(?:[.,]\d+)?\s*(?:ns|nsecs?|us|usecs?|µs|ms|msecs?|s|secs?|seconds?|mins?|minutes?'
       r'|h|hrs?|hours?)\b')
ABOUT = r'(?:about\s+|around\s+|roughly\s+|only\s+|just\s+|under\s+|over\s+|~\s*)?'
RESULT = r'(?:pass(?:ed|es)?|fail(?:ed|s)?|ok|succeed(?:ed|s)?|green|skipped)'
CHECKS = r'(?:tests?|checks?|test\s*cases?|cases|subtests?|selftests?|assertions?)'
TESTED = [
    (r'^\s*tested\b(?!-by:)', 'a "Tested" line'),
    (r'^\s*testing:', 'a "Testing:" line'),
    (r'\btested (in|on|with|under|by|against|using)\b', '"tested in/on/with"'),
    (r'\b\d[\d,]*\s+(?:of\s+\d[\d,]*\s+)?(?:passed|failed|passes|failures|skipped|succeeded)\b',
     'a pass/fail count'),
    (r'\b\d[\d,]*\s+(?:of\s+\d[\d,]*\s+)?(?:[\w-]+\s+)?' + CHECKS + r'\s+(?:all\s+|still\s+)?' + RESULT + r'\b',
     'a count of tests and their result'),
    (r'\b(?:all|every|each)\s+(?:[\w-]+\s+)?' + CHECKS + r'\s+(?:still\s+)?(?:pass(?:ed|es)?|succeed(?:ed|s)?)\b',
     '"all tests pass"'),
    (r'\b\d+\s*/\s*\d+\s+(?:[\w-]+\s+)?(?:' + RESULT[3:-1] + r'|' + CHECKS[3:-1] + r')\b',
     'a tally (N/N)'),
    (r'\b(?:pass(?:ed)?|fail(?:ed|ures?)?|skip(?:ped)?|totals?)\s*[:=]\s*\d', 'a tally (PASS=, FAIL=)'),
    (r'^\s*(?:not\s+)?ok\s+\d+\s', 'a KTAP result line'),
    (r'\bmake\s+(check|build|series|lint-patches|stock-check|[a-z]+-(bench|fuzz|tdc))\b',
     'a make target of the test setup'),
    (r'\bran\b[^.]{0,60}\btimes\b', '"ran ... times"'),
    (r'\b\d[\d,]*\s+(runs|rounds|boots|iterations)\b', 'a run count'),
    (r'\bmedian of\b', 'a measurement ("median of")'),
    (r'-?\bicount\b', 'a measurement under QEMU -icount'),
    (r'\b(?:i|we)\s+measured\b', 'a measurement'),
    (r'\bmeasured\b[^.\n]{0,60}?' + DUR, 'a measurement'),
    (r'\bbenchmark', 'a benchmark'),
    (r'\b(in|under|on) QEMU\b|\bQEMU guest\b|\bTCG\b', 'where it was tested (QEMU)'),
    (r'\bwith KASAN\b|\bkmemleak on\b', 'the test kernel\'s debug options'),
    (r'\bW=1 build\b', 'a build log'),
    (r'\b\d[\d,]*\s+(guest\s+)?instructions\b', 'an instruction count'),
    # timings: two compared, a statistic, what a run took or cost
    (DUR + r'[^.\n]{0,40}?\b(?:instead of|vs\.?|versus|compared (?:to|with)|down from|up from|rather than)\s+'
     + ABOUT + DUR, 'a timing (compared)'),
    (r'\bfrom\s+' + ABOUT + DUR + r'\s+(?:down\s+|up\s+)?to\s+' + ABOUT + DUR, 'a timing (from ... to)'),
    (DUR + r'\s*(?:->|→|=>)\s*' + DUR, 'a timing (compared)'),
    (r'\b(?:median|mean|average|avg|p\d\d(?:\.\d+)?|stddev|std\.? dev\.?|wall[- ]?clock|elapsed|best of|worst of)\b'
     r'[^.\n]{0,25}?' + DUR, 'a timing (a statistic)'),
    (DUR + r'\s*(?:on average|per (?:call|packet|run|iteration|op|operation|loop|round|boot|test|byte|frame|skb)\b'
     r'|(?:wall|elapsed|cpu|user|sys)\b|median\b|mean\b|average\b|±|\+/-)', 'a timing (a statistic)'),
    (r'±\s*' + DUR, 'a timing (a statistic)'),
    (r'\b(?:took|ran in|runs in|run in|completed in|completes in|finished in|finishes in|lasted|costs?)\s+'
     + ABOUT + DUR, 'a timing (what a run took)'),
    (r'\b(?:fuzz(?:ed|ing)?|soak(?:ed|ing)?|stress(?:ed|ing)?|ran|run|running|looped|tested)\b[^.\n]{0,30}?\bfor\s+'
     r'(?:more than\s+|over\s+|about\s+|~\s*)?' + DUR, 'a timing (how long it ran)'),
]
# this lab's words, anywhere in a mail
LAB = [
    (r'\blk45\w*', 'lk45'),
    (r'\bbd98ed15\b', 'the seed id'),
    (r'\bseeds?\s+0\d\d\b', 'a seed number'),
    (r'\bseed\s+(series|patch(es)?|system|task|spec(ification)?)\b', 'the seeds'),
    (r'\bthe seeds\b', 'the seeds'),
    (r'(?<![\w-])bench(es)?\b', '"bench"'),
    (r'\bour\s+(benchmarks?|bench|tests?|test suite|lab|project|harness|CI)\b', '"our ..."'),
    (r'\bmake\s+(check|build|series|lint-patches|stock-check|deb|reapply|export-patches|[a-z]+-(bench|fuzz|tdc))\b',
     'a make target of the test setup'),
    (r'\b(csum|configfs|clsact)-(bench|fuzz|tdc)\b|\bstock-check\b|\blint-patches\b',
     'a make target of the test setup'),
    (r'\bsch-clsact-dkms\b|\bblobstore\b', 'a name of this project'),
    (r'\b(issue|ticket|task)\s*#?\s*\d+', 'an issue number'),
    (r'(?<![\w&/#])#\d+\b', 'an issue number'),
]
# identity: a sign-off is the sender's, added by make series; a
# Co-developed-by needs its author's sign-off, so neither is stored
SOB = re.compile(r'(?im)^\s*(signed-off-by|co-developed-by):.*$')
# trailers that name someone other than the sender, as netdev expects them
PEOPLE = re.compile(r'(?i)^\s*([a-z-]+-by|cc):\s')
# lines whose addresses are Message-IDs or references, not people
REFS = re.compile(r'(?i)^\s*(link|closes|message-id|in-reply-to|references):')
URL = re.compile(r'<?\b[a-z][a-z0-9+.-]*://[^\s>]*>?', re.I)
ADDR = re.compile(r'[\w.+-]+@[\w-]+(\.[\w-]+)+')
LIST_ADDR = re.compile(r'@(vger\.kernel\.org|lists\.linux\.dev|lists\.infradead\.org)$')
PLACEHOLDER = re.compile(r'(?i)@(?:[\w-]+\.)*(?:[\w-]+\.(?:example|invalid|test|localhost|localdomain)|localhost'
                         r'|example\.(?:com|org|net)|(?:users\.)?no-?reply\.[\w.-]+)\b'
                         r'|\bno-?reply@|(?<![a-z0-9])seed(?![a-z0-9])')


def who(text, part):
    """What text says of people that patches/ must not store: sign-offs,
    addresses outside the trailers that name people, placeholders."""
    bad = []
    for line in text.split('\n'):
        if SOB.match(line):
            bad.append('%s: %s' % (part, line.strip()))
            continue
        if REFS.match(line):
            continue
        people = PEOPLE.match(line)
        plain = URL.sub(' ', line)
        placeholder_addr = False
        for a in ADDR.finditer(plain):
            addr = a.group(0)
            if PLACEHOLDER.search('@' + addr.split('@', 1)[1]) or PLACEHOLDER.match(addr):
                bad.append('%s: placeholder address %s' % (part, addr))
                placeholder_addr = True
            elif not people and not LIST_ADDR.search(addr):
                bad.append('%s: address %s' % (part, addr))
        if people and not placeholder_addr and PLACEHOLDER.search(line):
            bad.append('%s: placeholder in %s' % (part, line.strip()))
    return bad


def hits(patterns, text):
    out = []
    for pat, what in patterns:
        for m in re.finditer(pat, text, I):
            line = text[text.rfind('\n', 0, m.start()) + 1:text.find('\n', m.end()) % (len(text) + 1)]
            if '%s: %s' % (what, line.strip()) not in out:
                out.append('%s: %s' % (what, line.strip()))
    return out


# a "Mainline:" verdict: from its line to the next blank line. It states
# whether the patches apply to mainline (or were rebased onto it), and no
# hedge stands in for that verdict.
MAINLINE_SAYS = re.compile(r"\bapplies\b|\bapplied\b|\bapply(?:\s*,|\s+(?:to|on|onto|cleanly|as)\b)"
                           r"|\b(?:does|do|did)\s+not\s+apply\b|\b(?:doesn't|don't|didn't)\s+apply\b"
                           r"|\brebased\b", re.I)
MAINLINE_HEDGE = re.compile(r"\bnot\s+(?:been\s+|yet\s+)?checked\b|\bnot\s+at\s+hand\b"
                            r"|\bun-?checked\b|\bunknown\b", re.I)


def mainline_verdicts(text):
    """Each "Mainline:" paragraph of text, joined into one line."""
    out, cur = [], None
    for l in text.split('\n'):
        if re.match(r'^\s*Mainline:', l):
            if cur:
                out.append(' '.join(cur))
            cur = [l.strip()]
        elif cur is not None:
            if not l.strip():
                out.append(' '.join(cur))
                cur = None
            else:
                cur.append(l.strip())
    if cur:
        out.append(' '.join(cur))
    return out


def mainline_problems(text, where):
    bad = []
    for v in mainline_verdicts(text):
        shown = v if len(v) <= 160 else v[:157] + '...'
        hedges = sorted(set(m.group(0).lower() for m in MAINLINE_HEDGE.finditer(v)))
        if hedges:
            bad.append('%s says %s: check it against mainline and say whether it applies: %s'
                       % (where, ', '.join('"%s"' % x for x in hedges), shown))
        elif not MAINLINE_SAYS.search(v):
            bad.append('%s states neither that it applies, nor that it does not apply, nor that it was rebased: %s'
                       % (where, shown))
    return bad


def notes_of(below):
    """The text between --- and the diffstat, as tree.sh keeps it."""
    lines = []
    for l in below:
        if l.startswith('diff --git ') or re.match(r'^ [^ ].* \| ', l) or \
                re.match(r'^ \d+ files? changed', l):
            break
        lines.append(l)
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    if lines and lines[0] == 'Notes:':
        lines = [l[4:] if l.startswith('    ') else l.strip() for l in lines[1:]]
    return '\n'.join(lines)


def parse(path):
    lines = read(path).split('\n')
    i = 0
    headers = []
    while i < len(lines) and lines[i] != '':
        if lines[i][:1] in (' ', '\t') and headers:
            headers[-1] += ' ' + lines[i].strip()
        else:
            headers.append(lines[i])
        i += 1
    h = {}
    for x in headers[1:]:
        k, _, v = x.partition(':')
        h.setdefault(k, []).append(v.strip())
    try:
        sep = lines.index('---', i)
    except ValueError:
        sep = len(lines)
    msg = '\n'.join(lines[i:sep]).strip('\n')
    below = lines[sep + 1:]
    notes = notes_of(below)
    # comments and documentation the patch adds
    added, fname = [], ''
    for l in below:
        if l.startswith('+++ '):
            fname = l[6:] if l.startswith('+++ b/') else ''
            continue
        if not l.startswith('+') or not fname:
            continue
        t = l[1:]
        if re.search(r'\.[ch]$', fname):
            m = re.match(r'^\s*(/\*|\*|//)', t)
            if m:
                added.append(t)
            elif '/*' in t:
                added.append(t[t.index('/*'):])
            elif re.search(r'(?<![:"])//', t):
                added.append(t[t.index('//'):])
        else:
            added.append(t)
    files = re.findall(r'^diff --git a/(\S+) b/', '\n'.join(below), re.M)
    return h, msg, notes, '\n'.join(added), files


def topics(patches):
    out = []
    for l in read(os.path.join(patches, 'series')).split('\n'):
        l = l.split('#', 1)[0].split()
        if l:
            out.append((l[0], l[1:]))
    return out


def check(patches):
    for topic, paths in topics(patches):
        check_topic(patches, topic, paths)


def check_topic(patches, topic, paths):
    tdir = os.path.join(patches, topic)
    names = sorted(f for f in os.listdir(tdir) if f.endswith('.patch')) if os.path.isdir(tdir) else []
    fixes_only = os.path.exists(os.path.join(tdir, 'fixes-only'))
    net = any(p.startswith(('net/', 'drivers/net/')) for p in paths)
    dates, all_notes, acpica = [], [], False
    stamps = []  # (patch file, Date:, its time), in series order
    pf = os.path.join(tdir, 'subject-prefix')
    prefix = read(pf).split('\n')[0].strip() if os.path.exists(pf) else 'PATCH'
    next_series = 'net-next' in prefix.split()
    # a net series: fixes, each with Fixes:, and the selftests that go
    # with them
    fixes_seen, features_seen = False, False
    for n in names:
        name = '%s/%s' % (topic, n)
        h, msg, notes, added, files = parse(os.path.join(tdir, n))
        all_notes.append(notes)
        # identity
        bad = []
        if h.get('From') != [placeholder]:
            bad.append('From: %s (want %s)' % (h.get('From'), placeholder))
        for part, text in (('Subject', ' '.join(h.get('Subject', []))), ('message', msg), ('notes', notes)):
            bad += who(text, part)
        verdict(not bad, '%s: no identity stored (placeholder author, no sign-off, no address outside the trailers)'
                % name, bad)
        # how it was tested: below the ---
        bad = hits(TESTED, msg)
        verdict(not bad, '%s: test tallies, logs and how it was tested only below the ---' % name, bad)
        # stable
        has_fixes = re.search(r'^Fixes: [0-9a-f]{12,} \(".*"\)$', msg, re.M)
        has_stable = re.search(r'^Cc:.*\bstable@(vger\.)?kernel\.org', msg, re.M | re.I)
        if has_fixes:
            fixes_seen = True
        elif not all(f.startswith('tools/testing/selftests/') for f in files):
            features_seen = True
        bad = []
        if has_stable and not has_fixes:
            bad.append('Cc: stable without Fixes:')
        if fixes_only and not has_fixes:
            bad.append('no Fixes: in the fixes-only topic %s' % topic)
        verdict(not bad, '%s: Cc: stable only with Fixes:%s' % (name, ', a fix in a fixes topic' if fixes_only else ''), bad)
        # lab words
        bad = ['Subject: ' + x for x in hits(LAB, ' '.join(h.get('Subject', [])))] + \
              ['message: ' + x for x in hits(LAB, msg)] + ['notes: ' + x for x in hits(LAB, notes)] + \
              ['added comments or docs: ' + x for x in hits(LAB, added)]
        verdict(not bad, '%s: no lab words in the message, notes and added comments' % name, bad)
        # date
        d = h.get('Date', [''])[0]
        try:
            t = email.utils.parsedate_to_datetime(d).timestamp()
            ok = t <= now + 86400
        except (TypeError, ValueError):
            t, ok = None, False
        dates.append(d)
        if t is not None:
            stamps.append((n, d, t))
        verdict(ok, '%s: Date: %s, when it was written, not in the future' % (name, d or '(none)'))
        # a fix goes to net: none in a net-next series
        subj = ' '.join(h.get('Subject', []))
        next_patch = next_series or re.search(r'^\[[^\]]*\bnet-next\b', subj)
        if net or next_patch:
            tags = re.findall(r'(?im)^\s*fixes:.*$', msg)
            verdict(not (next_patch and tags),
                    '%s: no Fixes: in a net-next series (a fix goes to net, not net-next)' % name,
                    ['%s in [%s]' % (x.strip(), prefix) for x in tags])
        # its own Mainline: verdict, if its notes carry one
        if mainline_verdicts(notes):
            bad = mainline_problems(notes, 'the Mainline: verdict below its ---')
            verdict(not bad, '%s: Mainline: verdict below its --- says whether it applies to mainline' % name, bad)
        # ACPICA
        if any(f.startswith('drivers/acpi/acpica/') for f in files):
            acpica = True
            ok = re.search(r'ACPICA\b.*\bupstream|github\.com/acpica/acpica', notes, re.S | re.I)
            verdict(bool(ok), '%s: says below its --- that it goes through ACPICA upstream first' % name)
    if not names:
        return
    # per topic
    if len(names) > 1:
        verdict(len(set(dates)) > 1, '%s: each patch keeps its own Date:, not one stamp for the series (%d dates for %d patches)'
                % (topic, len(set(dates)), len(names)))
        # in series order, no patch written before the one it follows
        back = ['%s is dated before %s (%s < %s)' % (b[0], a[0], b[1], a[1])
                for a, b in zip(stamps, stamps[1:]) if b[2] < a[2]]
        if back:
            verdict(False, '%s: Date: goes back in series order: %s' % (topic, '; '.join(back)))
        else:
            verdict(True, '%s: Date: never goes back in series order (%d patches)' % (topic, len(names)))
    if net:
        fixes = fixes_only or (fixes_seen and not features_seen)
        want = 'PATCH net' if fixes else 'PATCH net-next'
        verdict(prefix == want, '%s: subject prefix [%s] (networking %s: [%s])'
                % (topic, prefix, 'fixes' if fixes else 'features', want))
    # who: the cover letter stores no one either; cc holds real addresses
    cl = os.path.join(tdir, 'cover-letter')
    ccf = os.path.join(tdir, 'cc')
    bad = who(read(cl), 'cover letter') if os.path.exists(cl) else []
    if os.path.exists(ccf):
        for l in read(ccf).split('\n'):
            if not l.strip():
                continue
            m = re.fullmatch(r'\s*(?:(?:"[^"\n]*"|[^<>"@\n]+?)\s+<([^<>\s]+)>|([^<>\s]+))\s*', l)
            addr = m and (m.group(1) or m.group(2))
            if not addr or not ADDR.fullmatch(addr):
                bad.append('cc: not one address: %s' % l)
            elif PLACEHOLDER.search(l):
                bad.append('cc: placeholder: %s' % l)
    if os.path.exists(cl) or os.path.exists(ccf):
        verdict(not bad, '%s: no identity or placeholder in the cover letter and cc' % topic, bad)
    if os.path.exists(cl):
        text, where = read(cl), 'cover letter'
    elif len(names) == 1:
        text, where = all_notes[0], 'notes below the --- of its one patch'
    else:
        verdict(False, '%s: a series of %d patches needs a cover letter' % (topic, len(names)))
        return
    bad = []
    if not re.search(r'linux-source-6\.12\s+' + re.escape(version), text):
        bad.append('does not name the base: Debian linux-source-6.12 %s' % version)
    if not re.search(r'^Mainline:', text, re.M):
        bad.append('no "Mainline:" line saying whether the patches apply to mainline')
    if re.search(r'\bTODO\b', text):
        bad += ['TODO left: ' + l for l in text.split('\n') if 'TODO' in l]
    if acpica and not re.search(r'ACPICA\b.*\bupstream', text, re.S):
        bad.append('does not say that the ACPICA patch goes through ACPICA upstream first')
    bad += hits(LAB, text)
    verdict(not bad, '%s: %s names the base and mainline status%s, no lab words'
            % (topic, where, ', ACPICA upstream' if acpica else ''), bad)
    if os.path.exists(cl) and mainline_verdicts(text):
        bad = mainline_problems(text, 'the Mainline: verdict of the cover letter')
        verdict(not bad, '%s: Mainline: verdict of the cover letter says whether the patches apply to mainline'
                % topic, bad)

now = time.time()


def rules_bite():
    """Each rule fails on a copy of a patch made to break it, and passes on
    one with text it must leave alone (a copy, in a temporary directory):
    the checks above are neither vacuous nor false alarms."""
    import shutil
    import subprocess
    import tempfile
    global results
    topic, paths = topics(patches)[0]
    name = sorted(f for f in os.listdir(os.path.join(patches, topic)) if f.endswith('.patch'))[0]
    orig = open(os.path.join(patches, topic, name), encoding='utf-8', errors='surrogateescape').read()
    head, _, rest = orig.partition('\n\n')
    msg, _, below = rest.partition('\n---\n')
    msg_lines = [l for l in msg.split('\n') if not l.startswith(('Fixes:', 'Cc: stable'))]
    base = '\n'.join(msg_lines).rstrip('\n')
    # a cover letter that passes every rule, for the cases that add to one
    letter = ('the subject\n\nBased on Debian linux-source-6.12 %s.\n\n'
              'Mainline: applies to Linux 7.0.\n' % version)

    def with_mainline(below, verdict_text):
        """below, its notes' "Mainline:" paragraph made verdict_text (added
        at the end of the notes when they have none)."""
        lines = below.split('\n')
        end = next((i for i, l in enumerate(lines) if l.startswith('diff --git ') or
                    re.match(r'^ [^ ].* \| ', l) or re.match(r'^ \d+ files? changed', l)), len(lines))
        indent = '    ' if 'Notes:' in lines[:end] else ''
        at = next((i for i in range(end) if re.match(r'^\s*Mainline:', lines[i])), None)
        if at is None:
            at = end
            while at > 0 and not lines[at - 1].strip():
                at -= 1
            lines[at:at] = [indent, indent + verdict_text]
            return '\n'.join(lines)
        stop = at + 1
        while stop < end and lines[stop].strip():
            stop += 1
        lines[at:stop] = [indent + verdict_text]
        return '\n'.join(lines)

    def dated(text, date):
        return re.sub(r'(?m)^Date: .*$', 'Date: ' + date, text, count=1)
    # a second patch of the series, after the first
    second = '0002-' + name[5:] if name[:5] == '0001-' else 'zz-' + name
    ok_below = with_mainline(below, 'Mainline: applies to Linux 7.0 as it is.')
    first_date = re.search(r'(?m)^Date: (.*)$', head).group(1)
    first_t = email.utils.parsedate_to_datetime(first_date).timestamp()
    earlier = email.utils.formatdate(first_t - 86400)
    later = email.utils.formatdate(first_t + 86400)
    FIXES = 'Fixes: 1da177e4c3f4 ("Linux-2.6.12-rc2")'
    NEXT, MAIN, ORDER = 'a fix goes to net, not net-next', 'Mainline: verdict', 'in series order'
    NO_ID, BELOW, WHO = 'no identity stored', 'only below the ---', 'no identity or placeholder in the cover letter'
    subject = re.compile(r'(?m)^Subject: (.*)$')
    # (what, rule, must it fail, head, message, extra files of the topic;
    # "below" in them replaces the text from the --- on)
    cases = [
        ('a Signed-off-by stored', NO_ID, True, head, base + '\n\nSigned-off-by: Jane Doe <jane@kernel-dev.org>', {}),
        ('a Co-developed-by stored', NO_ID, True, head, base + '\n\nCo-developed-by: Jane Doe <jane@kernel-dev.org>', {}),
        ('a person as the author', NO_ID, True,
         head.replace('From: ' + placeholder, 'From: Jane Doe <jane@kernel-dev.org>'), base, {}),
        ('an address in the message', NO_ID, True, head, base + '\n\nAsk jane@kernel-dev.org for the datasheet.', {}),
        ('an address in the Subject:', NO_ID, True,
         subject.sub(lambda m: 'Subject: ' + m.group(1) + ' for jane@kernel-dev.org', head, 1), base, {}),
        ('a placeholder address in a Reviewed-by:', NO_ID, True, head,
         base + '\n\nReviewed-by: Maintainers <maintainers@users.noreply.a-seed-bd98ed15.example>', {}),
        ('a "seed" name in an Acked-by:', NO_ID, True, head,
         base + '\n\nAcked-by: Seed maintainers <maintainers@kernel-dev.org>', {}),
        ('"Tested: 1234 passed, 0 failed" above the ---', BELOW, True, head, base + '\n\nTested: 1234 passed, 0 failed.', {}),
        ('"make check printed ..." above the ---', BELOW, True, head, base + '\n\nmake check printed no failure.', {}),
        ('"All 412 checks pass" above the ---', BELOW, True, head, base + '\n\nAll 412 checks pass.', {}),
        ('"57/57 ok" above the ---', BELOW, True, head, base + '\n\nKUnit: 57/57 ok.', {}),
        ('"PASS=57 FAIL=0" above the ---', BELOW, True, head, base + '\n\nPASS=57 FAIL=0', {}),
        ('"ran ... times" above the ---', BELOW, True, head, base + '\n\nThe reproducer ran 1000 times without a splat.', {}),
        ('a timing above the ---', BELOW, True, head, base + '\n\nAn upload now takes 12 ms instead of 3 seconds.', {}),
        ('"ran in 1.5 s" above the ---', BELOW, True, head, base + '\n\nThe whole suite ran in 1.5 s.', {}),
        ('"3 ns on average" above the ---', BELOW, True, head, base + '\n\nEach call costs 3 ns on average.', {}),
        ('"fuzzed for 2 h" above the ---', BELOW, True, head, base + '\n\nFuzzed for 2 h with no report.', {}),
        ('Cc: stable without Fixes:', 'Cc: stable only with Fixes:', True, head, base + '\n\nCc: stable@vger.kernel.org', {}),
        ('a seed number', 'no lab words', True, head, base + '\n\nThis is what seed 004 asked for.', {}),
        ('lk45', 'no lab words', True, head, base + '\n\nFound by the lk45 test suite.', {}),
        ('lk45 in the Subject:', 'no lab words', True,
         subject.sub(lambda m: 'Subject: ' + m.group(1) + ' (lk45)', head, 1), base, {}),
        ('an issue number', 'no lab words', True, head, base + '\n\nSee issue #42.', {}),
        ('a date in the future', 'not in the future', True,
         re.sub(r'(?m)^Date: .*$', 'Date: Mon, 1 Jan 2103 00:00:00 +0000', head), base, {}),
        ('a Signed-off-by in the cover letter', WHO, True, head, base,
         {'cover-letter': letter + '\nSigned-off-by: Jane Doe <jane@kernel-dev.org>\n'}),
        ('a placeholder address in the cover letter', WHO, True, head, base,
         {'cover-letter': letter + '\nWrite to maintainers@users.noreply.a-seed-bd98ed15.example.\n'}),
        ('an .invalid address in cc', WHO, True, head, base, {'cc': 'Jane Doe <jane@mail.invalid>\n'}),
        ('a seed name in cc', WHO, True, head, base, {'cc': 'Seed maintainers <maintainers@kernel-dev.org>\n'}),
        ('a Fixes: in a net-next series', NEXT, True, head, base + '\n\n' + FIXES,
         {'subject-prefix': 'PATCH net-next\n'}),
        ('a Fixes: in a series whose Subject: says net-next', NEXT, True,
         subject.sub(lambda m: 'Subject: ' + m.group(1).replace('[PATCH', '[PATCH net-next', 1), head, 1),
         base + '\n\n' + FIXES, {}),
        ('"Mainline: not checked" in the cover letter', MAIN, True, head, base,
         {'cover-letter': letter.replace('Mainline: applies to Linux 7.0.', 'Mainline: not checked against 7.0.'),
          'below': ok_below}),
        ('"Mainline: ... unknown" in the cover letter', MAIN, True, head, base,
         {'cover-letter': letter.replace('Mainline: applies to Linux 7.0.',
                                         'Mainline: patches 1-3 apply to Linux 7.0;\nwhether patch 4 does is unknown.'),
          'below': ok_below}),
        ('a Mainline: that says nothing of applying, in the cover letter', MAIN, True, head, base,
         {'cover-letter': letter.replace('Mainline: applies to Linux 7.0.', 'Mainline: see the notes.'),
          'below': ok_below}),
        ('"Mainline: ... not at hand" below a patch\'s ---', MAIN, True, head, base,
         {'below': with_mainline(below, "Mainline: 7.0's 8139cp.c was not at hand here.")}),
        ('"Mainline: unchecked" below a patch\'s ---', MAIN, True, head, base,
         {'below': with_mainline(below, 'Mainline: unchecked.')}),
        ('a patch dated before the one it follows', ORDER + ': %s is dated before %s' % (second, name), True,
         head, base, {second: dated(head, earlier) + '\n\n' + base + '\n---\n' + below}),
        ('two addresses on one cc line', WHO, True, head, base,
         {'cc': 'Jane Doe <jane@kernel-dev.org>, joe@kernel-dev.org\n'}),
        # what the rules must leave alone
        ('Reported-by:, Reviewed-by:, Acked-by:, Tested-by: and Cc: trailers', NO_ID, False, head,
         base + '\n\nReported-by: Jane Doe <jane@kernel-dev.org>\nReviewed-by: Joe Bloggs <joe@kernel-dev.org>\n'
         'Acked-by: Jane Doe <jane@kernel-dev.org>\nTested-by: Joe Bloggs <joe@kernel-dev.org>\n'
         'Cc: Jane Doe <jane@kernel-dev.org>', {}),
        ('a Tested-by: trailer', BELOW, False, head, base + '\n\nTested-by: Joe Bloggs <joe@kernel-dev.org>', {}),
        ('Message-IDs in Link: and Closes: URLs', NO_ID, False, head,
         base + '\n\nLink: https://lore.kernel.org/r/20240101120000.1234-1-jane@kernel-dev.org\n'
         'Closes: https://lore.kernel.org/netdev/CAHk-abc123@mail.gmail.com/', {}),
        ('"needs 10 ms after reset"', BELOW, False, head,
         base + '\n\nThe chip needs 10 ms after reset before it reads the ring.', {}),
        ('"measured from csum_start"', BELOW, False, head, base + '\n\nThe offset is measured from csum_start.', {}),
        ('"takes 10 ms to reset" and "a 1.5 s timeout"', BELOW, False, head,
         base + '\n\nThe chip takes 10 ms to reset; a 1.5 s timeout covers it.', {}),
        ('"called 2 times per packet", "both checks fail closed"', BELOW, False, head,
         base + '\n\nThe helper is called 2 times per packet, and both checks fail closed.', {}),
        ('a cover letter with a Link: and the word seed', WHO, False, head, base,
         {'cover-letter': letter + '\nThe checksum seed stays.\n'
          'Link: https://lore.kernel.org/r/20240101120000.1234-1-jane@kernel-dev.org\n'}),
        ('a cc of real addresses', WHO, False, head, base,
         {'cc': 'linux-fsdevel@vger.kernel.org\nJane Doe <jane@kernel-dev.org>\n"Doe, Joe" <joe@kernel-dev.org>\n'}),
        ('a net-next series without Fixes:', NEXT, False, head, base, {'subject-prefix': 'PATCH net-next\n'}),
        ('a Fixes: in a net series', NEXT, False, head, base + '\n\n' + FIXES, {'subject-prefix': 'PATCH net\n'}),
        ('"Mainline: applies" in the cover letter', MAIN, False, head, base,
         {'cover-letter': letter, 'below': ok_below}),
        ('"Mainline: ... does not apply ..., rebased" in the cover letter', MAIN, False, head, base,
         {'cover-letter': letter.replace('Mainline: applies to Linux 7.0.',
                                         'Mainline: patch 2 does not apply to Linux 7.0 as it is\n'
                                         '(the Makefile is sorted there); it was rebased onto net.'),
          'below': ok_below}),
        ('"Mainline: applies" below a patch\'s ---', MAIN, False, head, base, {'below': ok_below}),
        ('"Mainline: rebased" below a patch\'s ---', MAIN, False, head, base,
         {'below': with_mainline(below, 'Mainline: rebased onto net; the hunks did not\n'
                                        '    move otherwise.')}),
        ('patches dated in series order', ORDER, False, head, base,
         {second: dated(head, later) + '\n\n' + base + '\n---\n' + below}),
        ('two patches of one Date:', ORDER, False, head, base,
         {second: head + '\n\n' + base + '\n---\n' + below}),
    ]
    saved = results
    for what, rule, must_fail, h, m, extra in cases:
        extra = dict(extra)
        b = extra.pop('below', below)
        tmp = tempfile.mkdtemp()
        try:
            os.makedirs(os.path.join(tmp, topic))
            with open(os.path.join(tmp, 'series'), 'w') as f:
                f.write('%s %s\n' % (topic, ' '.join(paths)))
            with open(os.path.join(tmp, topic, name), 'w', encoding='utf-8', errors='surrogateescape') as f:
                f.write(h + '\n\n' + m + '\n---\n' + b)
            for fname, text in extra.items():
                with open(os.path.join(tmp, topic, fname), 'w', encoding='utf-8', errors='surrogateescape') as f:
                    f.write(text)
            results = []
            run = subprocess.run([sys.executable, __file__, tmp, placeholder, version],
                                 capture_output=True, text=True)
        finally:
            shutil.rmtree(tmp)
        out = run.stdout.split('\n')
        results = saved
        # a crash is no verdict either way
        if run.returncode not in (0, 1) or 'Traceback' in run.stderr:
            verdict(False, 'the rules run on a patch with %s (rc %d)' % (what, run.returncode),
                    run.stderr.strip().split('\n')[-3:])
            continue
        failed = [l for l in out if l.startswith('FAIL ') and rule in l]
        ran = [l for l in out if rule in l]
        if must_fail:
            verdict(bool(failed), 'the rules catch %s (FAIL "%s")' % (what, rule))
        else:
            verdict(bool(ran) and not failed, 'the rules leave alone %s (PASS "%s")' % (what, rule),
                    failed + [x for l in failed for x in out[out.index(l) + 1:out.index(l) + 3]
                              if x.startswith('    ')])


if selftest:
    rules_bite()
else:
    check(patches)
sys.exit(0 if all(results) else 1)
