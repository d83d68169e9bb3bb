#!/usr/bin/env python3
"""validate_plugin never crashes, whatever the input.

  mutate_inputs.py VALIDATE_PLUGIN PLUGIN.so...

For each plugin: truncations at many lengths, random byte flips (in the ELF
header and program headers, in the section header table, anywhere) and
targeted corruptions of header fields. Every run must exit 0, 1 or 2 with a
valid JSON report and no TFP-ISOLATION-* finding: a phase that crashed or
hung on a malformed file is a validator bug. Only the phases that read the
file (file, symbols): the registration phase runs the plugin's code, and
a corrupted plugin crashing there is the plugin's finding, not a validator
bug. Deterministic (fixed seed).
"""

import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile


def mutations(data, rng):
    size = len(data)
    for n in sorted({0, 1, 4, 5, 16, 17, 20, 52, 63, 64, 65} |
                    {size * k // 24 for k in range(1, 24)} | {size - 1}):
        yield f"truncated to {n}", data[:n]
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    phnum = struct.unpack_from("<H", data, 0x38)[0]
    regions = [("header", 0, 64 + 56 * phnum), ("section headers", shoff, size), ("any", 0, size)]
    for name, lo, hi in regions:
        for _ in range(25):
            b = bytearray(data)
            for _ in range(rng.randint(1, 8)):
                at = rng.randrange(lo, max(lo + 1, min(hi, size)))
                b[at] = rng.randrange(256)
            yield f"flipped bytes in {name}", bytes(b)
    fields = {"e_phoff": (0x20, "<Q"), "e_shoff": (0x28, "<Q"), "e_phentsize": (0x36, "<H"),
              "e_phnum": (0x38, "<H"), "e_shentsize": (0x3a, "<H"), "e_shnum": (0x3c, "<H"),
              "e_shstrndx": (0x3e, "<H"), "e_type": (0x10, "<H")}
    for name, (off, fmt) in fields.items():
        width = struct.calcsize(fmt)
        for value in (0, 1, 0xffff, (1 << (8 * width)) - 1, size, size - 8):
            b = bytearray(data)
            struct.pack_into(fmt, b, off, value & ((1 << (8 * width)) - 1))
            yield f"{name}={value:#x}", bytes(b)
    # Every section header's offset and size pushed out of range, one at a time.
    shnum = struct.unpack_from("<H", data, 0x3c)[0]
    for i in range(shnum):
        for field_off in (0x18, 0x20, 0x28):  # sh_offset, sh_size, sh_link
            b = bytearray(data)
            at = shoff + 64 * i + field_off
            if at + 8 <= size:
                struct.pack_into("<Q" if field_off != 0x28 else "<I", b, at,
                                 0x7fffffff if field_off != 0x28 else 0xffff)
                yield f"section {i} field {field_off:#x}", bytes(b)


def main():
    validator, plugins = sys.argv[1], sys.argv[2:]
    rng = random.Random(20240601)
    tmp = tempfile.mkdtemp(prefix="tfp-mutate-")
    failures = runs = 0
    try:
        for plugin in plugins:
            with open(plugin, "rb") as f:
                data = f.read()
            for what, blob in mutations(data, rng):
                path = os.path.join(tmp, "mutant.so")
                report = os.path.join(tmp, "report.json")
                with open(path, "wb") as f:
                    f.write(blob)
                r = subprocess.run([validator, "--timeout", "20", "--phases", "file,symbols",
                                    "--json", report, path],
                                   capture_output=True, timeout=120)
                try:  # the human report must be UTF-8 whatever bytes the file holds
                    r.stdout.decode("utf-8")
                    bad_output = None
                except UnicodeDecodeError as e:
                    bad_output = f"the human report is not UTF-8: {e}"
                r.stdout = r.stdout.decode("utf-8", "replace")
                r.stderr = r.stderr.decode("utf-8", "replace")
                runs += 1
                problem = None
                if r.returncode not in (0, 1, 2):
                    problem = f"exit status {r.returncode}"
                else:
                    try:
                        with open(report, encoding="utf-8") as f:
                            ids = [x["rule_id"] for x in json.load(f)]
                    except (OSError, ValueError, KeyError, TypeError) as e:
                        problem = f"bad JSON report: {e}"
                    else:
                        bad = [i for i in ids if i.startswith("TFP-ISOLATION-")]
                        if bad:
                            problem = f"a phase died: {bad}"
                        elif bad_output:
                            problem = bad_output
                if problem:
                    failures += 1
                    keep = os.path.join(tempfile.gettempdir(), f"tfp-mutant-{failures}.so")
                    shutil.copy(path, keep)
                    print(f"FAIL {os.path.basename(plugin)} {what}: {problem} (kept as {keep})\n"
                          f"{r.stdout}{r.stderr}", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{runs} mutated inputs, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
