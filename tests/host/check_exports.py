#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_exports.py NM MODULE NAME...: the module's dynamic symbol table
defines exactly NAME... (besides what the toolchain adds: _init, _fini,
__bss_start and the like, and sanitizer runtime hooks)."""
import subprocess
import sys


def main():
    nm, module, expected = sys.argv[1], sys.argv[2], set(sys.argv[3:])
    out = subprocess.run([nm, '-D', '--defined-only', module], check=True,
                         capture_output=True, text=True).stdout
    defined = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        name = parts[2].split('@')[0]
        if name in ('_init', '_fini', '_edata', '_end', '__bss_start') or name.startswith('__'):
            continue
        defined.add(name)
    missing, extra = sorted(expected - defined), sorted(defined - expected)
    if missing:
        print('not exported:', ' '.join(missing))
    if extra:
        print('exported but should be hidden:', ' '.join(extra))
    if missing or extra:
        return 1
    print('exports:', ' '.join(sorted(defined)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
