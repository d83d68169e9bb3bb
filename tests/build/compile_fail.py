#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Negative compile test: a false TFP_STATIC_ASSERT must stop compilation.

Usage: compile_fail.py --lang c|cpp --std STD -I DIR SOURCE -- COMPILER...

SOURCE must compile cleanly as is (the control, so an unrelated error cannot
pass for the expected one); each TFP_FAIL_* variant must fail, and the
compiler's output must name the failed assertion.
"""

import argparse
import subprocess
import sys

# define -> text the diagnostic must contain (case-insensitive).
VARIANTS = {
    "TFP_FAIL_FILE_SCOPE": "tfp_false_at_file_scope",
    "TFP_FAIL_BLOCK_SCOPE": "tfp_false_at_block_scope",
    "TFP_FAIL_ASSERT_OFFSET": "assert_offset",
}

STRICT = ["-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only"]


def compile_source(args, compiler, define=None):
    cmd = list(compiler)
    if args.lang == "cpp":
        cmd += ["-x", "c++"]  # the source is C; the C++ matrix entries compile it as C++
    cmd += [f"-std={args.std}", "-I", args.include] + STRICT
    if define:
        cmd.append(f"-D{define}")
    cmd.append(args.source)
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout + proc.stderr, " ".join(cmd)


def main(argv):
    if "--" not in argv:
        print(__doc__.strip())
        return 2
    split = argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("--lang", choices=["c", "cpp"], required=True)
    parser.add_argument("--std", required=True)
    parser.add_argument("-I", dest="include", required=True)
    parser.add_argument("source")
    args = parser.parse_args(argv[:split])
    compiler = argv[split + 1:]

    code, output, cmd = compile_source(args, compiler)
    if code != 0:
        print(f"FAIL control compile should succeed:\n  {cmd}\n{output}")
        return 1

    failed = 0
    for define, expected in VARIANTS.items():
        code, output, cmd = compile_source(args, compiler, define)
        if code == 0:
            print(f"FAIL {define}: compiled, but a false assertion must not:\n  {cmd}")
            failed += 1
        elif expected.lower() not in output.lower():
            print(f"FAIL {define}: failed, but the error does not name '{expected}':\n"
                  f"  {cmd}\n{output}")
            failed += 1
        else:
            print(f"ok   {define}: rejected as expected")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
