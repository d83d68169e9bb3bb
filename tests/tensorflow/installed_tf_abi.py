#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Check the committed ABI facts against a really installed TensorFlow.

abi/facts/tf-<release>.json is measured from a downloaded wheel. This test
installs that release with pip into a venv outside the repo, measures the
installed package with `tools/abi_facts.py --installed`, and compares:

  * every struct: size, align, and each field's name, type, offset and size
    in order (unnamed struct/union members recursively)
  * every enum: underlying type and each constant's value
  * every function TF declares: return type, parameter types, variadic
  * the value of every macro/variable present in both
  * the set of exported TF_/SE_/TP_/TFNPD_ symbols
  * what TF checks at registration (tf_checks: required fields, struct_size)

and checks that every function include/tfplugin/tf<release> declares as an
import (not marked unavailable) is exported by the installed libraries.

  installed_tf_abi.py                  # newest release in abi/facts
  installed_tf_abi.py --release 2.16   # or TFPLUGIN_TF_RELEASE=2.16

The venv is ${XDG_CACHE_HOME:-~/.cache}/tfplugin/venv-tf<release> (tf_venv.py), reused once
its stamp file says the install completed. Exit status: 0 all matched, 1 a
mismatch (or the measurement failed), 77 skipped (TensorFlow could not be
installed here: no network, no wheel for this Python/platform, ...).
"""

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

MEASURE_TIMEOUT = 10 * 60

REPO = os.environ.get("TFPLUGIN_REPO") or \
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The venv (shared with the suite's other tests) and its Skip/Error/say.
from tf_venv import Error, Skip, exit_status, run_bounded, say, venv_for, venv_python  # noqa: E402


# ------------------------------------------------------------ comparison ---

class Report:
    """Mismatch lines plus how much was compared."""

    def __init__(self):
        self.mismatches = []
        self.counts = {}

    def count(self, what, n=1):
        self.counts[what] = self.counts.get(what, 0) + n

    def mismatch(self, what, expected, actual):
        self.mismatches.append(f"MISMATCH {what}: expected {show(expected)}, "
                               f"installed {show(actual)}")

    def missing(self, what, side):
        """`what` exists only on one side: 'committed' or 'installed'."""
        if side == "committed":
            self.mismatch(what, "present", "absent")
        else:
            self.mismatch(what, "absent", "present")


def show(value):
    if value is None:
        return "(none)"
    if isinstance(value, str):
        return value if value in ("present", "absent") else json.dumps(value)
    return json.dumps(value)


def both_sides(report, what, expected, actual):
    """Names in either dict, reporting the ones only one side has; yields the common ones."""
    for name in sorted(set(expected) | set(actual)):
        if name not in actual:
            report.missing(f"{what} {name}", "committed")
        elif name not in expected:
            report.missing(f"{what} {name}", "installed")
        else:
            yield name


def keyed_fields(fields):
    """{(name, n): field}: the n-th field called `name` (unnamed members are all '')."""
    out, seen = {}, {}
    for f in fields:
        n = seen[f["name"]] = seen.get(f["name"], -1) + 1
        out[(f["name"], n)] = f
    return out


def field_label(key):
    name, n = key
    return (name or "<unnamed>") + (f"#{n}" if n else "")


def compare_layout(report, what, expected, actual):
    """Size, align and every field (in order) of one struct/union."""
    for key in ("size", "align"):
        if expected.get(key) != actual.get(key):
            report.mismatch(f"{what} {key}", expected.get(key), actual.get(key))
    e_fields, a_fields = expected.get("fields", []), actual.get("fields", [])
    e_order, a_order = [f["name"] for f in e_fields], [f["name"] for f in a_fields]
    if e_order != a_order:
        report.mismatch(f"{what} field order", e_order, a_order)
    e_keyed, a_keyed = keyed_fields(e_fields), keyed_fields(a_fields)
    for key in e_keyed:
        if key not in a_keyed:
            report.missing(f"{what} field {field_label(key)}", "committed")
    for key in a_keyed:
        if key not in e_keyed:
            report.missing(f"{what} field {field_label(key)}", "installed")
    for key, ef in e_keyed.items():
        af = a_keyed.get(key)
        if af is None:
            continue
        report.count("fields")
        label = f"{what}.{field_label(key)}"
        for attr in ("type", "offset", "size", "bitfield_width"):
            if ef.get(attr) != af.get(attr):
                report.mismatch(f"{label} {attr}", ef.get(attr), af.get(attr))
        e_rec, a_rec = ef.get("record"), af.get("record")
        if e_rec is not None or a_rec is not None:
            if e_rec is None or a_rec is None or e_rec.get("kind") != a_rec.get("kind"):
                report.mismatch(f"{label} member kind", (e_rec or {}).get("kind"),
                                (a_rec or {}).get("kind"))
            else:
                compare_layout(report, f"{label} ({e_rec['kind']})", e_rec, a_rec)


def compare_facts(expected, actual, report=None):
    """Every ABI-relevant difference between committed and installed facts."""
    report = report or Report()

    for name in both_sides(report, "struct", expected.get("records", {}),
                           actual.get("records", {})):
        report.count("structs")
        compare_layout(report, f"struct {name}", expected["records"][name],
                       actual["records"][name])

    for name in both_sides(report, "enum", expected.get("enums", {}), actual.get("enums", {})):
        report.count("enums")
        e, a = expected["enums"][name], actual["enums"][name]
        if e.get("underlying") != a.get("underlying"):
            report.mismatch(f"enum {name} underlying type", e.get("underlying"),
                            a.get("underlying"))
        for const in both_sides(report, f"enum {name} constant", e.get("constants", {}),
                                a.get("constants", {})):
            report.count("enum constants")
            if e["constants"][const] != a["constants"][const]:
                report.mismatch(f"enum {name} constant {const}", e["constants"][const],
                                a["constants"][const])

    for name in both_sides(report, "function", expected.get("functions", {}),
                           actual.get("functions", {})):
        report.count("functions")
        e, a = expected["functions"][name], actual["functions"][name]
        if e.get("return") != a.get("return"):
            report.mismatch(f"function {name} return type", e.get("return"), a.get("return"))
        e_params = [p["type"] for p in e.get("params", [])]
        a_params = [p["type"] for p in a.get("params", [])]
        if e_params != a_params:
            report.mismatch(f"function {name} parameter types", e_params, a_params)
        for attr in ("variadic", "inline"):
            if e.get(attr) != a.get(attr):
                report.mismatch(f"function {name} {attr}", e.get(attr), a.get(attr))

    # Constants: only those both sides declare (a name one side lacks is not a value).
    for table, kind in (("macros", "macro"), ("variables", "variable")):
        e_tab, a_tab = expected.get(table, {}), actual.get(table, {})
        for name in sorted(set(e_tab) & set(a_tab)):
            e, a = e_tab[name], a_tab[name]
            report.count("macros/variables")
            if "value" in e or "value" in a:
                if e.get("value") != a.get("value"):
                    report.mismatch(f"{kind} {name} value", e.get("value"), a.get("value"))
            elif kind == "macro" and e.get("tokens") != a.get("tokens"):
                report.mismatch(f"macro {name} definition", e.get("tokens"), a.get("tokens"))

    for name in both_sides(report, "export", expected.get("exports", {}),
                           actual.get("exports", {})):
        report.count("exports")
        e, a = expected["exports"][name], actual["exports"][name]
        if e.get("kind") != a.get("kind"):
            report.mismatch(f"export {name} kind", e.get("kind"), a.get("kind"))

    e_checks, a_checks = expected.get("tf_checks", {}), actual.get("tf_checks", {})
    e_req, a_req = e_checks.get("required_fields", {}), a_checks.get("required_fields", {})
    for struct in sorted(set(e_req) | set(a_req)):
        e_set, a_set = set(e_req.get(struct, [])), set(a_req.get(struct, []))
        report.count("tf required fields", len(e_set | a_set))
        for field in sorted(e_set - a_set):
            report.mismatch(f"tf_checks required field {struct}.{field}", "required",
                            "not required")
        for field in sorted(a_set - e_set):
            report.mismatch(f"tf_checks required field {struct}.{field}", "not required",
                            "required")
    e_size = e_checks.get("struct_size_checked", {})
    a_size = a_checks.get("struct_size_checked", {})
    for struct in both_sides(report, "tf_checks struct_size check of", e_size, a_size):
        report.count("tf struct_size checks")
        if e_size[struct] != a_size[struct]:
            report.mismatch(f"tf_checks struct_size check of {struct}", e_size[struct],
                            a_size[struct])
    if e_checks.get("name_pattern") != a_checks.get("name_pattern"):
        report.mismatch("tf_checks name_pattern", e_checks.get("name_pattern"),
                        a_checks.get("name_pattern"))

    e_headers, a_headers = expected.get("plugin_headers", []), actual.get("plugin_headers", [])
    for h in sorted(set(e_headers) - set(a_headers)):
        report.missing(f"header {h}", "committed")
    for h in sorted(set(a_headers) - set(e_headers)):
        report.missing(f"header {h}", "installed")
    return report


def check_imports(roles, unavailable, installed_exports, report=None, version="installed",
                  dynamic_symbols=None):
    """Every function the root declares as an import, and does not mark unavailable,
    must be a function the installed TensorFlow exports; one it marks unavailable
    must not be in `dynamic_symbols` ({name: [lib]}, every symbol the libraries
    define, whatever its prefix), or the root refuses a function that works."""
    report = report or Report()
    for name in sorted(roles):
        if roles[name] != "import":
            continue
        if name in unavailable:
            report.count("imports marked unavailable")
            if dynamic_symbols and name in dynamic_symbols:
                report.mismatch(f"import {name} (marked unavailable by our root)",
                                "not exported",
                                f"exported by TensorFlow {version} from "
                                f"{', '.join(dynamic_symbols[name])}")
            continue
        report.count("imports")
        export = installed_exports.get(name)
        if export is None:
            report.mismatch(f"import {name} (declared by our root)", "exported",
                            f"not exported by TensorFlow {version}")
        elif export.get("kind") != "function":
            report.mismatch(f"import {name} (declared by our root) export kind", "function",
                            export.get("kind"))
    return report


UNAVAILABLE_DECL = re.compile(r'TFPLUGIN_UNAVAILABLE\("(?:[^"\\]|\\.)*"\)[^;(]*?\b(\w+)\s*\(')


def unavailable_in_root(root):
    """Names of the functions the generated include root marks TFPLUGIN_UNAVAILABLE."""
    names = set()
    for dirpath, _, files in os.walk(root):
        for n in files:
            if n.endswith(".h"):
                with open(os.path.join(dirpath, n), errors="replace") as f:
                    names.update(UNAVAILABLE_DECL.findall(f.read()))
    return names


def symbols_defined_by_libs(tf_dir, names):
    """{name: [lib]} for each of `names` that a library a plugin binds to defines.

    Read with nm directly rather than from the facts, whose exports only list
    the prefixes tools/abi_facts.py knows about."""
    from abi_facts import EXPORTING_LIBS
    found = {}
    top = os.path.dirname(tf_dir)
    for dirpath, _, files in os.walk(tf_dir):
        for n in sorted(files):
            rel = os.path.relpath(os.path.join(dirpath, n), top)
            if not EXPORTING_LIBS.match(rel):
                continue
            r = subprocess.run(["nm", "-D", "--defined-only", os.path.join(dirpath, n)],
                               capture_output=True, text=True, check=True)
            for line in r.stdout.splitlines():
                parts = line.split()
                if len(parts) == 3 and parts[2].split("@")[0] in names:
                    found.setdefault(parts[2].split("@")[0], []).append(rel[len("tensorflow/"):])
    return found


# ------------------------------------------------------------------ main ---

def measure_installed(python, tf_dir):
    out = tempfile.NamedTemporaryFile(prefix="tfplugin-installed-", suffix=".json", delete=False)
    out.close()
    log = out.name + ".log"
    try:
        status = run_bounded([python, os.path.join(REPO, "tools", "abi_facts.py"),
                              "--installed", tf_dir, "--out", out.name], MEASURE_TIMEOUT, log)
        if status != 0:
            with open(log, errors="replace") as f:
                tail = f.read().strip().splitlines()[-15:]
            for line in tail:
                say(f"  | {line}")
            raise Error("tools/abi_facts.py --installed " +
                        ("timed out" if status is None else f"exited {status}"))
        with open(out.name) as f:
            return json.load(f)
    finally:
        for path in (out.name, log):
            if os.path.exists(path):
                os.unlink(path)


def run(release_arg):
    sys.path.insert(0, os.path.join(REPO, "tools"))
    from abi_model import Model

    model = Model()
    release = release_arg or os.environ.get("TFPLUGIN_TF_RELEASE") or model.newest
    if release not in model.facts:
        raise Error(f"no committed facts for TensorFlow {release!r} "
                    f"(abi/facts has {', '.join(model.releases)})")
    committed = model.facts[release]
    facts_path = os.path.join("abi", "facts", f"tf-{release}.json")
    root = os.path.join(REPO, "include", "tfplugin", f"tf{release}")
    if not os.path.isdir(root):
        raise Error(f"include root {os.path.relpath(root, REPO)} is missing")

    machine = platform.machine().lower()
    if not sys.platform.startswith("linux") or machine not in ("x86_64", "amd64"):
        raise Skip(f"committed facts describe {committed.get('target', 'x86_64-linux-gnu')} "
                   f"wheels; this machine is {sys.platform}/{machine}")
    for tool, why in (("nm", "to list exported symbols"), ("clang", "for its resource dir")):
        if not shutil.which(tool):
            raise Skip(f"`{tool}` not found (tools/abi_facts.py needs it {why})")

    say(f"release: TensorFlow {release} (committed {facts_path}: {committed.get('version')}, "
        f"{committed.get('wheel', {}).get('file', '?')})")
    venv, stamp, reused, seconds = venv_for(release)
    say(f"venv: {venv} ({'reused' if reused else 'created'} in "
        f"{seconds:.0f}s; Python {stamp['python']})")
    say(f"installed: {stamp['distribution']} {stamp['version']}")

    tf_dir = os.path.join(stamp["site"], "tensorflow")
    started = time.monotonic()
    installed = measure_installed(venv_python(venv), tf_dir)
    say(f"measured {tf_dir} in {time.monotonic() - started:.0f}s: "
        f"{len(installed.get('records', {}))} structs, "
        f"{len(installed.get('functions', {}))} functions, "
        f"{len(installed.get('exports', {}))} exports")
    if installed.get("version") and installed["version"] != stamp["version"]:
        raise Error(f"measured version {installed['version']} is not the installed "
                    f"{stamp['version']}")
    if stamp["version"] != committed.get("version"):
        say(f"note: installed {stamp['version']} but {facts_path} was measured from "
            f"{committed.get('version')}; any mismatch below may be that patch release")

    report = compare_facts(committed, installed)
    roles = {name: model.function_role(release, name) for name in model.plugin_functions(release)}
    unavailable = unavailable_in_root(root)
    check_imports(roles, unavailable, installed.get("exports", {}), report,
                  version=stamp["version"],
                  dynamic_symbols=symbols_defined_by_libs(tf_dir, unavailable))

    for line in report.mismatches:
        say(line)
    c = report.counts
    say(f"compared: {c.get('structs', 0)} structs ({c.get('fields', 0)} fields), "
        f"{c.get('enums', 0)} enums ({c.get('enum constants', 0)} constants), "
        f"{c.get('functions', 0)} functions, {c.get('macros/variables', 0)} macros/variables, "
        f"{c.get('exports', 0)} exports, {c.get('tf required fields', 0)} TF-required fields, "
        f"{c.get('tf struct_size checks', 0)} struct_size checks")
    say(f"imports: include/tfplugin/tf{release} declares {c.get('imports', 0)} imports (each "
        f"checked to be exported) and marks {c.get('imports marked unavailable', 0)} "
        f"unavailable (each checked not to be)")
    what = f"{stamp['distribution']} {stamp['version']} vs {facts_path}"
    if report.mismatches:
        say(f"result: FAIL: {len(report.mismatches)} mismatches ({what})")
        return 1
    say(f"result: OK: installed TensorFlow matches the committed facts ({what})")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--release", help="minor release, e.g. 2.16 (default: $TFPLUGIN_TF_RELEASE, "
                                      "else the newest in abi/facts)")
    args = ap.parse_args(argv)
    return exit_status(run, args.release)


if __name__ == "__main__":
    sys.exit(main())
