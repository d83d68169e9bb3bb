#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""validate_plugin VALIDATOR PLUGIN: runs the validator on the plugin (with the
environment meson test sets, e.g. VACC_DEVICE_COUNT) and checks that it exits
with 0 and reports "0 errors" with every phase run."""
import os
import subprocess
import sys


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    validator, plugin = sys.argv[1:]
    run = subprocess.run([validator, plugin], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=280)
    print(run.stdout)
    problems = []
    if run.returncode != 0:
        problems.append(f"exit status {run.returncode}, expected 0")
    lines = run.stdout.splitlines()
    if not any(line.startswith("0 errors") for line in lines):
        problems.append('no "0 errors" line in the report')
    phases = next((line for line in lines if line.startswith("phases:")), "")
    for phase in ("file", "symbols", "registration", "runtime"):
        if f"{phase} pass" not in phases:
            problems.append(f'phase "{phase}" did not pass: {phases!r}')
    # The runtime phase drives every device the plugin reports.
    count = os.environ.get("VACC_DEVICE_COUNT")
    if count and f"on {count} of {count} devices" not in run.stdout:
        problems.append(f"the runtime phase did not use {count} device(s)")
    for p in problems:
        print("FAIL:", p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
