#!/usr/bin/env python3
"""What goes where in a patch mail, checked on patches/ (run by
bench/lint-patches.sh; prints PASS/FAIL lines, exits 1 on a failure).

    patch-rules.py PATCHES_DIR PLACEHOLDER_AUTHOR SOURCE_VERSION

Per patch:
  identity   From: is the placeholder author, and no Signed-off-by (or any
             other *-by: trailer) or personal address is stored: make series
             adds the sender's.
  below ---  test tallies, run logs, how it was tested and machine timings
             are below the --- (the notes), not in the commit message.
  stable     Cc: stable only together with Fixes:; in a fixes-only topic,
             every patch has Fixes:.
  lab words  the message, the notes and the comments and documentation the
             patch adds do not talk about this lab (seeds, lk45, the bench,
             make check, our benchmark, issue numbers).
  date       Date: is set, parses, is not in the future.
  ACPICA     a patch to drivers/acpi/acpica/ says below its --- that it
             goes through ACPICA upstream first.
Per topic:
  dates      not one Date: for the whole series.
  prefix     a networking topic's subject prefix: PATCH net for its fixes
             (fixes-only), PATCH net-next for the rest.
  letter     the cover letter (or a one-patch topic's notes) names the base
             (Debian linux-source-6.12 SOURCE_VERSION) and says whether the
             patches apply to mainline, with no TODO left; one for an ACPICA
             patch says it goes through ACPICA upstream; no lab words.
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
# how it was tested, tallies, logs, timings: below the ---
TESTED = [
    (r'^\s*tested\b', 'a "Tested" line'),
    (r'\btested (in|on|with|under|by)\b', '"tested in/on/with"'),
    (r'\b\d[\d,]*\s+(tests?\s+)?(passed|failed|passes|failures|skipped)\b', 'a pass/fail count'),
    (r'\b(passed|failed|skipped)\s*[:=]\s*\d', 'a pass/fail count'),
    (r'\bmake\s+(check|build|series|lint-patches|stock-check|[a-z]+-(bench|fuzz|tdc))\b',
     'a make target of the test setup'),
    (r'\bran\b[^.]{0,60}\btimes\b', '"ran ... times"'),
    (r'\b\d[\d,]*\s+(runs|rounds|boots)\b', 'a run count'),
    (r'\bmedian of\b', 'a measurement ("median of")'),
    (r'-?\bicount\b', 'a measurement under QEMU -icount'),
    (r'\bmeasured\b', 'a measurement'),
    (r'\bbenchmark', 'a benchmark'),
    (r'\b(in|under|on) QEMU\b|\bQEMU guest\b|\bTCG\b', 'where it was tested (QEMU)'),
    (r'\bwith KASAN\b|\bkmemleak on\b', 'the test kernel\'s debug options'),
    (r'\bW=1 build\b', 'a build log'),
    (r'\b\d+(\.\d+)?\s*(ms|msecs?|usecs?|seconds?|minutes?)\b', 'a timing'),
    (r'\b\d[\d,]*\s+(guest\s+)?instructions\b', 'an instruction count'),
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
BY = re.compile(r'^[A-Za-z-]+-by:\s', re.M)
ADDR = re.compile(r'[\w.+-]+@[\w-]+(\.[\w-]+)+')
LIST_ADDR = re.compile(r'@(vger\.kernel\.org|lists\.linux\.dev|lists\.infradead\.org)$')


def hits(patterns, text):
    out = []
    for pat, what in patterns:
        for m in re.finditer(pat, text, I):
            line = text[text.rfind('\n', 0, m.start()) + 1:text.find('\n', m.end()) % (len(text) + 1)]
            if '%s: %s' % (what, line.strip()) not in out:
                out.append('%s: %s' % (what, line.strip()))
    return out


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
    for n in names:
        name = '%s/%s' % (topic, n)
        h, msg, notes, added, files = parse(os.path.join(tdir, n))
        all_notes.append(notes)
        # identity
        bad = []
        if h.get('From') != [placeholder]:
            bad.append('From: %s (want %s)' % (h.get('From'), placeholder))
        for part, text in (('message', msg), ('notes', notes)):
            bad += ['%s: %s' % (part, m.group(0).strip()) for m in BY.finditer(text)]
            bad += ['%s: address %s' % (part, a.group(0)) for a in ADDR.finditer(text)
                    if not LIST_ADDR.search(a.group(0))]
        verdict(not bad, '%s: no identity stored (placeholder author, no sign-off or address)' % name, bad)
        # how it was tested: below the ---
        bad = hits(TESTED, msg)
        verdict(not bad, '%s: test tallies, logs and how it was tested only below the ---' % name, bad)
        # stable
        has_fixes = re.search(r'^Fixes: [0-9a-f]{12,} \(".*"\)$', msg, re.M)
        has_stable = re.search(r'^Cc:.*\bstable@(vger\.)?kernel\.org', msg, re.M | re.I)
        bad = []
        if has_stable and not has_fixes:
            bad.append('Cc: stable without Fixes:')
        if fixes_only and not has_fixes:
            bad.append('no Fixes: in the fixes-only topic %s' % topic)
        verdict(not bad, '%s: Cc: stable only with Fixes:%s' % (name, ', a fix in a fixes topic' if fixes_only else ''), bad)
        # lab words
        bad = ['message: ' + x for x in hits(LAB, msg)] + ['notes: ' + x for x in hits(LAB, notes)] + \
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
        verdict(ok, '%s: Date: %s, when it was written, not in the future' % (name, d or '(none)'))
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
    pf = os.path.join(tdir, 'subject-prefix')
    prefix = read(pf).split('\n')[0].strip() if os.path.exists(pf) else 'PATCH'
    if net:
        want = 'PATCH net' if fixes_only else 'PATCH net-next'
        verdict(prefix == want, '%s: subject prefix [%s] (networking %s: [%s])'
                % (topic, prefix, 'fixes' if fixes_only else 'features', want))
    cl = os.path.join(tdir, 'cover-letter')
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

now = time.time()


def rules_bite():
    """Each rule fails on a patch made to break it (a copy, in a temporary
    directory): the checks above are not vacuous."""
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
    cases = [
        ('a Signed-off-by stored', 'no identity stored',
         head, base + '\n\nSigned-off-by: Jane Doe <jane@kernel-dev.org>'),
        ('a person as the author', 'no identity stored',
         head.replace('From: ' + placeholder, 'From: Jane Doe <jane@kernel-dev.org>'), base),
        ('"Tested: 1234 passed, 0 failed" above the ---', 'only below the ---',
         head, base + '\n\nTested: 1234 passed, 0 failed.'),
        ('"make check printed ..." above the ---', 'only below the ---',
         head, base + '\n\nmake check printed no failure.'),
        ('a timing above the ---', 'only below the ---',
         head, base + '\n\nAn upload now takes 12 ms instead of 3 seconds.'),
        ('Cc: stable without Fixes:', 'Cc: stable only with Fixes:',
         head, base + '\n\nCc: stable@vger.kernel.org'),
        ('a seed number', 'no lab words', head, base + '\n\nThis is what seed 004 asked for.'),
        ('lk45', 'no lab words', head, base + '\n\nFound by the lk45 test suite.'),
        ('an issue number', 'no lab words', head, base + '\n\nSee issue #42.'),
        ('a date in the future', 'not in the future',
         re.sub(r'(?m)^Date: .*$', 'Date: Mon, 1 Jan 2103 00:00:00 +0000', head), base),
    ]
    saved = results
    for what, rule, h, m in cases:
        tmp = tempfile.mkdtemp()
        try:
            os.makedirs(os.path.join(tmp, topic))
            with open(os.path.join(tmp, 'series'), 'w') as f:
                f.write('%s %s\n' % (topic, ' '.join(paths)))
            with open(os.path.join(tmp, topic, name), 'w', encoding='utf-8', errors='surrogateescape') as f:
                f.write(h + '\n\n' + m + '\n---\n' + below)
            results = []
            out = subprocess.run([sys.executable, __file__, tmp, placeholder, version],
                                 capture_output=True, text=True).stdout
        finally:
            shutil.rmtree(tmp)
        caught = any(l.startswith('FAIL ') and rule in l for l in out.split('\n'))
        results = saved
        verdict(caught, 'the rules catch %s (FAIL "%s")' % (what, rule))


if selftest:
    rules_bite()
else:
    check(patches)
sys.exit(0 if all(results) else 1)
