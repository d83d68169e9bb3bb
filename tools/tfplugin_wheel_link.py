# SPDX-License-Identifier: Apache-2.0
"""Link a plugin to the TensorFlow library that defines its imports.

A plugin built with the SDK leaves its TF_* imports undefined and no
DT_NEEDED on TensorFlow, so it loads only where TensorFlow's Python package
has already put its libraries in the global scope (RTLD_GLOBAL): 2.21's
does, 2.18's does not, and there `import tensorflow` fails with
"undefined symbol: TF_...". The wheel therefore gives the plugin a
DT_NEEDED on the one library that exports every import in every release of
the wheel's range (per the ABI description's "exported_by", measured from
the wheels) and a RUNPATH to where pip puts it: site-packages/tensorflow,
next to site-packages/tensorflow-plugins. TensorFlow has loaded that library
already when it loads plugins, so the loader reuses it (same soname); the
plugin then resolves its imports through its own dependency.
"""

import json
import os
import subprocess

RUNPATH = "$ORIGIN/../tensorflow"
HERE = os.path.dirname(os.path.abspath(__file__))
# Installed, the description sits next to the tools; in the tree, in abi/.
MODEL_PATHS = [os.path.join(HERE, "tfplugin-abi.json"),
               os.path.join(HERE, os.pardir, "abi", "tfplugin-abi.json")]


class LinkError(Exception):
    """The plugin's imports cannot be served by one library; the message says why."""


def load_model():
    for path in MODEL_PATHS:
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
    raise LinkError(f"no ABI description (looked for {', '.join(MODEL_PATHS)})")


def undefined_symbols(so_path, weak_only=False):
    """Undefined dynamic symbols of a shared object (nm from binutils); with
    weak_only, just the weak ones (NULL where nothing defines them)."""
    r = subprocess.run(["nm", "-D", "--undefined-only", so_path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise LinkError(f"{so_path}: nm -D failed: {r.stderr.strip()}")
    rows = [line.split() for line in r.stdout.splitlines() if len(line.split()) >= 2]
    return sorted({row[-1].split("@")[0] for row in rows
                   if not weak_only or row[-2] in ("w", "v")})


def _releases_in(ranges, release_key):
    """The (major, minor) keys a "2.5-2.11, 2.15" range string covers, as intervals."""
    spans = []
    for part in ranges.split(","):
        lo, _, hi = part.strip().partition("-")
        spans.append((release_key(lo), release_key(hi or lo)))
    return spans


def library_for(imports, releases, model, release_key):
    """(library, TF imports, uncovered) for a plugin whose undefined symbols are
    `imports`, packaged for `releases`: the library of TensorFlow's that exists
    in every one of them (it exports some import in each) and exports the most
    (import, release) pairs, libtensorflow_framework.so.2 on a tie; uncovered
    is [(import, [releases])] it does not export, which still resolve only
    from TensorFlow's global scope. (None, [], []) without TF imports.
    Raises LinkError when no library exists in every release."""
    functions = model["functions"]
    tf_imports = [s for s in imports if functions.get(s, {}).get("role") == "import"]
    if not tf_imports:
        return None, [], []
    keys = {r: release_key(r) for r in releases}
    exports = {}  # library -> {import: [releases it exports it in]}
    for symbol in tf_imports:
        for lib, ranges in functions[symbol].get("exported_by", {}).items():
            if "/" in lib:  # a Python extension module (python/...) is no library to link
                continue
            spans = _releases_in(ranges, release_key)
            there = [r for r in releases if any(lo <= keys[r] <= hi for lo, hi in spans)]
            if there:
                exports.setdefault(lib, {})[symbol] = there
    everywhere = [lib for lib, by in exports.items()
                  if all(any(r in rs for rs in by.values()) for r in releases)]
    if not everywhere:
        raise LinkError(f"no TensorFlow library exports the plugin's imports in every release "
                        f"{releases[0]}..{releases[-1]} (imports: {', '.join(tf_imports[:5])}...)")
    preferred = "libtensorflow_framework.so.2"
    best = max(everywhere, key=lambda lib: (sum(len(rs) for rs in exports[lib].values()),
                                            lib == preferred, lib))
    uncovered = []
    for symbol in tf_imports:
        missing = [r for r in releases if r not in exports[best].get(symbol, [])]
        if missing:
            uncovered.append((symbol, missing))
    return best, tf_imports, uncovered


def patch(so_path, library, patchelf):
    """Add DT_NEEDED `library` and RUNPATH to `so_path` in place (patchelf)."""
    for args in (["--add-needed", library], ["--add-rpath", RUNPATH]):
        r = subprocess.run([patchelf] + args + [so_path], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            raise LinkError(f"patchelf {' '.join(args)} {so_path} exited {r.returncode}: "
                            f"{r.stdout.strip()}")
