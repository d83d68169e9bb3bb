#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""After `meson install`, vendors' Make, CMake and Meson builds find the right
include root through pkg-config.

  install_consumers.py BUILDDIR [--releases R ...] [--keep]

Stages `meson install -C BUILDDIR --destdir TMP`, checks the staged .pc files,
then builds tests/install/plugin.c with tests/install/consumers/{Makefile,
CMakeLists.txt,meson.build} for the oldest, a middle (2.16) and the newest
release (or --releases), dlopens each library (RTLD_NOW) and checks
tfp_built_for() and the exported entry points. One line per check; exit 1 if
any fails. Standard library only.
"""
import argparse
import ctypes
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))
CONSUMERS = os.path.join(HERE, 'consumers')
SE_HEADER = 'tensorflow/c/experimental/stream_executor/stream_executor.h'
ENTRY_POINTS = ('SE_InitPlugin', 'TF_InitKernel', 'tfp_built_for')
LIBNAME = 'libtfptest.so'
TOOLS = ('make', 'cmake', 'meson')


class Checks:
    def __init__(self):
        self.total = 0
        self.failed = 0

    def ok(self, what):
        self.total += 1
        print(f'ok   {what}', flush=True)
        return True

    def fail(self, what, detail=''):
        self.total += 1
        self.failed += 1
        print(f'FAIL {what}' + (f': {detail}' if detail else ''), flush=True)
        return False

    def check(self, cond, what, detail=''):
        return self.ok(what) if cond else self.fail(what, detail)


def run(cmd, env=None, cwd=None):
    """Run cmd; return (returncode, combined stdout+stderr)."""
    try:
        p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    except OSError as e:
        return 127, str(e)
    return p.returncode, p.stdout


def tail(text, n=12):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return '\n' + '\n'.join('     | ' + l for l in lines[-n:]) if lines else ' (no output)'


def list_releases():
    out = subprocess.run([sys.executable, os.path.join(SOURCE_ROOT, 'tools/abi_model.py'),
                          '--list-releases'], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    return out.split()


def build_dirs(builddir):
    """(prefix, includedir, datadir) of the build, as absolute paths."""
    with open(os.path.join(builddir, 'meson-info', 'intro-buildoptions.json')) as f:
        opts = {o['name']: o['value'] for o in json.load(f)}
    prefix = opts['prefix']
    return (prefix, os.path.join(prefix, opts['includedir']),
            os.path.join(prefix, opts['datadir']))


def staged(destdir, path):
    return os.path.join(destdir, os.path.relpath(path, '/'))


def include_dirs(cflags):
    dirs = []
    args = shlex.split(cflags)
    for i, a in enumerate(args):
        if a == '-I' and i + 1 < len(args):
            dirs.append(args[i + 1])
        elif a.startswith('-I'):
            dirs.append(a[2:])
    return dirs


def platform_size_line(pkg_config, env, rel):
    """The SP_PLATFORM_STRUCT_SIZE line of the stream_executor.h the compiler
    would pick for tfplugin-tf<rel> (first -I dir holding it), and that dir."""
    rc, out = run(pkg_config + ['--cflags', f'tfplugin-tf{rel}'], env=env)
    if rc != 0:
        return None, None, f'pkg-config failed:{tail(out)}'
    for d in include_dirs(out):
        header = os.path.join(d, SE_HEADER)
        if os.path.isfile(header):
            with open(header) as f:
                for line in f:
                    if re.match(r'\s*#\s*define\s+SP_PLATFORM_STRUCT_SIZE\b', line):
                        return line.strip(), d, ''
            return None, d, f'{header} has no SP_PLATFORM_STRUCT_SIZE'
    return None, None, f'no -I dir in {out.strip()!r} contains {SE_HEADER}'


def build(tool, rel, outdir, env):
    """Build the plugin with one consumer build; return (ok, library, log)."""
    os.makedirs(outdir)
    if tool == 'make':
        steps = [['make', '-s', '-C', outdir, '-f', os.path.join(CONSUMERS, 'Makefile'),
                  f'TF_RELEASE={rel}']]
    elif tool == 'cmake':
        steps = [['cmake', '-S', CONSUMERS, '-B', outdir, f'-DTF_RELEASE={rel}',
                  '-DCMAKE_BUILD_TYPE=Release'],
                 ['cmake', '--build', outdir]]
    else:
        steps = [['meson', 'setup', outdir, CONSUMERS, f'-Dtf_release={rel}'],
                 ['meson', 'compile', '-C', outdir]]
    log = ''
    for cmd in steps:
        rc, out = run(cmd, env=env)
        log += out
        if rc != 0:
            return False, None, f'`{shlex.join(cmd)}` exited {rc}:{tail(out)}'
    lib = os.path.join(outdir, LIBNAME)
    if not os.path.isfile(lib):
        return False, None, f'{LIBNAME} not produced in {outdir}'
    return True, lib, log


def nm_symbols(lib, which):
    rc, out = run(['nm', '-D', which, lib])
    if rc != 0:
        return None, out
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            syms[parts[-1].split('@')[0]] = parts[-2]
    return syms, ''


def check_library(c, label, lib, rel):
    try:
        handle = ctypes.CDLL(lib, mode=os.RTLD_NOW)
        fn = handle.tfp_built_for
        fn.restype = ctypes.c_char_p
        fn.argtypes = []
        got = fn().decode()
        c.check(got == rel, f'{label} dlopen(RTLD_NOW), tfp_built_for() == {rel!r}',
                f'returned {got!r}')
    except (OSError, AttributeError) as e:
        c.fail(f'{label} dlopen(RTLD_NOW), tfp_built_for() == {rel!r}', str(e))

    what = f'{label} nm -D exports {" ".join(ENTRY_POINTS)}, imports no TF_*/SE_*'
    defined, err = nm_symbols(lib, '--defined-only')
    undefined, err2 = nm_symbols(lib, '--undefined-only')
    if defined is None or undefined is None:
        c.fail(what, f'nm failed:{tail(err or err2)}')
        return
    missing = [s for s in ENTRY_POINTS if defined.get(s) != 'T']
    imported = sorted(s for s in undefined if s.startswith(('TF_', 'SE_', 'TFE_')))
    c.check(not missing and not imported, what,
            f'not exported as T: {missing}' if missing else f'imports {imported}')


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('builddir', help='configured tfplugin build directory')
    ap.add_argument('--releases', nargs='+', metavar='R',
                    help='releases to build the plugin for (default: oldest, 2.16, newest)')
    ap.add_argument('--keep', action='store_true', help='keep the temporary directory')
    args = ap.parse_args()
    builddir = os.path.abspath(args.builddir)

    # meson test stops a test on timeout with SIGTERM: turn it into SystemExit
    # so the finally below still removes the temporary directory.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))

    start = time.monotonic()
    c = Checks()
    tmp = tempfile.mkdtemp(prefix='tfplugin-install-')
    try:
        releases = list_releases()
        wanted = args.releases or list(dict.fromkeys(
            [releases[0], '2.16' if '2.16' in releases else releases[len(releases) // 2],
             releases[-1]]))
        prefix, includedir, datadir = build_dirs(builddir)

        destdir = os.path.join(tmp, 'stage')
        cmd = ['meson', 'install', '-C', builddir, '--no-rebuild', '--destdir', destdir, '--quiet']
        rc, out = run(cmd)
        if not c.check(rc == 0, f'`{shlex.join(cmd[:-3])} --destdir TMP --quiet`',
                       f'exited {rc}:{tail(out)}'):
            return 1

        pcdir = staged(destdir, os.path.join(datadir, 'pkgconfig'))
        expected = ['tfplugin.pc'] + [f'tfplugin-tf{r}.pc' for r in releases]
        present = set(os.listdir(pcdir)) if os.path.isdir(pcdir) else set()
        missing = [p for p in expected if p not in present]
        c.check(not missing,
                f'staged {os.path.relpath(pcdir, destdir)} has tfplugin.pc and a .pc for '
                f'each of the {len(releases)} releases ({releases[0]}..{releases[-1]})',
                f'missing {missing}')
        if not os.path.isdir(pcdir):
            return 1

        # Point pkg-config at the staged tree, and only at it (PKG_CONFIG_LIBDIR
        # replaces the system search path), so nothing installed on the machine
        # can satisfy a lookup.
        env = dict(os.environ, PKG_CONFIG_PATH=pcdir, PKG_CONFIG_LIBDIR=pcdir)
        env.pop('PKG_CONFIG_SYSROOT_DIR', None)
        pkg_config = ['pkg-config', '--define-prefix']
        # The .pc files say prefix=<real prefix>; staged, they must resolve under
        # DESTDIR. --define-prefix (pkgconf, and freedesktop pkg-config) derives
        # prefix from the .pc's own location (two levels above .../pkgconfig, so
        # share/pkgconfig works as well as lib/pkgconfig) and re-expands
        # includedir=${prefix}/include from it: the installed files are used
        # byte for byte, and a .pc that hard-coded a path instead of ${prefix}
        # would be caught. Not PKG_CONFIG_SYSROOT_DIR: which outputs get the
        # sysroot (and whether it is applied twice) differs between pkgconf
        # versions and freedesktop pkg-config, and it would mask such a
        # hard-coded path. All three consumers honour PKG_CONFIG with arguments
        # (our Makefile's $(PKG_CONFIG); CMake >= 3.22 splits $ENV{PKG_CONFIG}
        # into PKG_CONFIG_ARGN; Meson splits it like any tool variable), so one
        # setting covers them. If --define-prefix does not relocate here, fall
        # back to a copy of the .pc files with prefix= rewritten, which works
        # with any pkg-config and any consumer.
        want_prefix = staged(destdir, prefix)
        rc, out = run(pkg_config + ['--variable=prefix', f'tfplugin-tf{releases[-1]}'], env=env)
        if rc == 0 and os.path.realpath(out.strip()) == os.path.realpath(want_prefix):
            c.ok('pkg-config --define-prefix relocates prefix= into the staged tree')
        else:
            print(f'note pkg-config --define-prefix gave {out.strip()!r}, not {want_prefix!r}; '
                  'using copies of the .pc files with prefix= rewritten', flush=True)
            copy = os.path.join(tmp, 'pkgconfig')
            os.makedirs(copy)
            for name in os.listdir(pcdir):
                with open(os.path.join(pcdir, name)) as f:
                    text = f.read()
                with open(os.path.join(copy, name), 'w') as f:
                    f.write(re.sub(r'(?m)^prefix=.*$', lambda _: f'prefix={want_prefix}', text))
            env.update(PKG_CONFIG_PATH=copy, PKG_CONFIG_LIBDIR=copy)
            pkg_config = ['pkg-config']
        env['PKG_CONFIG'] = shlex.join(pkg_config)

        # Cheap proof the right root is picked: 2.9 added SP_Platform's
        # force_memory_growth, so only 2.9's struct size macro names it.
        staged_inc = staged(destdir, includedir)
        for rel, wants in (('2.9', True), ('2.8', False)):
            if rel not in releases:
                continue
            what = (f'pkg-config --cflags tfplugin-tf{rel}: {SE_HEADER} '
                    f'SP_PLATFORM_STRUCT_SIZE {"names" if wants else "does not name"} '
                    'force_memory_growth')
            line, d, err = platform_size_line(pkg_config, env, rel)
            if line is None:
                c.fail(what, err)
            elif not os.path.realpath(d).startswith(os.path.realpath(staged_inc) + os.sep):
                c.fail(what, f'header found in {d}, outside the staged {staged_inc}')
            else:
                c.check(('force_memory_growth' in line) == wants, what,
                        f'{os.path.relpath(d, destdir)}: {line}')

        for tool in TOOLS:
            for rel in wanted:
                label = f'{tool:5} tf{rel}'
                ok, lib, log = build(tool, rel, os.path.join(tmp, 'build', f'{tool}-{rel}'), env)
                if not c.check(ok, f'{label} build {LIBNAME} via pkg-config tfplugin-tf{rel}',
                               log):
                    continue
                check_library(c, label, lib, rel)
        # The example plugin, copied out of the tree as a vendor would, builds
        # unchanged against the installed SDK: the newest release by default
        # (tfplugin.pc's newest_tf_release), and an older one on request.
        # The second copy is renamed with the two commands the example's README
        # gives, proving `vacc` is the only prefix to change.
        vacc_src = os.path.join(tmp, 'vacc')
        shutil.copytree(os.path.join(SOURCE_ROOT, 'examples', 'vacc'), vacc_src)
        renamed = os.path.join(tmp, 'myaccel')
        shutil.copytree(vacc_src, renamed)
        rename = ('for f in $(find . -name "*vacc*"); do mv "$f" "${f//vacc/myaccel}"; done; '
                  'grep -rlI -e vacc -e VACC . | xargs sed -i "s/vacc/myaccel/g; s/VACC/MYACCEL/g"')
        rc, log = run(['bash', '-c', rename], cwd=renamed)
        c.check(rc == 0, 'rename the example: vacc -> myaccel', tail(log))
        # The example also needs the system's packages (Highway), so the
        # system's pkg-config folders come after the SDK's here.
        system_pc = subprocess.run(['pkg-config', '--variable', 'pc_path', 'pkg-config'],
                                   capture_output=True, text=True).stdout.strip()
        vacc_env = dict(env, PKG_CONFIG_LIBDIR=env['PKG_CONFIG_LIBDIR'] + ':' + system_pc)
        for rel, src, name in ((None, vacc_src, 'vacc'), ('2.7', renamed, 'myaccel')):
            label = f'{name} tf{rel or "newest"}'
            out = os.path.join(tmp, 'build', f'{name}-{rel or "newest"}')
            setup = ['meson', 'setup', out, src] + ([f'-Dtf_release={rel}'] if rel else [])
            rc, log = run(setup, env=vacc_env)
            if rc == 0:
                rc, log = run(['meson', 'compile', '-C', out], env=vacc_env)
            lib = os.path.join(out, f'lib{name}.so')
            if not c.check(rc == 0 and os.path.exists(lib),
                           f'{label} examples/vacc copy builds out of tree via pkg-config',
                           tail(log)):
                continue
            syms, err = nm_symbols(lib, '--defined-only')
            exported = sorted(syms or {})
            c.check(exported == ['SE_InitPlugin', 'TF_InitKernel', 'TF_InitProfiler'],
                    f'{label} lib{name}.so exports only SE_InitPlugin, TF_InitKernel and '
                    f'TF_InitProfiler',
                    err or f'exports {exported}')
    finally:
        if args.keep:
            print(f'note kept {tmp}')
        else:
            shutil.rmtree(tmp, ignore_errors=True)
        elapsed = time.monotonic() - start
        print(f'{"FAIL" if c.failed else "ok  "} {c.total - c.failed}/{c.total} checks passed '
              f'in {elapsed:.1f} s', flush=True)
    return 1 if c.failed else 0


if __name__ == '__main__':
    sys.exit(main())
