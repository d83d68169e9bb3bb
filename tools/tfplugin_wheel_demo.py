#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The last step of `./dev run`: the example plugin as a wheel, in a real TensorFlow.

  tfplugin_wheel_demo.py BUILD_DIR

Takes the wheel `meson compile -C BUILD_DIR vacc-wheel` wrote to
BUILD_DIR/wheels/, the TensorFlow venv of the release it was built for (the
`tensorflow` suite's, tests/tensorflow/tf_venv.py: reused, or installed with
pip on first use), pip installs the wheel into a temporary site-packages on
PYTHONPATH (the cached venv stays clean), runs tfplugin-doctor on that
environment and then a tiny model on /VACC:0 (tfplugin_wheel_demo_model.py),
printing placement and timing.

When TensorFlow cannot be installed here it says why and exits 0: the demo is
optional, the rest of the main job is not. Exit 1 when a step that should work
fails (no wheel, pip or the model failing).
"""

import glob
import os
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "tensorflow"))
import tfplugin_wheel_info as info_mod  # noqa: E402
import tf_venv  # noqa: E402


def newest_wheel(build):
    wheels = glob.glob(os.path.join(build, "wheels", "vacc-*.whl"))
    return max(wheels, key=os.path.getmtime) if wheels else None


def built_for(wheel):
    with zipfile.ZipFile(wheel) as z:
        name = [n for n in z.namelist() if n.endswith(".dist-info/" + info_mod.FILE_NAME)]
        if len(name) != 1:
            raise tf_venv.Error(f"{wheel}: no .dist-info/{info_mod.FILE_NAME}")
        return info_mod.parse(z.read(name[0]).decode(), f"{wheel}:{name[0]}")["built_for"]


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    wheel = newest_wheel(build)
    if wheel is None:
        print(f"no vacc wheel in {build}/wheels (meson compile -C {build} vacc-wheel)")
        return 1
    release = built_for(wheel)
    print(f"wheel: {wheel} (built for TensorFlow {release})", flush=True)
    try:
        venv, stamp, reused, seconds = tf_venv.venv_for(release)
    except tf_venv.Skip as e:
        print(f"skipped running vacc in TensorFlow: {' '.join(str(e).split())}")
        return 0
    python = tf_venv.venv_python(venv)
    print(f"TensorFlow: {stamp['distribution']} {stamp['version']} in {venv} "
          f"({'reused' if reused else f'installed in {seconds:.0f}s'})", flush=True)
    with tempfile.TemporaryDirectory(prefix="tfplugin-demo-") as tmp:
        overlay = os.path.join(tmp, "site-packages")
        print(f"$ pip install --no-deps --target {overlay} {os.path.basename(wheel)}", flush=True)
        r = tf_venv.install_overlay(python, wheel, overlay)
        if r.returncode != 0:
            return 1
        env = dict(os.environ, PYTHONPATH=overlay, TF_CPP_MIN_LOG_LEVEL="2")
        print(f"\n$ tfplugin-doctor --python {python}   (PYTHONPATH={overlay})", flush=True)
        subprocess.run([sys.executable, os.path.join(HERE, "tfplugin_doctor.py"),
                        "--python", python], env=env)
        print("\n$ python tools/tfplugin_wheel_demo_model.py   (in that environment)", flush=True)
        return subprocess.run([python, os.path.join(HERE, "tfplugin_wheel_demo_model.py")],
                              env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
