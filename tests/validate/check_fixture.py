#!/usr/bin/env python3
"""Run validate_plugin on one fixture and check exactly what it reports.

  check_fixture.py VALIDATE_PLUGIN (--fixture PATH | --make KIND [--from SO])
                   --expect IDS --exit N [--tf R] [--timeout S] [--phases LIST]
                   [--env K=V]... [--text STR]... [--max-seconds S]

--expect is a comma-separated list of rule ids, or "none": the set of rule
ids of the errors and warnings in the JSON report must be exactly that.
Information findings (severity "info") count only if --expect names them:
then they must be there. Also checked: the exit status,
the JSON (an array; every finding complete, every {field} filled in), the
human report (a block per finding, the summary line matching the counts),
and any --text strings in the human report.

--make builds an input that is no plugin, in a temporary directory: see
MAKERS. Exit 77 (skipped) when a --make input cannot be made here (e.g. an
unreadable file when running as root).
"""

import argparse
import json
import os
import platform
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

SKIP = 77
EM_386, EM_X86_64, EM_PPC64, EM_AARCH64, EM_RISCV = 3, 62, 21, 183, 243
ET_DYN = 3


class Skip(Exception):
    pass


def elf_header(cls=2, data=1, machine=None, etype=ET_DYN, version=1, ident_version=1):
    """A bare ELF header: no program or section headers."""
    if machine is None:
        machine = native_machine()
    endian = "<" if data == 1 else ">"
    ident = b"\x7fELF" + bytes([cls, data, ident_version, 0]) + bytes(8)
    if cls == 2:
        rest = struct.pack(endian + "HHIQQQIHHHHHH", etype, machine, version, 0, 0, 0, 0,
                           64, 56, 0, 64, 0, 0)
    else:
        rest = struct.pack(endian + "HHIIIIIHHHHHH", etype, machine, version, 0, 0, 0, 0,
                           52, 32, 0, 40, 0, 0)
    return ident + rest


def native_machine():
    return {"x86_64": EM_X86_64, "aarch64": EM_AARCH64, "riscv64": EM_RISCV,
            "ppc64le": EM_PPC64}.get(platform.machine(), EM_X86_64)


def foreign_machine():
    """An architecture this machine is not: AArch64, or RISC-V on AArch64."""
    return EM_RISCV if native_machine() == EM_AARCH64 else EM_AARCH64


def write(path, data, mode="wb"):
    with open(path, mode) as f:
        f.write(data)
    return path


def need_from(args):
    if not args.from_:
        raise SystemExit("--make %s needs --from SO" % args.make)
    with open(args.from_, "rb") as f:
        return f.read()


def make_truncated(d, args):
    data = need_from(args)
    return write(os.path.join(d, "truncated.so"), data[:len(data) // 2])


def make_no_section_headers(d, args):
    """A copy with the section headers dropped from the ELF header (like sstrip)."""
    data = bytearray(need_from(args))
    struct.pack_into("<Q", data, 0x28, 0)   # e_shoff
    struct.pack_into("<H", data, 0x3c, 0)   # e_shnum
    struct.pack_into("<H", data, 0x3e, 0)   # e_shstrndx
    return write(os.path.join(d, "no_sections.so"), bytes(data))


def make_unreadable(d, _):
    if os.geteuid() == 0:
        raise Skip("running as root: file permissions do not stop root from reading")
    path = write(os.path.join(d, "unreadable.so"), b"\x7fELF")
    os.chmod(path, 0)
    return path


def make_fifo(d, _):
    path = os.path.join(d, "fifo.so")
    os.mkfifo(path)
    return path


def make_symlink_loop(d, _):
    path = os.path.join(d, "loop.so")
    os.symlink("loop.so", path)
    return path


MAKERS = {
    "missing": lambda d, a: os.path.join(d, "no-such-dir", "plugin.so"),
    "directory": lambda d, a: d,
    "devnull": lambda d, a: "/dev/null",
    "fifo": make_fifo,
    "symlink-loop": make_symlink_loop,
    "unreadable": make_unreadable,
    "empty": lambda d, a: write(os.path.join(d, "empty.so"), b""),
    "text": lambda d, a: write(os.path.join(d, "text.so"), b"this is not a plugin\n"),
    "linker-script": lambda d, a: write(
        os.path.join(d, "script.so"), b"/* GNU ld script */\nINPUT(libplugin.so.1)\n"),
    "pe": lambda d, a: write(os.path.join(d, "plugin.dll"), b"MZ\x90\x00" + bytes(60)),
    "truncated": make_truncated,
    "truncated-header": lambda d, a: write(os.path.join(d, "short.so"), need_from(a)[:40]),
    "truncated-magic": lambda d, a: write(os.path.join(d, "magic.so"), b"\x7fEL"),
    "foreign-arch": lambda d, a: write(
        os.path.join(d, "foreign.so"), elf_header(machine=foreign_machine())),
    "elf32": lambda d, a: write(os.path.join(d, "elf32.so"), elf_header(cls=1, machine=EM_386)),
    "big-endian": lambda d, a: write(
        os.path.join(d, "be.so"), elf_header(data=2, machine=EM_PPC64)),
    "bad-class": lambda d, a: write(os.path.join(d, "badclass.so"), elf_header(cls=7)),
    "bad-version": lambda d, a: write(os.path.join(d, "badver.so"), elf_header(version=9)),
    "header-only": lambda d, a: write(os.path.join(d, "header.so"), elf_header()),
    "no-section-headers": make_no_section_headers,
}

FINDING_KEYS = {"rule_id", "severity", "phase", "file", "subject", "message", "expected",
                "actual", "fix", "fields"}
LEFTOVER = re.compile(r"\{[a-z_]+\}")


def fail(msg, out=None):
    print("FAIL: " + msg, file=sys.stderr)
    if out is not None:
        print("---- validate_plugin output ----\n" + out, file=sys.stderr)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("validator")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--fixture")
    src.add_argument("--make", choices=sorted(MAKERS))
    ap.add_argument("--from", dest="from_")
    ap.add_argument("--expect", required=True)
    ap.add_argument("--exit", type=int, required=True)
    ap.add_argument("--tf")
    ap.add_argument("--timeout")
    ap.add_argument("--phases")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--text", action="append", default=[])
    ap.add_argument("--max-seconds", type=float, default=60)
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="tfp-validate-")
    try:
        try:
            path = args.fixture or MAKERS[args.make](tmp, args)
        except Skip as e:
            print(f"SKIP: {e}")
            return SKIP
        json_path = os.path.join(tmp, "report.json")
        cmd = [args.validator, "--json", json_path]
        if args.tf:
            cmd += ["--tf", args.tf]
        if args.timeout:
            cmd += ["--timeout", args.timeout]
        if args.phases:
            cmd += ["--phases", args.phases]
        cmd.append(path)
        env = dict(os.environ)
        env.pop("TFP_VALIDATE_TEST_FAULT", None)
        for kv in args.env:
            k, v = kv.split("=", 1)
            env[k] = v
        start = time.monotonic()
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
        elapsed = time.monotonic() - start
        out = f"$ {' '.join(cmd)}\n{r.stdout}{r.stderr}(exit {r.returncode}, {elapsed:.2f} s)"
        print(out)
        check(args, path, json_path, r, elapsed, out)
        print("OK")
        return 0
    finally:
        for root, dirs, _ in os.walk(tmp):  # chmod 000 files stay deletable; dirs too
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o700)
        shutil.rmtree(tmp, ignore_errors=True)


def check(args, path, json_path, r, elapsed, out):
    if r.returncode != args.exit:
        fail(f"exit status {r.returncode}, expected {args.exit}", out)
    if elapsed > args.max_seconds:
        fail(f"took {elapsed:.1f} s, more than {args.max_seconds} s", out)
    try:
        with open(json_path) as f:
            findings = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"no valid JSON report: {e}", out)
    if not isinstance(findings, list):
        fail("the JSON report is not an array", out)
    for f in findings:
        if set(f) != FINDING_KEYS:
            fail(f"finding keys {sorted(f)}, expected {sorted(FINDING_KEYS)}", out)
        if f["severity"] not in ("error", "warning", "info"):
            fail(f"bad severity {f['severity']!r}", out)
        if f["file"] != path or f["fields"].get("file") != path:
            fail(f"finding names file {f['file']!r}, expected {path!r}", out)
        for k in ("subject", "message", "expected", "actual", "fix"):
            if not f[k].strip():
                fail(f"{f['rule_id']}: empty {k}", out)
            m = LEFTOVER.search(f[k])
            if m:
                fail(f"{f['rule_id']}: {k} has an unfilled field {m.group(0)}: {f[k]!r}", out)
        # The human block for it.
        head = f"{f['severity']}[{f['rule_id']}] {path}: "
        if f["subject"] != path:
            head += f["subject"] + ": "
        head += f["message"]
        if head + "\n" not in r.stdout:
            fail(f"human report lacks the line {head!r}", out)
    expected = set() if args.expect == "none" else set(args.expect.split(","))
    got = {f["rule_id"] for f in findings
           if f["severity"] != "info" or f["rule_id"] in expected}
    if got != expected:
        fail(f"rule ids {sorted(got)}, expected {sorted(expected)}", out)
    errors = sum(f["severity"] == "error" for f in findings)
    warnings = sum(f["severity"] == "warning" for f in findings)
    m = re.search(r"^(\d+) errors?, (\d+) warnings?$", r.stdout, re.M)
    if not m or r.stdout.rstrip("\n").splitlines()[-1] != m.group(0):
        fail("the human report does not end with 'N errors, N warnings'", out)
    if (int(m.group(1)), int(m.group(2))) != (errors, warnings):
        fail(f"summary says {m.group(0)!r}, the JSON has {errors} errors, {warnings} warnings", out)
    for text in args.text:
        if text not in r.stdout:
            fail(f"human report lacks {text!r}", out)


if __name__ == "__main__":
    sys.exit(main())
