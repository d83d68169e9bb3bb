#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Summarize a meson testlog.json; the last line is always `N passed, N failed, N skipped`.

Usage: test_summary.py BUILD_DIR/meson-logs/testlog.json

Exit status: 1 if any test failed or no test ran at all, else 0. This is the
exit status of `./dev test`, so CI sees one clear verdict.
"""

import json
import sys

PASSED = {"OK", "EXPECTEDFAIL"}
SKIPPED = {"SKIP"}
# Everything else (FAIL, TIMEOUT, ERROR, UNEXPECTEDPASS, unknown) is a failure:
# a result we do not understand must not turn CI green.


def outcome(result):
    if result in PASSED:
        return "passed"
    if result in SKIPPED:
        return "skipped"
    return "failed"


def skip_reason(stdout):
    """Why a test skipped: tests print `skipped: <reason>` before exiting 77."""
    lines = [line.strip() for line in (stdout or "").splitlines() if line.strip()]
    for line in reversed(lines):
        for prefix in ("skipped:", "SKIP:"):
            if line.startswith(prefix):
                return line[len(prefix):].strip()
    return lines[-1] if lines else "no reason given"


def suites_and_name(entry):
    """([suite, ...], test name) of one log entry.

    Newer logs may carry a `suite` list; meson 1.0 folds suites into the name as
    `project:suite1+suite2 / test` (only when the project has several suites).
    The project part is noise here.
    """
    name = entry.get("name", "?")
    suites = entry.get("suite")
    if " / " in name:
        prefix, name = name.split(" / ", 1)
        suites = suites or prefix.split(":", 1)[-1].split("+")
    if isinstance(suites, str):
        suites = [suites]
    return [s.split(":", 1)[-1] for s in suites or ["(none)"]], name


def read_log(path):
    """One JSON object per line. A line we cannot parse counts as a failed test."""
    entries = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                entries.append(json.loads(line))
            except json.JSONDecodeError:
                entries.append({"name": f"<{path} line {number}: not JSON>", "result": "ERROR"})
    return entries


def describe(entry):
    """One line for a test whose result is not OK."""
    result = entry.get("result", "ERROR")
    suites, test = suites_and_name(entry)
    name = f"{'+'.join(suites)} / {test}"
    if result == "SKIP":
        return f"SKIP     {name}: {skip_reason(entry.get('stdout'))}"
    detail = []
    if entry.get("returncode") not in (None, 0):
        detail.append(f"exit {entry['returncode']}")
    if entry.get("duration") is not None:
        detail.append(f"{entry['duration']:.2f}s")
    suffix = f" ({', '.join(detail)})" if detail else ""
    return f"{result:<8} {name}{suffix}"


def summarize(entries, out):
    totals = {"passed": 0, "failed": 0, "skipped": 0}
    per_suite = {}
    for entry in entries:
        kind = outcome(entry.get("result", "ERROR"))
        totals[kind] += 1
        # A test in several suites counts once in each suite's row.
        for suite in suites_and_name(entry)[0]:
            per_suite.setdefault(suite, {"passed": 0, "failed": 0, "skipped": 0})[kind] += 1
        if entry.get("result") != "OK":
            print(describe(entry), file=out)

    if per_suite:
        width = max(len("suite"), *(len(s) for s in per_suite))
        print(f"\n{'suite':<{width}}  passed  failed  skipped", file=out)
        for suite in sorted(per_suite):
            c = per_suite[suite]
            print(f"{suite:<{width}}  {c['passed']:>6}  {c['failed']:>6}  {c['skipped']:>7}", file=out)
    else:
        print("error: no tests ran; the test log is empty or missing", file=out)

    print(f"{totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped",
          file=out)
    return 1 if totals["failed"] or not entries else 0


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        entries = read_log(argv[1])
    except OSError as e:
        print(f"error: cannot read {argv[1]}: {e.strerror}")
        entries = []
    return summarize(entries, sys.stdout)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
