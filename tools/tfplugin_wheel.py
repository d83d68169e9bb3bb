#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tfplugin-wheel: package a PluggableDevice plugin .so as a pip-installable wheel.

  tfplugin-wheel libvacc.so --name vacc --version 0.1.0 --license Apache-2.0 \\
      --built-for 2.21 [--tf-min 2.7 --tf-max 2.21] [--out-dir DIR]

The wheel installs the plugin as site-packages/tensorflow-plugins/lib<name>.so,
the folder `import tensorflow` loads plugins from. It does not require
TensorFlow (users may have tensorflow, tensorflow-cpu or a vendor build);
the extras `<name>[tensorflow]` and `<name>[tensorflow-cpu]` pull one in,
pinned to the release range. The range comes from running
`validate_plugin --tf all --json` on the .so (the releases it works with),
unless --tf-min and --tf-max give it. It is written with the release the
plugin was built for to <name>-<version>.dist-info/tfplugin.json, which
tfplugin-doctor reads.

Libraries the plugin needs beyond the manylinux baseline are bundled with
auditwheel (see tfplugin_wheel_bundle.py); --bundle none skips that and lists
what the user's machine must then provide. The plugin is linked to the
TensorFlow library that defines its TF_* imports in every release of the
range (tfplugin_wheel_link.py), so it loads whether or not TensorFlow's
Python package made its libraries global (2.18's does not).

The last line printed is the wheel's path. Exit status: 0 wheel written,
1 it could not be built (validation found no working release, auditwheel
failed), 2 bad usage or input (the message names the argument or file).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tfplugin_wheel_bundle as bundle  # noqa: E402
import tfplugin_wheel_info as info_mod  # noqa: E402
import tfplugin_wheel_link as link  # noqa: E402
import tfplugin_wheel_zip as wheel_zip  # noqa: E402

TOOL_VERSION = "0.1.0"
HERE = os.path.dirname(os.path.abspath(__file__))
# Libraries every manylinux system has; anything else must be bundled.
BASELINE = re.compile(r"^(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|ld-linux.*)\.so")
# ELF e_machine -> the platform tag's machine part.
MACHINES = {62: "x86_64", 183: "aarch64", 21: "ppc64le", 22: "s390x"}


class UsageError(Exception):
    """Bad arguments or input file (exit 2)."""


class BuildError(Exception):
    """The wheel cannot be built from this input (exit 1)."""


def say(line):
    print(line, flush=True)


def normalize(name):
    """PEP 503 name, with '_' as file names in a wheel use it."""
    return re.sub(r"[-_.]+", "_", name).lower()


def elf_machine(path):
    """The platform machine of a 64-bit little-endian ELF shared object."""
    with open(path, "rb") as f:
        head = f.read(20)
    if len(head) < 20 or head[:4] != b"\x7fELF":
        raise UsageError(f"{path}: not an ELF file (a plugin is a shared object, lib<name>.so)")
    if head[4] != 2 or head[5] != 1:
        raise UsageError(f"{path}: not a 64-bit little-endian ELF file")
    if int.from_bytes(head[16:18], "little") != 3:
        raise UsageError(f"{path}: ELF type is not a shared object (ET_DYN)")
    machine = int.from_bytes(head[18:20], "little")
    if machine not in MACHINES:
        raise UsageError(f"{path}: ELF machine {machine} has no wheel platform tag here")
    return MACHINES[machine]


def find_validate_plugin(explicit):
    """validate_plugin: --validate-plugin, $TFPLUGIN_VALIDATE_PLUGIN, the tree's build/,
    next to this tool when installed, or PATH."""
    candidates = [explicit, os.environ.get("TFPLUGIN_VALIDATE_PLUGIN"),
                  os.path.join(os.path.dirname(HERE), "build", "src", "validate",
                               "validate_plugin"),
                  shutil.which("validate_plugin")]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    if explicit:
        raise UsageError(f"--validate-plugin {explicit}: not an executable file")
    raise UsageError("validate_plugin not found (build the SDK, put it on PATH or pass "
                     "--validate-plugin), or give the range with --tf-min and --tf-max")


def works_with(validate, plugin):
    """Releases `plugin` works with, oldest first, and all releases checked, per
    `validate_plugin --tf all --json`."""
    with tempfile.TemporaryDirectory(prefix="tfplugin-wheel-") as tmp:
        out = os.path.join(tmp, "matrix.json")
        say(f"$ {os.path.basename(validate)} --tf all --json {out} {plugin}")
        r = subprocess.run([validate, "--tf", "all", "--json", out, plugin],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        summary = [line for line in r.stdout.splitlines() if line.startswith("works with")]
        if r.returncode == 2 or not os.path.exists(out):
            raise BuildError(f"validate_plugin could not validate {plugin} (exit "
                             f"{r.returncode}): {r.stdout.strip().splitlines()[-1:]}")
        with open(out) as f:
            rows = json.load(f)
    try:
        releases = [row["release"] for row in rows]
        good = [row["release"] for row in rows if row["works"]]
    except (TypeError, KeyError) as e:
        raise BuildError(f"validate_plugin --json output lacks field {e}") from None
    if summary:
        say(f"  {summary[-1]}")
    if not good:
        bad = "; ".join(f"{row['release']}: {row.get('verdict')}" for row in rows)
        raise BuildError(f"{plugin} works with no TensorFlow release ({bad})")
    return good, releases


def release_range(args, plugin):
    """(tf_min, tf_max, range_from)."""
    if bool(args.tf_min) != bool(args.tf_max):
        raise UsageError("--tf-min and --tf-max go together (or leave both out to derive "
                         "the range with validate_plugin --tf all)")
    if args.tf_min:
        for opt, value in (("--tf-min", args.tf_min), ("--tf-max", args.tf_max)):
            try:
                info_mod.release_key(value, opt)
            except info_mod.InfoError as e:
                raise UsageError(str(e)) from None
        return args.tf_min, args.tf_max, "given"
    good, releases = works_with(find_validate_plugin(args.validate_plugin), plugin)
    span = releases[releases.index(good[0]):releases.index(good[-1]) + 1]
    if span != good:
        gaps = [r for r in span if r not in good]
        raise BuildError(f"{plugin} works with {', '.join(good)} but not {', '.join(gaps)} "
                         f"in between: a wheel states one range; pass --tf-min/--tf-max "
                         f"for the part you ship")
    return good[0], good[-1], "validate_plugin --tf all"


def requirement_upper(tf_max):
    major, minor = info_mod.release_key(tf_max)
    return f"{major}.{minor + 1}"


def metadata(args, tf_min, tf_max):
    upper = requirement_upper(tf_max)
    lines = ["Metadata-Version: 2.1", f"Name: {args.name}", f"Version: {args.version}",
             f"Summary: {args.summary}", f"License: {args.license}",
             "Classifier: Operating System :: POSIX :: Linux"]
    # Extras rather than a hard requirement: whichever TensorFlow distribution
    # the user has (tensorflow, tensorflow-cpu, a vendor build) satisfies the
    # plugin, and pip must not pull in a second one.
    for extra in ("tensorflow", "tensorflow-cpu"):
        lines.append(f"Provides-Extra: {extra}")
        lines.append(f"Requires-Dist: {extra}>={tf_min},<{upper}; extra == \"{extra}\"")
    description = (f"TensorFlow PluggableDevice plugin lib{normalize(args.name)}.so, built for "
                   f"TensorFlow {args.built_for}, works with {tf_min} to {tf_max}.\n\n"
                   f"    pip install {args.name}[tensorflow]       # or [tensorflow-cpu]\n")
    return "\n".join(lines) + "\nDescription-Content-Type: text/markdown\n\n" + description


def check_args(args):
    plugin = args.plugin
    if not os.path.isfile(plugin):
        raise UsageError(f"{plugin}: no such file")
    if not plugin.endswith(".so"):
        raise UsageError(f"{plugin}: a plugin file name ends in .so")
    machine = elf_machine(plugin)
    if args.name is None:
        m = re.match(r"^lib(.+)\.so$", os.path.basename(plugin))
        if not m:
            raise UsageError(f"{plugin}: cannot derive --name from a file not called lib<name>.so")
        args.name = m.group(1)
    if not re.match(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$", args.name):
        raise UsageError(f"--name {args.name!r}: not a valid distribution name (PEP 508)")
    if not re.match(r"^\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?$", args.version):
        raise UsageError(f"--version {args.version!r}: not a PEP 440 version like 1.2.0")
    try:
        info_mod.release_key(args.built_for, "--built-for")
    except info_mod.InfoError as e:
        raise UsageError(str(e)) from None
    if not args.license.strip():
        raise UsageError("--license: empty")
    args.summary = args.summary or f"TensorFlow PluggableDevice plugin {args.name}"
    return machine


def build(args):
    machine = check_args(args)
    plugin = args.plugin
    tf_min, tf_max, range_from = release_range(args, plugin)
    mod = normalize(args.name)
    target = f"tensorflow-plugins/lib{mod}.so"
    try:
        info = info_mod.make(target, args.built_for, tf_min, tf_max, range_from)
    except info_mod.InfoError as e:
        raise BuildError(f"{plugin}: built for {args.built_for} but works with "
                         f"{tf_min}..{tf_max} ({e})") from None
    say(f"range: TensorFlow {tf_min} to {tf_max} ({range_from}); built for {args.built_for}")

    dist_info = f"{mod}-{args.version}.dist-info"
    tag = f"py3-none-linux_{machine}"
    with open(plugin, "rb") as f:
        so = f.read()
    files = {
        target: (so, True),
        f"{dist_info}/METADATA": (metadata(args, tf_min, tf_max).encode(), False),
        f"{dist_info}/WHEEL": (f"Wheel-Version: 1.0\nGenerator: tfplugin-wheel {TOOL_VERSION}\n"
                               f"Root-Is-Purelib: false\nTag: {tag}\n".encode(), False),
        f"{dist_info}/{info_mod.FILE_NAME}": (info_mod.dumps(info).encode(), False),
    }
    os.makedirs(args.out_dir, exist_ok=True)
    name = f"{mod}-{args.version}-{tag}.whl"
    releases = releases_between(tf_min, tf_max)
    try:
        tf_library, imports, uncovered = link.library_for(
            link.undefined_symbols(plugin), releases, link.load_model(), info_mod.release_key)
    except link.LinkError as e:
        raise BuildError(f"{plugin}: {e}") from None
    if args.bundle == "none":
        out = os.path.join(args.out_dir, name)
        wheel_zip.write_wheel(out, dist_info, files)
        extra = [lib for lib in bundle.needed(plugin) if not BASELINE.match(lib)]
        if extra:
            say(f"not bundled (--bundle none): the user's machine must provide "
                f"{', '.join(extra)}")
        return link_wheel(out, dist_info, target, tf_library, imports, uncovered, args)
    auditwheel = bundle.find_auditwheel(args.auditwheel, log=say)
    with tempfile.TemporaryDirectory(prefix="tfplugin-wheel-") as tmp:
        plain = os.path.join(tmp, name)
        wheel_zip.write_wheel(plain, dist_info, files)
        # auditwheel keeps earlier repairs of the same version; replace them.
        for old in os.listdir(args.out_dir):
            if old.startswith(f"{mod}-{args.version}-") and old.endswith(".whl"):
                os.unlink(os.path.join(args.out_dir, old))
        out = bundle.repair(auditwheel, plain, args.out_dir, log=say)
    libs = bundle.grafted(out, mod)
    say(f"bundled into {mod}.libs/: {', '.join(libs) if libs else 'nothing (none needed)'}")
    return link_wheel(out, dist_info, target, tf_library, imports, uncovered, args)


def releases_between(tf_min, tf_max):
    """The releases of the ABI description from tf_min to tf_max."""
    try:
        known = [r["release"] for r in link.load_model()["releases"]]
    except link.LinkError as e:
        raise BuildError(str(e)) from None
    lo, hi = info_mod.release_key(tf_min), info_mod.release_key(tf_max)
    inside = [r for r in known if lo <= info_mod.release_key(r) <= hi]
    if not inside:
        raise BuildError(f"no release of the ABI description lies in {tf_min}..{tf_max}")
    return inside


def link_wheel(out, dist_info, target, tf_library, imports, uncovered, args):
    """Rewrites wheel `out` with its plugin linked to `tf_library` (see
    tfplugin_wheel_link.py), then checks its RECORD; returns `out`."""
    if tf_library is not None:
        patchelf = bundle.find_patchelf(args.auditwheel, log=say)
        with tempfile.TemporaryDirectory(prefix="tfplugin-wheel-") as tmp:
            files = wheel_zip.read_wheel(out)
            so = os.path.join(tmp, os.path.basename(target))
            with open(so, "wb") as f:
                f.write(files[target][0])
            try:
                link.patch(so, tf_library, patchelf)
            except link.LinkError as e:
                raise BuildError(str(e)) from None
            with open(so, "rb") as f:
                files[target] = (f.read(), True)
            files.pop(f"{dist_info}/RECORD", None)
            wheel_zip.write_wheel(out, dist_info, files)
        covered = len(imports) - len(uncovered)
        say(f"linked to {tf_library} (defines {covered} of the {len(imports)} TF imports in "
            f"every release of the range), runpath {link.RUNPATH}")
        weak = set(link.undefined_symbols(args.plugin, weak_only=True))
        for symbol, missing in uncovered:
            fallback = "it is NULL (a weak import)" if symbol in weak else "the load fails"
            say(f"  note: {symbol} is not in {tf_library} in {', '.join(missing)}: there it "
                f"resolves only if TensorFlow's Python loaded its libraries RTLD_GLOBAL, "
                f"else {fallback}")
    problems = wheel_zip.check_record(out)
    if problems:
        raise BuildError("; ".join(problems))
    return out


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="tfplugin-wheel", description=__doc__.split("\n\n")[0],
        epilog="Docs: docs/packaging.md")
    ap.add_argument("plugin", help="the plugin shared object (lib<name>.so)")
    ap.add_argument("--name", help="distribution name (default: <name> of lib<name>.so)")
    ap.add_argument("--version", required=True, help="the wheel's version (PEP 440)")
    ap.add_argument("--license", required=True, help="license, e.g. Apache-2.0")
    ap.add_argument("--summary", help="one-line description")
    ap.add_argument("--built-for", required=True, metavar="RELEASE",
                    help="TensorFlow release whose headers the plugin was compiled with")
    ap.add_argument("--tf-min", metavar="RELEASE",
                    help="oldest release it works with (with --tf-max; default: derived "
                         "with validate_plugin --tf all)")
    ap.add_argument("--tf-max", metavar="RELEASE", help="newest release it works with")
    ap.add_argument("--validate-plugin", metavar="PATH", help="validate_plugin to derive the "
                    "range with (default: $TFPLUGIN_VALIDATE_PLUGIN, build/, PATH)")
    ap.add_argument("--bundle", choices=["auditwheel", "none"], default="auditwheel",
                    help="bundle needed libraries with auditwheel (default) or not at all")
    ap.add_argument("--auditwheel", metavar="PATH", help="auditwheel executable to use")
    ap.add_argument("--out-dir", default=".", help="where to write the wheel (default: .)")
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    try:
        out = build(args)
    except UsageError as e:
        print(f"tfplugin-wheel: error: {e}", file=sys.stderr)
        return 2
    except (BuildError, bundle.BundleError) as e:
        print(f"tfplugin-wheel: error: {e}", file=sys.stderr)
        return 1
    say(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
