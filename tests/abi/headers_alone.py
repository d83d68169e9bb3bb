#!/usr/bin/env python3
"""Every header of one include root compiles on its own, in every standard.

usage: headers_alone.py ROOT COMMON_INCLUDE --cc CC... --cxx CXX...

Self-containment: a plugin may include any one header first. Each header of
the root, and each of the SDK's own headers beside the roots
(COMMON_INCLUDE/tfplugin/*.h, some of which include the root's), is
compiled alone (-fsyntax-only) as C99, C11, C++11, C++17 and C++20 with
-Wall -Wextra -Werror -pedantic; every failure is printed with the compiler's
first error line.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys

STANDARDS = [("c", "c99"), ("c", "c11"), ("c++", "c++11"), ("c++", "c++17"), ("c++", "c++20")]
WARN = ["-Wall", "-Wextra", "-Werror", "-pedantic"]


def headers(root):
    for dirpath, _, names in os.walk(root):
        for n in names:
            if n.endswith(".h"):
                yield os.path.relpath(os.path.join(dirpath, n), root)


def compile_one(cmd, header, lang):
    src = f'#include "{header}"\nint tfp_header_alone_marker;\n'
    r = subprocess.run(cmd + ["-x", lang, "-fsyntax-only", "-"], input=src, text=True,
                       capture_output=True)
    return r.returncode, r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("common")
    ap.add_argument("--cc", nargs="+", required=True)
    ap.add_argument("--cxx", nargs="+", required=True)
    a = ap.parse_args()
    jobs = []
    sdk_dir = os.path.join(a.common, "tfplugin")
    sdk_headers = sorted(os.path.join("tfplugin", n) for n in os.listdir(sdk_dir)
                         if n.endswith(".h"))
    for h in sorted(headers(a.root)) + sdk_headers:
        for lang, std in STANDARDS:
            base = a.cc if lang == "c" else a.cxx
            cmd = base + [f"-std={std}"] + WARN + ["-I", a.root, "-I", a.common]
            jobs.append((h, std, lang, cmd))
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = pool.map(lambda j: (j, compile_one(j[3], j[0], j[2])), jobs)
        for (h, std, _, _), (rc, err) in results:
            if rc != 0:
                failures += 1
                first = next((l for l in err.splitlines() if "error" in l), err.strip()[:200])
                print(f"FAIL {h} as {std}: {first}")
    print(f"{os.path.basename(a.root)}: {len(jobs)} header/standard compiles, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
