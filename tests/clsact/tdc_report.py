#!/usr/bin/env python3
"""Compare two tdc TAP outputs (ours, the tree's module) and print TAP.

usage: tdc_report.py OURS.tap TREE.tap EXPECTED.txt SELECTED.txt N_BEFORE

EXPECTED.txt lines: "<id> both|ours-only|skip|timing <reason>": tests that
fail with both modules for a reason that is not the qdisc's (reported as
skipped), that pass with ours only by design, that tdc skips (the
reason replaces tdc's own), or whose result depends on packets the test
does not send (reported as skipped with both results, left out of the pass
sets). Anything else that differs fails, and
so does a test of SELECTED.txt (one id per line) without a result in either
run: a tdc run that dies half-way must not pass.
"""
import re
import sys

LINE = re.compile(r'^(not )?ok \d+ (\S+) - (.*?)(?: # skipped - (.*))?$')


def parse(path):
    res, fail_msg, cur = {}, {}, None
    with open(path, errors='replace') as f:
        for line in f:
            m = LINE.match(line.rstrip('\n'))
            if m:
                state = 'fail' if m.group(1) else ('skip' if m.group(4) is not None else 'pass')
                cur = m.group(2)
                res[cur] = (state, m.group(3), m.group(4) or '')
                fail_msg[cur] = []
            elif cur and line.startswith('\t') and res[cur][0] == 'fail':
                fail_msg[cur].append(line.strip())
    return res, fail_msg


def main():
    ours, ours_msg = parse(sys.argv[1])
    tree, _ = parse(sys.argv[2])
    expected = {}
    with open(sys.argv[3]) as f:
        for line in f:
            if line.strip() and not line.startswith('#'):
                tid, kind, reason = line.rstrip('\n').split(None, 2)
                expected[tid] = (kind, reason)
    with open(sys.argv[4]) as f:
        selected = [line.strip() for line in f if line.strip()]
    n = int(sys.argv[5])
    failed = 0

    def out(ok, text):
        nonlocal n, failed
        n += 1
        print(('ok' if ok else 'not ok') + ' %d - %s' % (n, text))
        failed |= not ok

    count = {'ours': {}, 'tree': {}}
    for name, res in (('ours', ours), ('tree', tree)):
        for state, _, _ in res.values():
            count[name][state] = count[name].get(state, 0) + 1
    diffs = []
    for tid, (state, name, why) in ours.items():
        t_state = tree.get(tid, ('missing', '', ''))[0]
        exp = expected.get(tid)
        label = 'tdc %s %s' % (tid, name)
        if state == 'skip':
            n += 1
            print('ok %d - %s # SKIP %s' % (n, label, exp[1] if exp and exp[0] == 'skip' else why))
        elif exp and exp[0] == 'timing':
            n += 1
            print('ok %d - %s # SKIP ours %s, tree %s; depends on timing: %s'
                  % (n, label, state, t_state, exp[1]))
            diffs.append(tid)
        elif state == 'pass' and t_state == 'pass':
            out(True, label)
        elif state == 'fail' and t_state == 'fail' and exp and exp[0] == 'both':
            n += 1
            print('ok %d - %s # SKIP fails with both modules: %s' % (n, label, exp[1]))
        elif state == 'pass' and exp and exp[0] == 'ours-only':
            out(True, '%s (the tree module: %s; by design: %s)' % (label, t_state, exp[1]))
            diffs.append(tid)
        else:
            out(False, '%s: ours %s, tree %s' % (label, state, t_state))
            for m in ours_msg.get(tid, [])[:6]:
                print('# ' + m[:300])
    for name, res in (('ours', ours), ('the tree module', tree)):
        missing = [t for t in selected if t not in res]
        out(selected and not missing, 'all %d selected tdc tests have a result with %s'
            % (len(selected), name) + (' (missing %d: %s)' % (len(missing), ' '.join(missing[:20]))
                                      if missing else ''))
    p_ours = {t for t, r in ours.items() if r[0] == 'pass'} - set(diffs)
    p_tree = {t for t, r in tree.items() if r[0] == 'pass'} - set(
        t for t in diffs if expected[t][0] == 'timing')
    out(p_ours == p_tree, 'pass sets identical apart from %d explained extension or timing tests'
        % len(diffs)
        + ('' if p_ours == p_tree else ' (ours only: %s; tree only: %s)'
           % (' '.join(sorted(p_ours - p_tree)), ' '.join(sorted(p_tree - p_ours)))))
    for name in ('ours', 'tree'):
        c = count[name]
        print('# tdc with %s: %d passed, %d failed, %d skipped' % (
            'sch_clsact (ours)' if name == 'ours' else 'sch_ingress (tree)',
            c.get('pass', 0), c.get('fail', 0), c.get('skip', 0)))
    print('1..%d' % n)
    return 1 if failed else 0


sys.exit(main())
