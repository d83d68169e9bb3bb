#!/usr/bin/env python3
"""libtfplugin_shims exports every import function of every release, and
nothing but those and tfp_* (the shims' control API and the host API).

  test_exports.py NM LIBTFPLUGIN_SHIMS_SO
"""
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tools"))
from abi_model import Model  # noqa: E402
import gen_shims  # noqa: E402


def main():
    nm, lib = sys.argv[1], sys.argv[2]
    out = subprocess.run([nm, "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    defined = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            defined[parts[2].split("@")[0]] = parts[1]

    # Expected: the description's import functions, cross-checked against
    # each release's own facts so a function only some release had counts too.
    imports = set(gen_shims.import_functions())
    model = Model()
    per_release = {}
    for rel in model.releases:
        for name in model.plugin_functions(rel):
            if model.function_role(rel, name) == "import":
                per_release.setdefault(name, []).append(rel)
    expected = imports | set(per_release)

    failures = 0
    missing = sorted(n for n in expected if n not in defined)
    if missing:
        failures += 1
        print(f"FAIL: {len(missing)} import functions not defined by {os.path.basename(lib)}:")
        for n in missing:
            print(f"  {n}  (imported by TF {', '.join(per_release.get(n, ['?']))})")
    not_code = sorted(n for n in expected if n in defined and defined[n] not in ("T", "W", "i"))
    if not_code:
        failures += 1
        print("FAIL: exported but not functions: " + ", ".join(not_code))
    extra = sorted(n for n in defined
                   if n not in expected and not n.startswith("tfp_")
                   and defined[n] != "A")  # A: version-node symbols
    if extra:
        failures += 1
        print(f"FAIL: {len(extra)} symbols exported beyond the C API:")
        for n in extra[:50]:
            print(f"  {n} ({defined[n]})")
    if not failures:
        print(f"ok: {len(expected)} import functions defined "
              f"({len(per_release)} from per-release facts, {len(imports)} in the description), "
              f"no other exports")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
