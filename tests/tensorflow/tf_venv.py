# SPDX-License-Identifier: Apache-2.0
"""The `tensorflow` suite's TensorFlow: one venv per release, shared by its tests.

${XDG_CACHE_HOME:-~/.cache}/tfplugin/venv-tf<release> holds tensorflow-cpu
(else tensorflow) <release>.* and libclang, installed with pip on first use and
reused while its stamp file (tfplugin-venv.json) says the install completed
and the interpreter still reports the same site-packages. A lock file
serializes installers: several build dirs may run the suite at once. Tests
must not install anything else into it (they install into an overlay), so
every test sees the same TensorFlow.

When TensorFlow cannot be installed here (no network, no wheel for this
Python or platform, out of time) `venv_for` raises Skip: the tests exit 77
with `skipped: <reason>`, never pass. tests/unit/test_tf_venv.py checks
that with an unreachable package index and with one that never answers.

  python3 tf_venv.py 2.18     # create or reuse that release's venv, print it
"""

import fcntl
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time

SKIP = 77
# Both pip attempts together; TFPLUGIN_TF_INSTALL_TIMEOUT (seconds) overrides it.
INSTALL_TIMEOUT = 15 * 60
PACKAGES = ["tensorflow-cpu", "tensorflow"]
STAMP = "tfplugin-venv.json"
STAMP_SCHEMA = 1


class Skip(Exception):
    """TensorFlow cannot be installed here; not a verdict on what is tested."""


class Error(Exception):
    """The test itself could not run (bad arguments, a tool crashed)."""


def say(line):
    print(line, flush=True)


def verdict(failures, subject):
    """Prints each failure and the verdict line for `subject`; the exit status."""
    for line in failures:
        say(f"FAIL: {line}")
    say(f"result: {'FAIL' if failures else 'OK'}: {subject}")
    return 1 if failures else 0


# A sanitizer's instrumentation, recognised by the runtime entry points it
# leaves undefined in an instrumented shared object.
SANITIZER_SYMBOLS = (("__asan_", "AddressSanitizer"), ("__tsan_", "ThreadSanitizer"),
                     ("__ubsan_", "UndefinedBehaviorSanitizer"))


def skip_if_sanitized(*libraries):
    """Raises Skip when a library TensorFlow would load is a sanitizer build
    (./dev test --sanitize=...): its runtime must be the first library of the
    process, and TensorFlow's Python is neither built nor started with it."""
    for path in libraries:
        if not os.path.isfile(path):
            continue  # the test reports it where it uses the library
        r = subprocess.run(["nm", "-D", "--undefined-only", path], capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise Error(f"nm -D --undefined-only {path}: {r.stderr.strip()}")
        undefined = [line.split()[-1] for line in r.stdout.splitlines() if line.split()]
        found = sorted({name for prefix, name in SANITIZER_SYMBOLS
                        if any(u.startswith(prefix) for u in undefined)})
        if found:
            raise Skip(f"{os.path.basename(path)} is built with {' and '.join(found)}, whose "
                       f"runtime TensorFlow's Python does not load (this test runs in the "
                       f"normal build)")


def cache_dir():
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                         "tfplugin")
    os.makedirs(cache, exist_ok=True)
    return cache


def venv_for(release):
    """(venv, stamp, reused, seconds): the release's venv, created if needed, under its lock."""
    cache = cache_dir()
    started = time.monotonic()
    # One installer per venv at a time (several build dirs may run the suite).
    with open(os.path.join(cache, f"venv-tf{release}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        venv, stamp, reused = ensure_venv(release, cache)
    return venv, stamp, reused, time.monotonic() - started


# ------------------------------------------------------------------ venv ---

def run_bounded(cmd, timeout, log):
    """Run cmd (its own process group) with output appended to `log`.
    Returns the exit status, or None if it ran out of time (group killed)."""
    with open(log, "a") as out:
        out.write(f"\n$ {' '.join(cmd)}\n")
        out.flush()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            return proc.wait(timeout=max(timeout, 1))
        except subprocess.TimeoutExpired:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=10)
                    break
                except subprocess.TimeoutExpired:
                    pass
            return None


def last_error(log):
    """The most telling line the last command in `log` wrote: its last ERROR line,
    else its last line, with a hint when pip saw no version at all."""
    try:
        with open(log, errors="replace") as f:
            section = f.read().rsplit("\n$ ", 1)[-1]
    except OSError:
        return "no output"
    lines = [line.strip() for line in section.splitlines()[1:] if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR:")]
    line = (errors or lines or ["no output"])[-1]
    if any("(from versions: none)" in x for x in lines):
        line += " (package index unreachable, or no wheel for this Python/platform)"
    return line


def install_timeout():
    try:
        return max(int(os.environ.get("TFPLUGIN_TF_INSTALL_TIMEOUT") or INSTALL_TIMEOUT), 1)
    except ValueError:
        raise Error("TFPLUGIN_TF_INSTALL_TIMEOUT must be a number of seconds")


def venv_python(venv):
    return os.path.join(venv, "bin", "python")


def query(python, code, timeout=120):
    r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=timeout)
    return r.stdout.strip() if r.returncode == 0 else None


def site_packages(python):
    return query(python, "import sysconfig; print(sysconfig.get_paths()['platlib'])")


def read_stamp(venv, release):
    """The stamp of a complete, still usable venv for `release`, else None."""
    try:
        with open(os.path.join(venv, STAMP)) as f:
            stamp = json.load(f)
    except (OSError, ValueError):
        return None
    if stamp.get("schema") != STAMP_SCHEMA or not stamp.get("complete") or \
            stamp.get("release") != release:
        return None
    site = site_packages(venv_python(venv)) if os.path.exists(venv_python(venv)) else None
    if not site or site != stamp.get("site") or \
            not os.path.isdir(os.path.join(site, "tensorflow", "include")):
        return None
    return stamp


def ensure_venv(release, cache):
    """(venv, stamp, reused): a venv holding TensorFlow `release` and libclang."""
    venv = os.path.join(cache, f"venv-tf{release}")
    log = os.path.join(cache, f"venv-tf{release}.install.log")
    stamp = read_stamp(venv, release)
    if stamp:
        return venv, stamp, True

    say(f"creating venv {venv} (pip output: {log})")
    if os.path.lexists(venv):
        shutil.rmtree(venv)  # incomplete or stale: start over
    with open(log, "w") as f:
        f.write(f"tfplugin: installing TensorFlow {release} into {venv}\n")
    limit = install_timeout()
    status = run_bounded([sys.executable, "-m", "venv", venv], 300, log)
    if status != 0:
        raise Skip(f"cannot create a venv with {sys.executable} -m venv: {last_error(log)}")
    python = venv_python(venv)

    deadline = time.monotonic() + limit
    tried, package = [], None
    for candidate in PACKAGES:
        left = deadline - time.monotonic()
        if left <= 0:
            tried.append(f"{candidate}=={release}.*: not tried, out of time")
            break
        say(f"pip install {candidate}=={release}.* libclang (at most {int(left)}s)")
        status = run_bounded(
            [python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
             "--prefer-binary", f"{candidate}=={release}.*", "libclang"], left, log)
        if status == 0:
            package = candidate
            break
        tried.append(f"{candidate}=={release}.*: " +
                     ("timed out" if status is None else last_error(log)))
    if package is None:
        raise Skip(f"cannot pip install TensorFlow {release} for Python "
                   f"{platform.python_version()} within {limit}s "
                   f"({'; '.join(tried)}); log: {log}")

    version = query(python, f"import importlib.metadata as m; print(m.version({package!r}))")
    site = site_packages(python)
    if not site or not os.path.isdir(os.path.join(site, "tensorflow", "include")):
        raise Error(f"{package} {version} installed, but {site}/tensorflow/include is missing")
    stamp = {"schema": STAMP_SCHEMA, "complete": True, "release": release,
             "distribution": package, "version": version, "site": site,
             "python": platform.python_version()}
    with open(os.path.join(venv, STAMP), "w") as f:
        json.dump(stamp, f, indent=1)
    return venv, stamp, False


def install_overlay(python, wheel, overlay, **run_args):
    """pip installs `wheel` alone (no dependencies, no index) with --target into
    `overlay`, a directory named site-packages for PYTHONPATH: TensorFlow scans
    every sys.path entry of that name for plugins, and the cached venv stays
    clean. run_args go to subprocess.run; returns its CompletedProcess."""
    return subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                           "--disable-pip-version-check", "--target", overlay, wheel],
                          **run_args)


def exit_status(check, *args):
    """Runs check(*args), the body of a suite test, and turns its outcome into
    the exit status: its own (0 pass, 1 fail), 77 with `skipped: <reason>`
    for Skip, 1 with `result: ERROR: ...` for Error or a failed subprocess."""
    try:
        return check(*args)
    except Skip as e:
        say(f"skipped: {' '.join(str(e).split())}")
        return SKIP
    except (Error, OSError, subprocess.SubprocessError) as e:
        say(f"result: ERROR: {e}")
        return 1


def main(argv):
    """Create or reuse the venv of each release named; 0 done, 77 skipped, 1 error."""
    def create():
        for release in argv or ["2.21"]:
            venv, stamp, reused, seconds = venv_for(release)
            say(f"{venv}: {stamp['distribution']} {stamp['version']} "
                f"({'reused' if reused else 'created'} in {seconds:.0f}s)")
        return 0
    return exit_status(create)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
