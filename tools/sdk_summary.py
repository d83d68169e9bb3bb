#!/usr/bin/env python3
"""What this SDK build provides: the main job of `./dev run`.

Reads the ABI description (abi/tfplugin-abi.json) and the build directory
($TFPLUGIN_BUILD_DIR, default build/) and prints the supported TensorFlow
releases with their ABI revisions, how to compile against one, and what was
built.
"""

import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    build = os.environ.get("TFPLUGIN_BUILD_DIR", "build")
    with open(os.path.join(REPO, "abi", "tfplugin-abi.json")) as f:
        desc = json.load(f)
    fams = list(desc["families"])
    print("tfplugin: TensorFlow PluggableDevice plugin SDK\n")
    print("Supported TensorFlow releases (facts measured from the PyPI wheels):")
    head = f"  {'release':8} {'wheel':12} " + " ".join(f"{f:16}" for f in fams)
    print(head)
    for r in desc["releases"]:
        revs = " ".join(f"{r['revisions'][f] or '-':16}" for f in fams)
        print(f"  {r['release']:8} {r['version']:12} {revs}")
    if desc["unavailable_releases"]:
        for rel, why in desc["unavailable_releases"].items():
            print(f"  {rel}: not measured: {why}")
    newest = desc["releases"][-1]["release"]
    gone = {n: f["declared_but_not_exported"] for n, f in desc["functions"].items()
            if f.get("declared_but_not_exported")}
    print(f"\n{len(desc['structs'])} structs, {len(desc['functions'])} functions described; "
          f"{len(gone)} functions are declared by some release that does not export them "
          f"(our headers reject their use at compile time).")
    print("\nCompile a plugin against one release (unmodified #include \"tensorflow/c/...\"):")
    print(f"  cc $(pkg-config --cflags tfplugin-tf{newest}) -fPIC -shared plugin.c -o plugin.so")
    print(f"  or in-tree: -I include -I include/tfplugin/tf{newest}")
    print("Docs: docs/abi-versions.md (what changed between releases, what breaks)")

    try:
        out = subprocess.run(["meson", "introspect", "--targets", build], capture_output=True,
                             text=True, check=True).stdout
        targets = json.loads(out)
        # What the SDK ships: targets defined outside tests/ (fixtures and
        # test programs are counted, not listed).
        built = [t for t in targets if t["type"] in ("executable", "shared library", "shared module")
                 and f"{os.sep}tests{os.sep}" not in t.get("defined_in", "")]
        tests = len(targets) - len(built)
        print(f"\nBuilt in {build}/: {len(built)} tools/libraries, {tests} test programs.")
        for t in sorted(built, key=lambda t: t["name"]):
            print(f"  {t['type']:15} {t['name']}")
    except (OSError, subprocess.CalledProcessError, ValueError) as e:
        print(f"\n(no build information from {build}/: {e})")
    return run_plugin(build)


# Plugins to demonstrate, first found wins, with the release to target: the
# example once it exists, else the test plugin the host tests use (it
# deliberately imports three functions TF 2.21 dropped, so it targets 2.18).
DEMO_PLUGINS = [("examples/vacc/libvacc.so", None), ("tests/host/libtfp_test_plugin.so", "2.18")]
DEMO_OPS = [
    ["AddV2", "--input", "float:2x3=iota", "--input", "float:scalar=10"],
    ["MatMul", "--input", "float:2x3=iota", "--input", "float:3x2=ones", "--repeat", "10"],
]


def run_plugin(build):
    """Validate a plugin, then load it without TensorFlow and run ops on its
    device (validate_plugin, tfplugin-run)."""
    run = os.path.join(build, "src", "shims", "tfplugin-run")
    plugin, release = next(((os.path.join(build, p), r) for p, r in DEMO_PLUGINS
                            if os.path.exists(os.path.join(build, p))), (None, None))
    tf = ["--tf", release] if release else []
    if not os.path.exists(run) or plugin is None:
        print("\n(tfplugin-run or a plugin to run is not built; nothing to run)")
        return 1
    validate = os.path.join(build, "src", "validate", "validate_plugin")
    if os.path.exists(validate):
        print(f"\n$ validate_plugin {' '.join(tf + [plugin])}", flush=True)
        rc = subprocess.run([validate] + tf + [plugin]).returncode
        if rc != 0:
            print(f"validate_plugin found errors (exit {rc})")
            return rc
    print(f"\n$ tfplugin-run {' '.join(['list', plugin] + tf)}", flush=True)
    listing = subprocess.run([run, "list", plugin] + tf, stdout=subprocess.PIPE, text=True)
    print(listing.stdout, end="", flush=True)
    if listing.returncode != 0:
        print(f"tfplugin-run failed (exit {listing.returncode})")
        return listing.returncode
    for op in DEMO_OPS:
        # Only ops the plugin has a kernel for (the listing names each kernel's op).
        if f" {op[0]} " not in listing.stdout and f" {op[0]}\n" not in listing.stdout:
            print(f"\n(no {op[0]} kernel in {os.path.basename(plugin)}: not run)")
            continue
        args = ["op", plugin] + op + tf
        print(f"\n$ tfplugin-run {' '.join(args)}", flush=True)
        rc = subprocess.run([run] + args).returncode
        if rc != 0:
            print(f"tfplugin-run failed (exit {rc})")
            return rc
    return 0

if __name__ == "__main__":
    sys.exit(main())
