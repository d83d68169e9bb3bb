#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The example plugin in a real TensorFlow, installed the way users install it.

  vacc_in_tf.py --plugin libvacc.so --built-for 2.21 --version 0.1.0 \\
      --validate-plugin PATH --tfplugin-run PATH [--release 2.X]
      [--model ops|mlp|cnn|train_v1|profile] [--expect-missing-kernels] [--expect-tf-load-error TEXT]

1. takes the suite's TF venv (tf_venv.py) for --release (else
   TFPLUGIN_TF_RELEASE, else the release vacc was built for: an older one
   checks that the plugin really runs in the releases its wheel claims),
   skipping only when TensorFlow cannot be installed (or auditwheel, which
   the wheel needs, cannot);
2. packages libvacc.so with tools/tfplugin_wheel.py (range from
   validate_plugin, libhwy bundled by auditwheel) and pip installs it with
   --target into a temporary `site-packages` put on PYTHONPATH: TF scans
   every sys.path entry named site-packages, and the cached venv stays clean;
3. runs tools/tfplugin_doctor.py on that environment: it must find libvacc.so
   in range with no problems;
4. runs vacc_tf_checks.py in the venv's Python:
   ops  VACC is listed by tf.config.list_physical_devices(); the kernels TF
        registered for VACC, each an op and its dtypes, are the ones the
        plugin registers (tfplugin-run list, without TF); every one runs its
        cases from vacc_op_cases.py on /VACC:0 (soft placement off,
        result.device checked) and matches TF's CPU within
        vacc_tolerances.py's bound for its dtype. A plugin kernel without a
        case fails the test: coverage cannot silently shrink.
   mlp, cnn, train_v1  vacc_tf_models.py. With --expect-missing-kernels the test passes
        only while some kernel the model needs is missing, and fails once none
        is (drop the flag then: the model runs and is checked for real).
   With --expect-tf-load-error TEXT, a known bug: `import tensorflow` must
   fail with TEXT (the test fails once it loads: drop the flag then), and the
   checks run with TF's libraries loaded RTLD_GLOBAL, which works around it.
   profile  vacc_tf_profile.py: a training step profiled with tf.profiler
        must leave events for its ops on vacc's device plane.

Exit status: 0 pass, 1 fail, 77 skipped (prints `skipped: <reason>`).
"""

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tf_venv import (Error, Skip, exit_status, install_overlay, say,  # noqa: E402
                     skip_if_sanitized, venv_for, venv_python, verdict)

REPO = os.environ.get("TFPLUGIN_REPO") or os.path.dirname(os.path.dirname(HERE))
CHILD_TIMEOUT = 10 * 60


def run(cmd, env=None, timeout=CHILD_TIMEOUT):
    return subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout)


def build_wheel(args, out_dir):
    r = run([sys.executable, os.path.join(REPO, "tools", "tfplugin_wheel.py"), args.plugin,
             "--name", "vacc", "--version", args.version, "--license", "Apache-2.0",
             "--built-for", args.built_for, "--validate-plugin", args.validate_plugin,
             "--out-dir", out_dir])
    for line in r.stdout.strip().splitlines():
        say(f"  | {line}")
    if r.returncode != 0:
        if "cannot install auditwheel" in r.stderr:
            raise Skip(" ".join(r.stderr.split()))
        raise Error(f"tfplugin_wheel.py exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout.strip().splitlines()[-1]


# tfplugin-run's dtype names (TF_DataType's) to TensorFlow's Python names.
DTYPE_NAMES = {"float": "float32", "half": "float16", "double": "float64"}


def plugin_kernels(tfplugin_run, plugin, release):
    """Kernels the plugin registers, as tfplugin-run lists them without TF, named as
    vacc_tf_checks.py names TF's: `Op{A=dtype, B=dtype}` with attrs sorted."""
    r = run([tfplugin_run, "list", plugin, "--tf", release])
    if r.returncode != 0:
        raise Error(f"tfplugin-run list exited {r.returncode}: {r.stderr.strip()}")
    out = set()
    for m in re.finditer(r"^  (\w+) on VACC(?: \{([^}]*)\})?", r.stdout, re.M):
        types = dict(pair.split("=", 1) for pair in (m.group(2) or "").split(", ") if pair)
        out.add(m.group(1) + "{" + ", ".join(
            f"{a}={DTYPE_NAMES.get(t, t)}" for a, t in sorted(types.items())) + "}")
    declared = re.search(r"^kernels: (\d+)$", r.stdout, re.M)
    if not out or not declared or int(declared.group(1)) != len(out):
        raise Error(f"could not read tfplugin-run list's kernels (parsed {len(out)}, it says "
                    f"{declared.group(1) if declared else 'nothing'})")
    return sorted(out)


def core_revision(release):
    """The kernel C API revision of `release` (K1, K2, ...) in abi/tfplugin-abi.json."""
    try:
        with open(os.path.join(REPO, "abi", "tfplugin-abi.json")) as f:
            releases = json.load(f)["releases"]
    except (OSError, ValueError, KeyError):
        return "unknown"
    return next((r["revisions"]["core"] for r in releases if r["release"] == release),
                "not in abi/tfplugin-abi.json")


def check_doctor(python, env, tmp):
    report = os.path.join(tmp, "doctor.json")
    r = run([sys.executable, os.path.join(REPO, "tools", "tfplugin_doctor.py"),
             "--python", python, "--json", report], env=env)
    loads = [line for line in r.stdout.splitlines() if "libvacc.so" in line and "->" in line]
    for line in loads:
        say(f"doctor: {line.strip()}")
    if r.returncode != 0 or len(loads) != 1 or "-> ok" not in loads[0]:
        for line in r.stdout.splitlines():
            say(f"  | {line}")
        return [f"tfplugin-doctor exited {r.returncode} on the installed wheel "
                f"(expected 0 and libvacc.so loaded once, in range)"]
    return []


def decide_ops(result, plugin):
    """Failures: TF's VACC kernels differ from the plugin's; a plugin kernel TF did
    not compare with its CPU (no case in vacc_op_cases.py, or not registered)."""
    failures = list(result["failures"])
    in_tf, checked = set(result["vacc_kernels"]), set(result.get("checked", []))
    if set(plugin) != in_tf:
        failures.append(f"TF registered {len(in_tf)} VACC kernels, the plugin "
                        f"{len(plugin)} (tfplugin-run list); only in TF: "
                        f"{sorted(in_tf - set(plugin)) or 'none'}; only in the plugin: "
                        f"{sorted(set(plugin) - in_tf) or 'none'}")
    unchecked = sorted(set(plugin) - checked)
    if unchecked:
        failures.append(f"{len(unchecked)} of the plugin's {len(plugin)} kernels were not "
                        f"compared with TF's CPU (add a case to "
                        f"tests/tensorflow/vacc_op_cases.py): {', '.join(unchecked)}")
    say(f"compared with TF's CPU: {len(checked & set(plugin))} of the plugin's {len(plugin)} "
        f"kernels ({result.get('runs', 0)} cases); not compared: {len(unchecked)}")
    return failures


def decide_model(result, what, expect_missing):
    failures = list(result["failures"])
    missing = result.get("missing_kernels")
    if missing is None:
        return failures or [f"{what}: the model check recorded nothing"]
    if expect_missing:
        if missing:
            say(f"expected: {what} needs VACC kernels not registered yet: {', '.join(missing)}")
            return failures
        return failures + [f"{what}: every kernel it needs is registered now and it ran; "
                           f"drop --expect-missing-kernels for it in "
                           f"tests/tensorflow/meson.build"]
    if missing:
        failures.append(f"{what}: needs VACC kernels for {', '.join(missing)}")
    return failures


def check_known_load_error(python, env, text):
    """Failures: `import tensorflow` with the wheel installed no longer fails with `text`."""
    r = run([python, "-c", "import tensorflow"], env=env)
    if r.returncode != 0 and text in r.stderr:
        say(f"expected: import tensorflow fails to load the plugin ({text}); a known "
            f"bug: the checks below load TF's libraries RTLD_GLOBAL to work around it")
        return []
    if r.returncode != 0:
        tail = " ".join(r.stderr.strip().splitlines()[-1:])
        return [f"import tensorflow failed, but not with the known {text!r}: {tail}"]
    return [f"import tensorflow loads the plugin now (no {text!r}): the known bug is gone; "
            f"drop --expect-tf-load-error for this test in tests/tensorflow/meson.build"]


def main_checked(args):
    machine = platform.machine().lower()
    if not sys.platform.startswith("linux") or machine not in ("x86_64", "amd64"):
        raise Skip(f"vacc is built here for x86-64 Linux; this machine is {sys.platform}/{machine}")
    skip_if_sanitized(args.plugin)
    release = args.release or os.environ.get("TFPLUGIN_TF_RELEASE") or args.built_for
    say(f"TensorFlow {release} (kernel API {core_revision(release)}) running vacc built for "
        f"{args.built_for} ({core_revision(args.built_for)})")
    venv, stamp, reused, seconds = venv_for(release)
    python = venv_python(venv)
    say(f"venv: {venv} ({'reused' if reused else 'created'} in {seconds:.0f}s): "
        f"{stamp['distribution']} {stamp['version']}")

    with tempfile.TemporaryDirectory(prefix="tfplugin-vacc-in-tf-") as tmp:
        wheel = build_wheel(args, os.path.join(tmp, "wheels"))
        overlay = os.path.join(tmp, "site-packages")
        r = install_overlay(python, wheel, overlay, capture_output=True, text=True,
                            timeout=CHILD_TIMEOUT)
        if r.returncode != 0:
            raise Error(f"pip install --target {overlay} {os.path.basename(wheel)}: "
                        f"{r.stderr.strip()}")
        say(f"installed {os.path.basename(wheel)} into {overlay}")
        env = dict(os.environ, PYTHONPATH=overlay, TF_CPP_MIN_LOG_LEVEL="1")
        env.pop("TF_PLUGGABLE_DEVICE_LIBRARY_PATH", None)
        failures = check_doctor(python, env, tmp)
        if args.expect_tf_load_error:
            failures += check_known_load_error(python, env, args.expect_tf_load_error)
            env["TFPLUGIN_TF_LIBRARIES_GLOBAL"] = "1"

        result_path = os.path.join(tmp, "result.json")
        r = run([python, os.path.join(HERE, "vacc_tf_checks.py"), result_path, args.model],
                env=env)
        for line in r.stdout.strip().splitlines():
            say(line)
        try:
            with open(result_path) as f:
                result = json.load(f)
        except (OSError, ValueError):
            result = None
        if result is None or r.returncode not in (0, 1):
            for line in r.stderr.strip().splitlines()[-20:]:
                say(f"  | {line}")
            raise Error(f"vacc_tf_checks.py {args.model} exited {r.returncode} "
                        f"{'without a result' if result is None else ''}")
        if args.model == "profile":
            failures += result["failures"]
            if not result.get("op_events") and not failures:
                failures.append("profile: the check recorded no events")
        elif args.model == "ops":
            failures += decide_ops(result, plugin_kernels(args.tfplugin_run, args.plugin,
                                                          release))
        else:
            failures += decide_model(result, args.model, args.expect_missing_kernels)

    return verdict(failures,
                   f"vacc in {stamp['distribution']} {stamp['version']} ({args.model})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--built-for", required=True, help="release vacc was compiled for")
    ap.add_argument("--version", required=True, help="vacc's version, for its wheel")
    ap.add_argument("--validate-plugin", required=True)
    ap.add_argument("--tfplugin-run", required=True,
                    help="lists the plugin's kernels without TF: each must be compared")
    ap.add_argument("--release", help="TensorFlow release to run in (default: "
                    "TFPLUGIN_TF_RELEASE, else --built-for)")
    ap.add_argument("--model", choices=["ops", "mlp", "cnn", "train_v1", "profile"],
                    default="ops")
    ap.add_argument("--expect-missing-kernels", action="store_true")
    ap.add_argument("--expect-tf-load-error", metavar="TEXT",
                    help="a known bug: import tensorflow fails with TEXT (checked, and the "
                    "test fails once it does not); the checks then run with TF's libraries "
                    "loaded RTLD_GLOBAL")
    args = ap.parse_args(argv)
    return exit_status(main_checked, args)


if __name__ == "__main__":
    sys.exit(main())
