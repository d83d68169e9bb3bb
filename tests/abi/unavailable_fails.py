#!/usr/bin/env python3
"""Using a function the release declares but does not export must not compile.

usage: unavailable_fails.py RELEASE SOURCE.c -- CC [ARGS...]

SOURCE takes the address of every such function (tools/gen_abi_test.py
unavailable). The compile must fail with one diagnostic per function that
names the function and the release; a source with no such function must
compile cleanly.
"""
import re
import subprocess
import sys


def main():
    sep = sys.argv.index("--")
    release, source = sys.argv[1:sep]
    cmd = sys.argv[sep + 1:]
    text = open(source).read()
    expected = set(re.findall(r"\(void\)&(\w+);", text))
    r = subprocess.run(cmd + ["-fsyntax-only", source], capture_output=True, text=True)
    if not expected:
        if r.returncode != 0:
            print(f"tf{release}: nothing is unavailable, yet the file failed:\n{r.stderr}")
            return 1
        print(f"tf{release}: every declared import is exported; nothing to reject")
        return 0
    named = set(re.findall(rf"(\w+) is not exported by TensorFlow {re.escape(release)}\b", r.stderr))
    missing = sorted(expected - named)
    if r.returncode == 0 or missing:
        print(f"tf{release}: compile {'succeeded' if r.returncode == 0 else 'failed'}, "
              f"but these uses were not rejected with a message naming the release: {missing}")
        return 1
    print(f"tf{release}: all {len(expected)} unexported functions rejected at compile time, "
          f"e.g. {sorted(named)[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
