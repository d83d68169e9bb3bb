# SPDX-License-Identifier: Apache-2.0
"""Write a wheel file (PEP 427) with the standard library.

A wheel is a zip whose .dist-info/RECORD lists every file with its sha256 and
size; pip refuses an install whose files do not match it. The archive is
reproducible: entries sorted, timestamps fixed (SOURCE_DATE_EPOCH when set),
so the same plugin gives a byte-identical wheel.
"""

import base64
import hashlib
import os
import time
import zipfile

_EPOCH_1980 = 315532800  # the oldest time a zip entry can hold


def record_hash(data):
    """RECORD's hash form: sha256=<urlsafe base64 without padding>."""
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _stamp():
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", _EPOCH_1980))
    return time.gmtime(max(epoch, _EPOCH_1980))[:6]


def write_wheel(path, dist_info, files):
    """Write `files` ({archive path: (bytes, executable)}) plus dist_info/RECORD to `path`."""
    stamp = _stamp()
    record_path = f"{dist_info}/RECORD"
    lines = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        # dist-info last, as the wheel spec recommends, RECORD at the very end.
        order = sorted(files, key=lambda p: (p.startswith(dist_info + "/"), p))
        for name in order:
            data, executable = files[name]
            entry = zipfile.ZipInfo(name, stamp)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = ((0o755 if executable else 0o644) | 0o100000) << 16
            z.writestr(entry, data)
            lines.append(f"{name},{record_hash(data)},{len(data)}")
        lines.append(f"{record_path},,")
        entry = zipfile.ZipInfo(record_path, stamp)
        entry.compress_type = zipfile.ZIP_DEFLATED
        entry.external_attr = (0o644 | 0o100000) << 16
        z.writestr(entry, "\n".join(lines) + "\n")


def read_wheel(path):
    """A wheel's files as write_wheel takes them: {archive path: (bytes, executable)}
    (directories left out; RECORD included, as it is)."""
    files = {}
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if not info.filename.endswith("/"):
                files[info.filename] = (z.read(info), bool((info.external_attr >> 16) & 0o111))
    return files


def check_record(path):
    """Problems with a wheel's RECORD (missing entries, wrong hashes); [] when it is sound."""
    problems = []
    with zipfile.ZipFile(path) as z:
        names = [n for n in z.namelist() if not n.endswith("/")]
        records = [n for n in names if n.endswith(".dist-info/RECORD")]
        if len(records) != 1:
            return [f"{path}: expected one .dist-info/RECORD, found {len(records)}"]
        listed = {}
        for line in z.read(records[0]).decode().splitlines():
            if line.strip():
                name, digest, size = line.rsplit(",", 2)
                listed[name] = (digest, size)
        for name in names:
            if name not in listed:
                problems.append(f"{path}: {name} is not in RECORD")
            elif name != records[0]:
                data = z.read(name)
                if listed[name] != (record_hash(data), str(len(data))):
                    problems.append(f"{path}: {name} does not match its RECORD line")
    return problems
