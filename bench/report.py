#!/usr/bin/env python3
"""Turn one guest run into a verdict.

Reads RUNDIR/results (TAP from guest tests, KTAP from KUnit, the guest's exit
status) and RUNDIR/console.log, prints one line per test, quotes every kernel
report found in the console, and ends with 'N passed, N failed, N skipped'.
Exit status 1 when anything failed or nothing ran.
"""
import argparse
import os
import re
import sys

# Kernel reports that fail a run wherever they appear in the console.
REPORTS = [
    (r"kernel BUG at|BUG: |Oops: |general protection fault", "BUG/Oops"),
    (r"WARNING: CPU: \d+ PID: \d+|WARNING: at ", "WARNING"),
    (r"BUG: KASAN|KASAN: ", "KASAN"),
    (r"UBSAN: ", "UBSAN"),
    (r"possible circular locking dependency|inconsistent lock state|"
     r"possible recursive locking|suspicious RCU usage|"
     r"WARNING: bad unlock balance|held lock freed|"
     r"possible irq lock inversion", "lockdep"),
    (r"unreferenced object 0x", "kmemleak"),
    (r"Kernel panic - not syncing", "panic"),
    (r"INFO: task .* blocked for more than", "hung task"),
]
REPORT_RE = re.compile("|".join(f"(?:{p})" for p, _ in REPORTS))
END_RE = re.compile(r"---\[ end trace|^={20,}$|^-{20,}$")
TS_RE = re.compile(r"^\[\s*\d+\.\d+\]\s?")

TAP_RE = re.compile(r"^(not ok|ok)\b\s*(\d+)?\s*(?:-\s*)?([^#]*?)\s*(?:#\s*(SKIP|TODO)\b\s*(.*))?$",
                    re.IGNORECASE)
KTAP_RE = re.compile(r"^(\s*)(not ok|ok) (\d+) ([^#]*?)\s*(?:#\s*(SKIP)\b\s*(.*))?$")


class Tally:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0
        self.failures = []
        self.durations = []

    def add(self, verdict, name, detail=""):
        line = f"{verdict:4} {name}" + (f"  ({detail})" if detail else "")
        print(line)
        if verdict == "PASS":
            self.passed += 1
        elif verdict == "SKIP":
            self.skipped += 1
        else:
            self.failed += 1
            self.failures.append(name)


def strip_ts(line):
    return TS_RE.sub("", line.rstrip("\n"))


def scan_console(path):
    """Return a list of (kind, quoted lines) for every report in the log."""
    try:
        with open(path, errors="replace") as f:
            lines = [strip_ts(l) for l in f]
    except OSError:
        return []
    found, i = [], 0
    while i < len(lines):
        m = REPORT_RE.search(lines[i])
        if not m:
            i += 1
            continue
        kind = next(k for p, k in REPORTS if re.search(p, lines[i]))
        quote = [lines[i]]
        j = i + 1
        while j < len(lines) and len(quote) < 40:
            quote.append(lines[j])
            if END_RE.search(lines[j]) and j > i + 1:
                break
            j += 1
        found.append((kind, quote))
        i = j + 1
    return found


def parse_tap(tally, group, name, path, rcfile, errfile):
    prefix = f"{group}/{name}"
    rc, elapsed, limit = 0, 0, 0
    try:
        with open(rcfile) as f:
            rc, elapsed, limit = (int(x) for x in f.read().split()[:3])
    except (OSError, ValueError):
        tally.add("FAIL", prefix, "did not finish: no exit status")
        return
    tally.durations.append((elapsed, prefix))
    points = 0
    failed_points = 0
    with open(path, errors="replace") as f:
        for line in f:
            m = TAP_RE.match(line.strip())
            if not m:
                continue
            points += 1
            status, _, desc, directive, reason = m.groups()
            desc = desc.strip() or f"#{points}"
            full = f"{prefix}: {desc}"
            if directive and directive.upper() == "SKIP":
                tally.add("SKIP", full, reason.strip() or "no reason given")
            elif status.lower() == "ok":
                tally.add("PASS", full)
            else:
                failed_points += 1
                tally.add("FAIL", full)
    if rc in (124, 137):
        tally.add("FAIL", prefix, f"timed out after {limit}s, killed")
    elif rc != 0 and failed_points == 0:
        err = ""
        try:
            with open(errfile, errors="replace") as f:
                err = f.read().strip().splitlines()[-1:]
                err = err[0] if err else ""
        except OSError:
            pass
        tally.add("FAIL", prefix, f"exit status {rc}" + (f": {err}" if err else ""))
    elif points == 0:
        tally.add("FAIL", prefix, "printed no test result")


def parse_ktap(tally, path):
    suite = os.path.basename(path).rsplit(".", 1)[0]
    cases = 0
    with open(path, errors="replace") as f:
        lines = f.readlines()
    # Test cases are the indented result lines; the suite line is not.
    for line in lines:
        m = KTAP_RE.match(line.rstrip("\n"))
        if not m or not m.group(1):
            continue
        cases += 1
        _, status, _, desc, skip, reason = m.groups()
        full = f"kunit/{suite}: {desc.strip()}"
        if skip:
            tally.add("SKIP", full, (reason or "").strip() or "skipped")
        elif status == "ok":
            tally.add("PASS", full)
        else:
            tally.add("FAIL", full)
    if cases == 0:
        tally.add("FAIL", f"kunit/{suite}", "no test case results")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--boot-rc", type=int, required=True)
    ap.add_argument("--expect-tests", action="store_true",
                    help="fail when the run executed no test")
    ap.add_argument("--timing", nargs=3, type=int, metavar=("BUILD", "GUEST", "TOTAL"),
                    help="seconds to build and stage, in the guest, in all")
    args = ap.parse_args()
    res = os.path.join(args.run, "results")
    tally = Tally()

    boot = {0: None, 1: "guest main script reported failure",
            2: "guest powered off early without reporting its status",
            3: "guest hung and was killed at the hard timeout"}.get(args.boot_rc, f"qemu runner failed ({args.boot_rc})")
    tally.add("FAIL" if boot else "PASS", "bench/boot: guest booted, ran and reported its status", boot or "")

    kdir = os.path.join(res, "kunit")
    if os.path.isdir(kdir):
        for fn in sorted(os.listdir(kdir)):
            p = os.path.join(kdir, fn)
            if fn.endswith(".ktap"):
                parse_ktap(tally, p)
            elif fn.endswith(".load-error"):
                tally.add("FAIL", f"kunit/{fn[:-11]}", "module did not load")

    tdir = os.path.join(res, "tests")
    if os.path.isdir(tdir):
        for group in sorted(os.listdir(tdir)):
            gdir = os.path.join(tdir, group)
            for fn in sorted(os.listdir(gdir)):
                if not fn.endswith(".tap"):
                    continue
                name = fn[:-4]
                parse_tap(tally, group, name, os.path.join(gdir, fn),
                          os.path.join(gdir, name + ".rc"),
                          os.path.join(gdir, name + ".err"))

    lanes = os.path.join(res, "lanes")
    if os.path.exists(lanes):
        with open(lanes) as f:
            gone = [l for l in f.read().split()
                    if not os.path.exists(os.path.join(res, "lane." + l))]
        tally.add("FAIL" if gone else "PASS", "bench/lanes: every lane of guest tests ran to its end",
                  "lane(s) that did not: " + ", ".join(gone) if gone else "")

    reports = scan_console(os.path.join(args.run, "console.log"))
    if reports:
        for kind, quote in reports:
            print(f"---- kernel report ({kind}) in console.log:")
            for q in quote:
                print(f"    | {q}")
        kinds = sorted({k for k, _ in reports})
        tally.add("FAIL", "bench/console: no kernel report in the console",
                  f"{len(reports)} report(s): {', '.join(kinds)}")
    else:
        tally.add("PASS", "bench/console: no kernel report in the console")

    ran = tally.passed + tally.failed + tally.skipped
    if args.expect_tests and ran <= 2:
        tally.add("FAIL", "bench/tests: at least one test ran", "no test executed")

    if tally.failures:
        print("failed:")
        for f in tally.failures:
            print(f"  {f}")
    print(f"console log: {os.path.join(args.run, 'console.log')}")
    if args.timing:
        build, guest, total = args.timing
        print(f"timing: build and staging {build} s, guest {guest} s (boot to power-off), "
              f"{total} s in all")
        if tally.durations:
            print("slowest tests:")
            for secs, name in sorted(tally.durations, reverse=True)[:10]:
                print(f"  {secs:5d} s  {name}")
    print(f"{tally.passed} passed, {tally.failed} failed, {tally.skipped} skipped")
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
