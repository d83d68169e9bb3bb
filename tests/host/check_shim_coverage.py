#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_shim_coverage.py NM PLUGIN SHIMS_DIR: the test plugin calls every
hand-implemented shim.

The hand-implemented shims are the functions marked
TFP_SHIM_IMPLEMENTED(name) in SHIMS_DIR/*.cc (the rest of the C API is
generated "unimplemented" stubs). Each must be imported by the test plugin
(an undefined dynamic symbol of PLUGIN, read with NM), i.e. called from one
of its kernels, kernel constructions, shape functions or TF_InitKernel, where
test_plugin.c checks the result. Fails listing every implemented shim the
plugin does not import, except those in ALLOWLIST, and fails on allowlist
entries that are stale (imported after all, or no longer implemented).
"""
import glob
import os
import re
import subprocess
import sys

# name -> one-line reason why the test plugin cannot call it. Keep it short:
# a shim that is missing here and not imported is a gap in test_plugin.c.
# (Functions TensorFlow 2.21 no longer exports are declared in test_plugin.c
# as a plugin built for an older release has them; TSL_* are 2.21 API.)
ALLOWLIST = {
}

MARKER = re.compile(r'\bTFP_SHIM_IMPLEMENTED\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)')


def implemented(shims_dir):
    sources = sorted(glob.glob(os.path.join(shims_dir, '*.cc')))
    names = {}
    for path in sources:
        with open(path, encoding='utf-8') as f:
            text = f.read()
        # The macro's own definition (shim_internal.h) is a header: not read.
        for m in MARKER.finditer(text):
            names.setdefault(m.group(1), os.path.basename(path))
    return sources, names


def imported(nm, plugin):
    out = subprocess.run([nm, '-D', '--undefined-only', plugin], check=True, capture_output=True,
                         text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[-2] in ('U', 'w', 'v'):
            names.add(parts[-1].split('@')[0])
    return names


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[0])
        return 2
    nm, plugin, shims_dir = sys.argv[1:]
    sources, impl = implemented(shims_dir)
    if not sources or not impl:
        print(f'no TFP_SHIM_IMPLEMENTED markers found in {shims_dir}/*.cc: wrong directory?')
        return 1
    imports = imported(nm, plugin)
    if not any(name.startswith('TF_') for name in imports):
        print(f'{plugin} imports no TF_ function: not the test plugin, or nm failed?')
        return 1

    failed = False
    missing = sorted(n for n in impl if n not in imports and n not in ALLOWLIST)
    if missing:
        failed = True
        print(f'{len(missing)} hand-implemented shim(s) the test plugin ({os.path.basename(plugin)}) never calls;')
        print('call each from a kernel in tests/host/test_plugin.c and check its result there:')
        for n in missing:
            print(f'  {n}  ({impl[n]})')
    for n, reason in sorted(ALLOWLIST.items()):
        if n not in impl:
            failed = True
            print(f'stale allowlist entry {n}: no longer marked TFP_SHIM_IMPLEMENTED ({reason})')
        elif n in imports:
            failed = True
            print(f'stale allowlist entry {n}: the test plugin imports it now ({reason})')

    covered = sum(1 for n in impl if n in imports)
    print(f'{covered} of {len(impl)} hand-implemented shims imported by the test plugin'
          + (f', {len(ALLOWLIST)} allowlisted:' if ALLOWLIST else ''))
    for n, reason in sorted(ALLOWLIST.items()):
        print(f'  {n}: {reason}')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
