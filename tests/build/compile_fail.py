#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Negative compile test: a false TFP_STATIC_ASSERT (or what --variant names)
must stop compilation.

Usage: compile_fail.py --lang c|cpp --std STD -I DIR [-I DIR...]
                       [--variant DEFINE=TEXT...] SOURCE -- COMPILER...

SOURCE must compile cleanly as is (the control, so an unrelated error cannot
pass for the expected one); each variant (default: the TFP_FAIL_* of
static_assert_fail.c) must fail, and the compiler's output must contain its
TEXT (the failed assertion's name, the offending type, ...).
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
    cmd += [f"-std={args.std}"] + [f"-I{d}" for d in args.include] + STRICT
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
    parser.add_argument("-I", dest="include", action="append", required=True)
    parser.add_argument("--variant", action="append", default=[],
                        help="DEFINE=TEXT: a failing variant and what its error names")
    parser.add_argument("source")
    args = parser.parse_args(argv[:split])
    compiler = argv[split + 1:]

    code, output, cmd = compile_source(args, compiler)
    if code != 0:
        print(f"FAIL control compile should succeed:\n  {cmd}\n{output}")
        return 1

    variants = dict(v.split("=", 1) for v in args.variant) or VARIANTS
    failed = 0
    for define, expected in variants.items():
        code, output, cmd = compile_source(args, compiler, define)
        if code == 0:
            print(f"FAIL {define}: compiled, but must not:\n  {cmd}")
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
